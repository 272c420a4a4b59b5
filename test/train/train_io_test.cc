// Training I/O: the data loader (text, token shards, spec §5 batch order),
// the safetensors reader/writer and its corrupt-file errors, the atomic write,
// and executor checkpoints on a small hand-built plan.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "hymo/rt/api.h"
#include "hymo/rt/checkpoint.h"
#include "hymo/rt/data.h"
#include "hymo/rt/safetensors.h"

namespace {

using namespace hymo::rt;

std::string tmp_dir() {
  static std::string dir = [] {
    char tmpl[] = "/tmp/hymo_train_io_XXXXXX";
    char* d = mkdtemp(tmpl);
    return std::string(d ? d : "/tmp");
  }();
  return dir;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}
std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

void put_i32(std::string* s, int32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(char((uint32_t(v) >> (8 * i)) & 0xFF));
}
std::string shard(const std::vector<uint16_t>& tokens, int32_t version = 1, int64_t n_override = -1) {
  std::string s;
  put_i32(&s, kShardMagic);
  put_i32(&s, version);
  put_i32(&s, int32_t(n_override >= 0 ? n_override : int64_t(tokens.size())));
  for (int i = 3; i < 256; ++i) put_i32(&s, 0);
  for (uint16_t t : tokens) {
    s.push_back(char(t & 0xFF));
    s.push_back(char(t >> 8));
  }
  return s;
}

// ------------------------------------------------------------------ data

TEST(Data, TextIsBytes) {
  TokenData d;
  ASSERT_TRUE(TokenData::from_bytes("t", std::string("ab\xff", 3), &d).ok());
  EXPECT_EQ(d.format(), TokenData::Format::kText);
  ASSERT_EQ(d.size(), 3);
  EXPECT_EQ(d.token(0), 'a');
  EXPECT_EQ(d.token(2), 255);
}

TEST(Data, ShardParses) {
  TokenData d;
  ASSERT_TRUE(TokenData::from_bytes("s", shard({1, 300, 65535, 7}), &d).ok());
  EXPECT_EQ(d.format(), TokenData::Format::kShard);
  ASSERT_EQ(d.size(), 4);
  EXPECT_EQ(d.token(1), 300);
  EXPECT_EQ(d.token(2), 65535);
  EXPECT_EQ(d.max_token(), 65535);
}

TEST(Data, ShardErrors) {
  TokenData d;
  Status s = TokenData::from_bytes("s", shard({1, 2, 3}, /*version=*/2), &d);
  EXPECT_NE(s.message().find("token shard version 2, expected 1"), std::string::npos) << s.message();
  s = TokenData::from_bytes("s", shard({1, 2, 3}, 1, /*n=*/5), &d);
  EXPECT_NE(s.message().find("header says 5 tokens"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("truncated or corrupt"), std::string::npos) << s.message();
  std::string cut = shard({1, 2, 3});
  cut.pop_back();
  s = TokenData::from_bytes("s", cut, &d);
  EXPECT_NE(s.message().find("header says 3 tokens"), std::string::npos) << s.message();
  s = TokenData::from_bytes("s", shard({}), &d);
  EXPECT_NE(s.message().find("holds no tokens"), std::string::npos) << s.message();
  s = TokenData::from_bytes("s", shard({1, 2}).substr(0, 100), &d);
  EXPECT_NE(s.message().find("shorter than the 1024-byte shard header"), std::string::npos) << s.message();
  s = TokenData::from_bytes("s", shard({1}, 1, -1).replace(8, 4, std::string("\xff\xff\xff\xff", 4)), &d);
  EXPECT_NE(s.message().find("negative"), std::string::npos) << s.message();
}

TEST(Data, FileErrors) {
  TokenData d;
  Status s = TokenData::load(tmp_dir() + "/no_such_file.txt", &d);
  EXPECT_NE(s.message().find("data file " + tmp_dir() + "/no_such_file.txt: No such file"), std::string::npos)
      << s.message();
  write_file(tmp_dir() + "/empty.txt", "");
  s = TokenData::load(tmp_dir() + "/empty.txt", &d);
  EXPECT_NE(s.message().find("is empty"), std::string::npos) << s.message();
  s = TokenData::load(tmp_dir(), &d);
  EXPECT_NE(s.message().find("is a directory"), std::string::npos) << s.message();
}

TEST(Data, CheckRowsAndVocab) {
  TokenData d;
  ASSERT_TRUE(TokenData::from_bytes("short", "abc", &d).ok());
  Status s = d.check(4, 256);
  EXPECT_NE(s.message().find("holds 3 tokens, fewer than one row of seq_len 4"), std::string::npos) << s.message();
  EXPECT_TRUE(d.check(3, 256).ok());
  ASSERT_TRUE(TokenData::from_bytes("s", shard({5, 9, 300, 301, 2}), &d).ok());
  s = d.check(2, 256);
  EXPECT_NE(s.message().find("token id 300 at position 2 is >= the model's vocab_size 256"), std::string::npos)
      << s.message();
  EXPECT_TRUE(d.check(2, 302).ok());
}

TEST(Data, BatchOrderHandExample) {
  // "abcdefghij", T = 3: rows "abc" "def" "ghi" (R = 3, the tail "j" is
  // dropped). B = 2, W = 1: micro-step j takes rows (2j + i) mod 3.
  TokenData d;
  ASSERT_TRUE(TokenData::from_bytes("t", "abcdefghij", &d).ok());
  Batcher b(&d, 2, 3);
  EXPECT_EQ(b.rows(), 3);
  EXPECT_EQ(b.row_indices(0), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(b.row_indices(1), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(b.row_indices(2), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(b.row_indices(3), (std::vector<int64_t>{0, 1}));
  std::vector<int32_t> out(6);
  b.fill(1, out.data());
  EXPECT_EQ(std::string(out.begin(), out.end()), "ghiabc");
  // W = 2, rank 1: rows ((j*2 + 1)*2 + i) mod 3.
  Batcher r1(&d, 2, 3, 2, 1);
  EXPECT_EQ(r1.row_indices(0), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(r1.row_indices(1), (std::vector<int64_t>{0, 1}));
  Batcher r0(&d, 2, 3, 2, 0);
  EXPECT_EQ(r0.row_indices(1), (std::vector<int64_t>{1, 2}));
  // Large j: no overflow, still the formula mod R.
  int64_t j = int64_t(1) << 61;
  EXPECT_EQ(b.row_indices(j)[0], int64_t((static_cast<unsigned __int128>(j) * 2) % 3));
}

// ----------------------------------------------------------- safetensors

std::string st_path(const std::string& name) { return tmp_dir() + "/" + name; }

TEST(Safetensors, RoundTrip) {
  std::vector<float> a = {1.5f, -2.25f, 3.0f, 1e-20f, -0.0f, 7.0f};
  std::vector<double> b = {0.1, -1e300};
  std::vector<int32_t> c = {-7, 2147483647};
  float scalar = 42.0f;
  std::vector<StWriteTensor> ts = {
      {"a.weight", StDType::kF32, {2, 3}, a.data()},
      {"b", StDType::kF64, {2}, b.data()},
      {"c", StDType::kI32, {1, 2}, c.data()},
      {"train.step", StDType::kF32, {}, &scalar},
  };
  std::string path = st_path("rt.safetensors");
  ASSERT_TRUE(write_safetensors(path, ts, {{"config", "{\"x\": 1}"}, {"step", "12"}}).ok());
  std::string raw = read_file(path);
  uint64_t hlen = 0;
  std::memcpy(&hlen, raw.data(), 8);
  EXPECT_EQ((8 + hlen) % 8, 0u) << "data must start 8-byte aligned";

  std::unique_ptr<SafetensorsFile> f;
  ASSERT_TRUE(SafetensorsFile::open(path, &f).ok());
  EXPECT_EQ(f->metadata().at("config"), "{\"x\": 1}");
  EXPECT_EQ(f->metadata().at("step"), "12");
  ASSERT_EQ(f->tensors().size(), 4u);
  const StTensorInfo* ta = f->find("a.weight");
  ASSERT_TRUE(ta);
  EXPECT_EQ(ta->shape, (std::vector<int64_t>{2, 3}));
  std::vector<float> a2(6);
  ASSERT_TRUE(f->read_into(*ta, DType::kF32, a2.data()).ok());
  EXPECT_EQ(std::memcmp(a.data(), a2.data(), 24), 0);
  std::vector<double> a64(6);
  ASSERT_TRUE(f->read_into(*ta, DType::kF64, a64.data()).ok());
  EXPECT_EQ(a64[1], -2.25);
  std::vector<float> b32(2);
  ASSERT_TRUE(f->read_into(*f->find("b"), DType::kF32, b32.data()).ok());
  EXPECT_EQ(b32[0], 0.1f);
  EXPECT_TRUE(std::isinf(b32[1]));
  std::vector<uint16_t> abf(6);
  ASSERT_TRUE(f->read_into(*ta, DType::kBF16, abf.data()).ok());
  EXPECT_EQ(abf[0], 0x3FC0);  // 1.5
  std::vector<int32_t> c2(2);
  ASSERT_TRUE(f->read_into(*f->find("c"), DType::kI32, c2.data()).ok());
  EXPECT_EQ(c2, c);
  Status s = f->read_into(*f->find("c"), DType::kF32, b32.data());
  EXPECT_NE(s.message().find("tensor c: is I32, expected a float dtype"), std::string::npos) << s.message();
  const StTensorInfo* st = f->find("train.step");
  ASSERT_TRUE(st);
  EXPECT_TRUE(st->shape.empty());
  float sc = 0;
  ASSERT_TRUE(f->read_into(*st, DType::kF32, &sc).ok());
  EXPECT_EQ(sc, 42.0f);
}

TEST(Safetensors, WriterRejectsBadTensors) {
  float x = 1;
  std::string out;
  EXPECT_FALSE(encode_safetensors({{"", StDType::kF32, {}, &x}}, {}, &out).ok());
  EXPECT_FALSE(encode_safetensors({{"__metadata__", StDType::kF32, {}, &x}}, {}, &out).ok());
  Status s = encode_safetensors({{"a", StDType::kF32, {}, &x}, {"a", StDType::kF32, {}, &x}}, {}, &out);
  EXPECT_NE(s.message().find("tensor a appears twice"), std::string::npos) << s.message();
}

// Builds a valid file's bytes with a custom header (for corruption tests).
std::string with_header(const std::string& header, const std::string& data) {
  std::string s;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) s.push_back(char((n >> (8 * i)) & 0xFF));
  return s + header + data;
}

Status open_bytes(const std::string& name, const std::string& bytes) {
  std::string path = st_path(name);
  write_file(path, bytes);
  std::unique_ptr<SafetensorsFile> f;
  return SafetensorsFile::open(path, &f);
}

TEST(Safetensors, CorruptFilesNameTheProblem) {
  const std::string data8(8, '\0');
  struct Case {
    const char* name;
    std::string bytes;
    const char* expect;
  } cases[] = {
      {"tiny", "abc", "truncated: 3 bytes, shorter than the 8-byte header length"},
      {"hlen", with_header("{}", "").substr(0, 8) + "{", "truncated: the header says 2 bytes of JSON"},
      {"huge", std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}", "implausible"},
      {"json", with_header("{\"a\": ", ""), "not valid JSON"},
      {"array", with_header("[1, 2]", ""), "not a JSON object"},
      {"dtype", with_header(R"({"a": {"dtype": "Q8", "shape": [2], "data_offsets": [0, 8]}})", data8),
       "tensor a: unknown dtype 'Q8'"},
      {"shape", with_header(R"({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", data8),
       "tensor a: shape holds -2"},
      {"span", with_header(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", data8),
       "tensor a: data_offsets span 8 bytes, its F32 shape needs 12"},
      {"offsets", with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8]}})", data8),
       "tensor a: data_offsets missing"},
      {"extra", with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "x": 1}})", data8),
       "tensor a: unknown field 'x'"},
      {"gap", with_header(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", data8),
       "tensor a: data_offsets begin at 4, expected 0"},
      {"overlap",
       with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                       "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                   data8),
       "data_offsets begin at"},
      {"truncated", with_header(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", data8),
       "truncated: the header describes 16 bytes of tensor data, the file holds 8"},
      {"trailing", with_header(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", data8),
       "4 bytes after the last tensor"},
      {"meta", with_header(R"({"__metadata__": {"step": 3}})", ""), "__metadata__.step is not a string"},
  };
  for (const Case& c : cases) {
    Status s = open_bytes(std::string("bad_") + c.name + ".safetensors", c.bytes);
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << c.name << ": " << s.message();
    EXPECT_NE(s.message().find("checkpoint " + st_path(std::string("bad_") + c.name)), std::string::npos)
        << "the message names the file: " << s.message();
  }
  std::unique_ptr<SafetensorsFile> f;
  Status s = SafetensorsFile::open(st_path("missing.safetensors"), &f);
  EXPECT_NE(s.message().find("cannot open"), std::string::npos) << s.message();
}

TEST(Safetensors, TruncatedAtEveryLengthNeverCrashes) {
  std::vector<float> a(16, 1.0f);
  std::string bytes;
  ASSERT_TRUE(encode_safetensors({{"a", StDType::kF32, {16}, a.data()}}, {{"k", "v"}}, &bytes).ok());
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(open_bytes("cut.safetensors", bytes.substr(0, n)).ok()) << n;
  EXPECT_TRUE(open_bytes("cut.safetensors", bytes).ok());
  // Random byte flips in the header: an error or a valid file, never a crash.
  std::mt19937 rng(1);
  for (int k = 0; k < 300; ++k) {
    std::string b = bytes;
    size_t pos = rng() % 80;
    b[pos] = char(rng());
    (void)open_bytes("flip.safetensors", b);
  }
}

// ---------------------------------------------------------- atomic write

TEST(AtomicWrite, FailedWriteKeepsTheOldFile) {
  std::string dir = tmp_dir() + "/atomic";
  mkdir(dir.c_str(), 0755);
  std::string path = dir + "/step_1.safetensors";
  ASSERT_TRUE(atomic_write_file(path, [](FileSink& s) { return s.write("old contents", 12); }).ok());
  EXPECT_EQ(read_file(path), "old contents");
  Status s = atomic_write_file(path, [](FileSink& sink) {
    HYMO_RETURN_IF_ERROR(sink.write("half of the new", 15));
    return error_status("disk full (simulated)");
  });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("disk full (simulated)"), std::string::npos) << s.message();
  EXPECT_EQ(read_file(path), "old contents") << "the old file survives a failed write";
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"step_1.safetensors"}) << "no temporary file is left";
  ASSERT_TRUE(atomic_write_file(path, [](FileSink& sink) { return sink.write("new", 3); }).ok());
  EXPECT_EQ(read_file(path), "new");
  EXPECT_EQ(list_dir(dir).size(), 1u);
  s = atomic_write_file(dir + "/no/such/dir/x", [](FileSink& sink) { return sink.write("x", 1); });
  EXPECT_NE(s.message().find("cannot create"), std::string::npos) << s.message();
}

// ------------------------------------------------------------ checkpoints

// A plan with two params, a named buffer, optimizer state and a step
// counter; `run` adds 1 to the counter.
Plan small_plan(int64_t dim = 2, DType dt = DType::kF32) {
  Plan p;
  auto buf = [&](std::string name, DType t, std::vector<int64_t> shape, StorageKind k) {
    BufferDesc b;
    b.id = int64_t(p.buffers.size());
    b.name = std::move(name);
    b.dtype = t;
    b.shape = std::move(shape);
    b.storage = k;
    p.buffers.push_back(b);
    return b.id;
  };
  int64_t w = buf("embed.weight", dt, {3, dim}, StorageKind::kParam);
  p.buffers[size_t(w)].init.kind = BufferInit::Kind::kUniform;
  p.buffers[size_t(w)].init.low = -1;
  p.buffers[size_t(w)].init.high = 1;
  p.buffers[size_t(w)].init.seed = 5;
  int64_t n = buf("norm_f.weight", dt, {dim}, StorageKind::kParam);
  p.buffers[size_t(n)].init.kind = BufferInit::Kind::kFill;
  p.buffers[size_t(n)].init.fill = 1;
  int64_t gb = buf("layers.0.ffn.gate_bias", dt, {4}, StorageKind::kState);
  int64_t m = buf("adamw.m.embed.weight", dt, {3, dim}, StorageKind::kState);
  int64_t step = buf("train.step", dt, {}, StorageKind::kState);
  int64_t one = buf("one", dt, {}, StorageKind::kConstant);
  p.buffers[size_t(one)].data = {1.0};
  p.params = {{"embed.weight", w, Optimizer::kAdamW},
              {"norm_f.weight", n, Optimizer::kAdamW},
              {"layers.0.ffn.gate_bias", gb, Optimizer::kNone}};
  (void)m;
  Function f;
  f.name = "tick";
  Call c;
  c.op = "add";
  c.operands = {step, one};
  c.results = {step};
  f.calls.push_back(c);
  p.functions.push_back(f);
  return p;
}

TEST(Checkpoint, SaveRestoreExact) {
  Plan plan = small_plan();
  ASSERT_TRUE(validate_plan(plan).ok()) << validate_plan(plan).message();
  CpuExecutor a(plan);
  a.set_values("adamw.m.embed.weight", {0.5, 1e-30, -3, 4, 5, 6});
  a.set_values("layers.0.ffn.gate_bias", {0.1, 0.2, 0.3, 0.4});
  a.run("tick");
  a.run("tick");
  std::string path = st_path("exec.safetensors");
  ASSERT_TRUE(save_checkpoint(a, path, CheckpointContent::kAll, false, {{"step", "2"}}).ok());
  std::unique_ptr<SafetensorsFile> f;
  ASSERT_TRUE(SafetensorsFile::open(path, &f).ok());
  EXPECT_EQ(f->metadata().at("format"), kCheckpointFormat);
  EXPECT_EQ(f->tensors().size(), 5u);
  CpuExecutor b(plan);
  ASSERT_TRUE(restore_all_buffers(&b, *f).ok());
  for (const BufferDesc& d : plan.buffers) {
    if (d.storage != StorageKind::kParam && d.storage != StorageKind::kState) continue;
    EXPECT_EQ(std::memcmp(a.data(d.id), b.data(d.id), size_t(d.bytes())), 0) << d.name;
  }
  EXPECT_EQ(b.values("train.step")[0], 2.0);
  // Saving again from the restored executor gives the same bytes.
  std::string path2 = st_path("exec2.safetensors");
  ASSERT_TRUE(save_checkpoint(b, path2, CheckpointContent::kAll, false, {{"step", "2"}}).ok());
  EXPECT_EQ(read_file(path), read_file(path2));
}

TEST(Checkpoint, NeverWritesWhatALoadRefuses) {
  // A non-finite parameter or state value, a negative second moment, a counter that is not a
  // non-negative integer: save_checkpoint refuses, naming the buffer, and the checkpoint already
  // at the path stays as it was; restore_all_buffers refuses such a file likewise.
  Plan plan = small_plan();
  CpuExecutor a(plan);
  std::string path = st_path("guarded.safetensors");
  ASSERT_TRUE(save_checkpoint(a, path, CheckpointContent::kAll, false, {}).ok());
  const std::string before = read_file(path);
  const struct {
    const char* buffer;
    std::vector<double> values;
    const char* message;
  } cases[] = {
      {"embed.weight", {0, 1, NAN, 3, 4, 5}, "parameter embed.weight holds a non-finite value at element 2"},
      {"adamw.m.embed.weight", {0, 0, 0, 0, INFINITY, 0}, "state adamw.m.embed.weight holds a non-finite value at element 4"},
      {"train.step", {-1}, "state train.step holds -1 at element 0 (a counter is a non-negative integer)"},
      {"train.step", {1.5}, "state train.step holds 1.5 at element 0 (a counter is a non-negative integer)"},
  };
  for (const auto& c : cases) {
    CpuExecutor b(plan);
    b.set_values(c.buffer, c.values);
    Status s = save_checkpoint(b, path, CheckpointContent::kAll, false, {});
    EXPECT_NE(s.message().find("checkpoint " + path + " not written: " + c.message), std::string::npos)
        << s.message();
    EXPECT_EQ(read_file(path), before) << c.buffer;
  }
  // The same values in a file (written by another tool): refused on restore.
  std::vector<float> v(6, 0.0f);
  v[1] = -2;
  std::vector<float> one(1, 2.0f), gate(4, 0.0f);
  std::string bad = st_path("negative_moment.safetensors");
  Plan vplan = small_plan();
  // (the small plan has no second moment: rename its adamw.m to adamw.v)
  for (BufferDesc& d : vplan.buffers)
    if (d.name == "adamw.m.embed.weight") d.name = "adamw.v.embed.weight";
  ASSERT_TRUE(write_safetensors(bad,
                                {{"embed.weight", StDType::kF32, {3, 2}, v.data() + 0},
                                 {"norm_f.weight", StDType::kF32, {2}, one.data()},
                                 {"layers.0.ffn.gate_bias", StDType::kF32, {4}, gate.data()},
                                 {"adamw.v.embed.weight", StDType::kF32, {3, 2}, v.data()},
                                 {"train.step", StDType::kF32, {}, one.data()}},
                                {})
                  .ok());
  std::unique_ptr<SafetensorsFile> f;
  ASSERT_TRUE(SafetensorsFile::open(bad, &f).ok());
  CpuExecutor c(vplan);
  Status s = restore_all_buffers(&c, *f);
  EXPECT_NE(s.message().find("state adamw.v.embed.weight holds -2 at element 1 (a second moment is >= 0)"),
            std::string::npos)
      << s.message();
}

TEST(Checkpoint, RestoreErrorsNameTheTensor) {
  Plan plan = small_plan();
  CpuExecutor a(plan);
  std::string path = st_path("ck.safetensors");
  ASSERT_TRUE(save_checkpoint(a, path, CheckpointContent::kAll, false, {}).ok());
  std::unique_ptr<SafetensorsFile> f;
  ASSERT_TRUE(SafetensorsFile::open(path, &f).ok());
  // Another config: dim 3.
  CpuExecutor wide(small_plan(3));
  Status s = restore_all_buffers(&wide, *f);
  EXPECT_NE(s.message().find("tensor embed.weight has shape [3, 2], the plan needs [3, 3]"), std::string::npos)
      << s.message();
  // A params-only file cannot resume.
  std::string init = st_path("init.safetensors");
  ASSERT_TRUE(save_checkpoint(a, init, CheckpointContent::kParamTable, true, {}).ok());
  std::unique_ptr<SafetensorsFile> fi;
  ASSERT_TRUE(SafetensorsFile::open(init, &fi).ok());
  EXPECT_EQ(fi->tensors().size(), 3u);
  s = restore_all_buffers(&a, *fi);
  EXPECT_NE(s.message().find("tensor adamw.m.embed.weight is missing"), std::string::npos) << s.message();
  // A tensor the plan does not know.
  std::vector<float> x(2, 0);
  std::vector<StWriteTensor> ts;
  std::vector<std::vector<float>> keep;
  for (const StTensorInfo& t : f->tensors()) {
    keep.emplace_back(size_t(t.numel()));
    ASSERT_TRUE(f->read_into(t, DType::kF32, keep.back().data()).ok());
    ts.push_back({t.name, StDType::kF32, t.shape, keep.back().data()});
  }
  ts.push_back({"layers.9.norm1.weight", StDType::kF32, {2}, x.data()});
  std::string extra = st_path("extra.safetensors");
  ASSERT_TRUE(write_safetensors(extra, ts, {}).ok());
  std::unique_ptr<SafetensorsFile> fe;
  ASSERT_TRUE(SafetensorsFile::open(extra, &fe).ok());
  s = restore_all_buffers(&a, *fe);
  EXPECT_NE(s.message().find("tensor layers.9.norm1.weight is not a buffer of the plan"), std::string::npos)
      << s.message();
  s = load_param_table(&a, *fe);
  EXPECT_NE(s.message().find("tensor layers.9.norm1.weight is not in the model's parameter table"),
            std::string::npos)
      << s.message();
}

TEST(Checkpoint, InitLoadsParamsConvertsAndIgnoresOptimizerState) {
  Plan plan = small_plan();
  CpuExecutor a(plan);
  a.set_values("embed.weight", {1, 2, 3, 4, 5, 6});
  a.set_values("adamw.m.embed.weight", {9, 9, 9, 9, 9, 9});
  std::string path = st_path("full.safetensors");
  ASSERT_TRUE(save_checkpoint(a, path, CheckpointContent::kAll, false, {}).ok());
  std::unique_ptr<SafetensorsFile> f;
  ASSERT_TRUE(SafetensorsFile::open(path, &f).ok());
  // Into an f64 plan: values convert; optimizer state is not touched.
  CpuExecutor b(small_plan(2, DType::kF64));
  ASSERT_TRUE(load_param_table(&b, *f).ok());
  EXPECT_EQ(b.values("embed.weight"), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(b.values("adamw.m.embed.weight"), std::vector<double>(6, 0.0));
  // A missing parameter is an error; a missing named buffer keeps its init.
  std::vector<float> e(6, 1), g(2, 1);
  std::string only = st_path("only.safetensors");
  ASSERT_TRUE(write_safetensors(only, {{"embed.weight", StDType::kF32, {3, 2}, e.data()}}, {}).ok());
  std::unique_ptr<SafetensorsFile> fo;
  ASSERT_TRUE(SafetensorsFile::open(only, &fo).ok());
  Status s = load_param_table(&b, *fo);
  EXPECT_NE(s.message().find("parameter norm_f.weight is missing"), std::string::npos) << s.message();
  ASSERT_TRUE(write_safetensors(only, {{"embed.weight", StDType::kF32, {3, 2}, e.data()},
                                       {"norm_f.weight", StDType::kF32, {2}, g.data()},
                                       {"optim.something", StDType::kF32, {2}, g.data()}},
                                {})
                  .ok());
  ASSERT_TRUE(SafetensorsFile::open(only, &fo).ok());
  EXPECT_TRUE(load_param_table(&b, *fo).ok());
  // Shape mismatch names the tensor.
  ASSERT_TRUE(write_safetensors(only, {{"embed.weight", StDType::kF32, {2, 3}, e.data()},
                                       {"norm_f.weight", StDType::kF32, {2}, g.data()}},
                                {})
                  .ok());
  ASSERT_TRUE(SafetensorsFile::open(only, &fo).ok());
  s = load_param_table(&b, *fo);
  EXPECT_NE(s.message().find("tensor embed.weight has shape [2, 3], the plan needs [3, 2]"), std::string::npos)
      << s.message();
}

}  // namespace
