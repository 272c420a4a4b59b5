// End to end: the hand-written plan test/runtime/plans/tiny_forward.json (a
// 2-layer forward: embedding, (rms_norm, linear, silu, linear, residual) x2,
// final rms_norm, head, cross_entropy) runs on the CPU executor and matches
// a loss computed here independently; then the plan is edited by hand (an
// attribute, an op, an init seed, the dtype) and the result follows the edit:
// the runtime holds no model, only what the plan says.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hymo/rt/api.h"

namespace {

using json = nlohmann::ordered_json;
using hymo::rt::DType;

const std::vector<double> kTokens = {1, 5, 9, 3, 15, 0};
const std::vector<double> kTargets = {5, 9, 3, 15, 0, 7};

json load_plan_json() {
  std::ifstream in(std::string(HYMO_TEST_PLANS) + "/tiny_forward.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

// docs/plan-format.md, "init": element i is low + (high-low) * u_i, u_i the
// top 53 bits of the i-th splitmix64 output from state `seed`, over 2^53.
std::vector<double> splitmix_uniform(uint64_t seed, double lo, double hi, size_t n) {
  std::vector<double> v;
  uint64_t s = seed;
  for (size_t i = 0; i < n; ++i) {
    s += 0x9E3779B97F4A7C15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v.push_back(lo + (hi - lo) * (double(z >> 11) / 9007199254740992.0));
  }
  return v;
}

// The parameters as the plan's init describes them, rounded to `dt`.
std::map<std::string, std::vector<double>> plan_params(const json& plan, DType dt) {
  std::map<std::string, std::vector<double>> p;
  for (const json& b : plan["buffers"]) {
    if (b["storage"] != "param") continue;
    size_t n = 1;
    for (const json& d : b["shape"]) n *= d.get<size_t>();
    const json& u = b["init"]["uniform"];
    std::vector<double> v = splitmix_uniform(b["init"]["seed"].get<uint64_t>(), u[0].get<double>(), u[1].get<double>(), n);
    if (dt == DType::kF32)
      for (double& x : v) x = double(float(x));
    p[b["name"].get<std::string>()] = v;
  }
  return p;
}

struct RefOptions {
  double eps[3] = {1e-6, 1e-6, 1e-6};  // layer 0, layer 1, final norm
  bool sigmoid_act[2] = {false, false};
};

// The forward, written out in double from the model's definition.
double reference_loss(const std::map<std::string, std::vector<double>>& p, const RefOptions& o) {
  const int N = 6, V = 16, D = 8, F = 16;
  auto rms = [&](const std::vector<double>& x, const std::vector<double>& w, double eps) {
    std::vector<double> y(x.size());
    for (int n = 0; n < N; ++n) {
      double ss = 0;
      for (int j = 0; j < D; ++j) ss += x[size_t(n * D + j)] * x[size_t(n * D + j)];
      double inv = 1.0 / std::sqrt(ss / D + eps);
      for (int j = 0; j < D; ++j) y[size_t(n * D + j)] = x[size_t(n * D + j)] * inv * w[size_t(j)];
    }
    return y;
  };
  auto lin = [&](const std::vector<double>& x, const std::vector<double>& w, int in, int out) {
    std::vector<double> y(size_t(N * out), 0.0);
    for (int n = 0; n < N; ++n)
      for (int r = 0; r < out; ++r)
        for (int c = 0; c < in; ++c) y[size_t(n * out + r)] += x[size_t(n * in + c)] * w[size_t(r * in + c)];
    return y;
  };
  std::vector<double> x(size_t(N * D));
  for (int n = 0; n < N; ++n)
    for (int j = 0; j < D; ++j) x[size_t(n * D + j)] = p.at("embed.weight")[size_t(int(kTokens[size_t(n)]) * D + j)];
  for (int l = 0; l < 2; ++l) {
    std::string pre = "layers." + std::to_string(l) + ".";
    std::vector<double> h = lin(rms(x, p.at(pre + "norm1.weight"), o.eps[l]), p.at(pre + "ffn.W1.weight"), D, F);
    for (double& v : h) v = o.sigmoid_act[l] ? 1 / (1 + std::exp(-v)) : v / (1 + std::exp(-v));
    std::vector<double> f = lin(h, p.at(pre + "ffn.W2.weight"), F, D);
    for (size_t i = 0; i < x.size(); ++i) x[i] += f[i];
  }
  std::vector<double> logits = lin(rms(x, p.at("norm_f.weight"), o.eps[2]), p.at("head.weight"), D, V);
  double loss = 0;
  for (int n = 0; n < N; ++n) {
    double m = -INFINITY, s = 0;
    for (int v = 0; v < V; ++v) m = std::max(m, logits[size_t(n * V + v)]);
    for (int v = 0; v < V; ++v) s += std::exp(logits[size_t(n * V + v)] - m);
    loss += m + std::log(s) - logits[size_t(n * V + int(kTargets[size_t(n)]))];
  }
  return loss / N;
}

double run_plan(const json& doc) {
  hymo::rt::CpuExecutor ex(hymo::rt::parse_plan(doc.dump()));
  ex.set_values("tokens", kTokens);
  ex.set_values("targets", kTargets);
  ex.run("forward");
  return ex.values("loss")[0];
}

// The f64 version of the plan: every f32 buffer becomes f64; arena offsets
// and size double (each buffer at most doubles, so nothing overlaps).
json to_f64(json doc) {
  for (json& b : doc["buffers"]) {
    if (b["dtype"] == "f32") b["dtype"] = "f64";
    if (b.contains("offset")) b["offset"] = b["offset"].get<int64_t>() * 2;
  }
  doc["arena_bytes"] = doc["arena_bytes"].get<int64_t>() * 2;
  return doc;
}

TEST(EndToEnd, InitMatchesDocumentedGenerator) {
  json doc = load_plan_json();
  hymo::rt::CpuExecutor ex(hymo::rt::parse_plan(doc.dump()));
  auto p = plan_params(doc, DType::kF32);
  for (const auto& kv : p) {
    std::vector<double> got = ex.values(kv.first);
    ASSERT_EQ(got.size(), kv.second.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], kv.second[i]) << kv.first << "[" << i << "]";
  }
}

// docs/plan-format.md, "init" normal: Box-Muller on the splitmix64 stream.
std::vector<double> splitmix_normal(uint64_t seed, double mean, double stddev, size_t n) {
  std::vector<double> u = splitmix_uniform(seed, 0.0, 1.0, n + (n % 2));  // z >> 11 over 2^53
  std::vector<double> v;
  const double pi = 3.14159265358979323846;
  for (size_t j = 0; j + 1 < u.size(); j += 2) {
    const double u1 = u[j] + 1.0 / 9007199254740992.0;  // ((z >> 11) + 1) 2^-53, exact
    const double r = std::sqrt(-2.0 * std::log(u1)), t = 2 * pi * u[j + 1];
    v.push_back(mean + stddev * (r * std::cos(t)));
    if (v.size() < n) v.push_back(mean + stddev * (r * std::sin(t)));
  }
  return v;
}

TEST(EndToEnd, NormalInitMatchesDocumentedGenerator) {
  json doc = load_plan_json();
  doc["buffers"][4]["init"] = {{"normal", {0.0, 0.5}}, {"seed", 11}};
  doc["buffers"][5]["init"] = {{"normal", {-0.25, 0.02}}, {"seed", 0}};
  // An odd element count in f64 (the last pair's sine is dropped).
  doc["buffers"].push_back({{"id", 25}, {"name", "odd"}, {"dtype", "f64"}, {"shape", {3, 5}}, {"storage", "state"},
                            {"init", {{"normal", {1.5, 2.0}}, {"seed", 123456789}}}});
  hymo::rt::CpuExecutor ex(hymo::rt::parse_plan(doc.dump()));
  auto f32 = [](std::vector<double> v) {
    for (double& x : v) x = double(float(x));
    return v;
  };
  EXPECT_EQ(ex.values("layers.0.ffn.W1.weight"), f32(splitmix_normal(11, 0.0, 0.5, 128)));
  EXPECT_EQ(ex.values("layers.0.ffn.W2.weight"), f32(splitmix_normal(0, -0.25, 0.02, 128)));
  EXPECT_EQ(ex.values("odd"), splitmix_normal(123456789, 1.5, 2.0, 15));
  // A large draw has the requested moments.
  std::vector<double> big = splitmix_normal(3, 1.0, 2.0, 200000);
  double m = 0, v = 0;
  for (double x : big) m += x;
  m /= double(big.size());
  for (double x : big) v += (x - m) * (x - m);
  v /= double(big.size());
  EXPECT_NEAR(m, 1.0, 0.02);
  EXPECT_NEAR(std::sqrt(v), 2.0, 0.02);
  // The plan runs with them.
  ex.set_values("tokens", kTokens);
  ex.set_values("targets", kTargets);
  ex.run("forward");
  EXPECT_TRUE(std::isfinite(ex.values("loss")[0]));
}

TEST(EndToEnd, ForwardMatchesIndependentReferenceF32AndF64) {
  json doc = load_plan_json();
  const double ref32 = reference_loss(plan_params(doc, DType::kF32), {});
  const double got32 = run_plan(doc);
  EXPECT_NEAR(got32, ref32, 1e-5 * std::fabs(ref32));
  const double ref64 = reference_loss(plan_params(doc, DType::kF64), {});
  const double got64 = run_plan(to_f64(doc));
  EXPECT_NEAR(got64, ref64, 1e-12 * std::fabs(ref64));
  // Sanity: a real loss near log(16) for a small random model.
  EXPECT_GT(got64, 1.0);
  EXPECT_LT(got64, 5.0);
}

TEST(EndToEnd, Bf16PlanRunsCloseToF32) {
  // Every f32 buffer stored as bf16 (arena offsets stay valid: sizes halve).
  json doc = load_plan_json();
  for (json& b : doc["buffers"])
    if (b["dtype"] == "f32") b["dtype"] = "bf16";
  const double ref = reference_loss(plan_params(load_plan_json(), DType::kF64), {});
  const double got = run_plan(doc);
  EXPECT_NEAR(got, ref, 2e-2 * std::fabs(ref));
}

TEST(EndToEnd, EditingAnAttributeChangesTheResult) {
  json doc = to_f64(load_plan_json());
  const double before = run_plan(doc);
  ASSERT_EQ(doc["functions"]["forward"]["calls"][1]["op"], "rms_norm");
  doc["functions"]["forward"]["calls"][1]["attrs"]["eps"] = 0.5;
  const double after = run_plan(doc);
  RefOptions o;
  o.eps[0] = 0.5;
  const double ref = reference_loss(plan_params(doc, DType::kF64), o);
  EXPECT_GT(std::fabs(after - before), 1e-4);
  EXPECT_NEAR(after, ref, 1e-12 * std::fabs(ref));
}

TEST(EndToEnd, SwappingAnOpChangesTheResult) {
  json doc = to_f64(load_plan_json());
  const double before = run_plan(doc);
  ASSERT_EQ(doc["functions"]["forward"]["calls"][8]["op"], "silu");
  doc["functions"]["forward"]["calls"][8]["op"] = "sigmoid";  // layer 1's activation
  const double after = run_plan(doc);
  RefOptions o;
  o.sigmoid_act[1] = true;
  const double ref = reference_loss(plan_params(doc, DType::kF64), o);
  EXPECT_GT(std::fabs(after - before), 1e-4);
  EXPECT_NEAR(after, ref, 1e-12 * std::fabs(ref));
}

TEST(EndToEnd, DroppingAResidualBranchChangesTheResult) {
  // Layer 1's residual add reads l1.ffn; point it at a zero state buffer
  // instead: the layer then contributes nothing.
  json doc = to_f64(load_plan_json());
  const double before = run_plan(doc);
  json zero = {{"id", doc["buffers"].size()}, {"name", "zeros"}, {"dtype", "f64"}, {"shape", {6, 8}},
               {"storage", "constant"}, {"data", {0.0}}};
  doc["buffers"].push_back(zero);
  json& add = doc["functions"]["forward"]["calls"][10];
  ASSERT_EQ(add["op"], "add");
  add["operands"][1] = zero["id"];
  const double after = run_plan(doc);
  EXPECT_GT(std::fabs(after - before), 1e-4);
  // Equivalent: layer 1's W2 all zeros.
  auto p = plan_params(doc, DType::kF64);
  std::fill(p["layers.1.ffn.W2.weight"].begin(), p["layers.1.ffn.W2.weight"].end(), 0.0);
  const double ref = reference_loss(p, {});
  EXPECT_NEAR(after, ref, 1e-12 * std::fabs(ref));
}

TEST(EndToEnd, ChangingAnInitSeedChangesTheResult) {
  json doc = to_f64(load_plan_json());
  const double before = run_plan(doc);
  doc["buffers"][10]["init"]["seed"] = 1234;  // head.weight
  const double after = run_plan(doc);
  const double ref = reference_loss(plan_params(doc, DType::kF64), {});
  EXPECT_GT(std::fabs(after - before), 1e-4);
  EXPECT_NEAR(after, ref, 1e-12 * std::fabs(ref));
}

TEST(EndToEnd, ParamsSetThroughTheApiAreUsed) {
  json doc = to_f64(load_plan_json());
  hymo::rt::CpuExecutor ex(hymo::rt::parse_plan(doc.dump()));
  auto p = plan_params(doc, DType::kF64);
  for (double& v : p["head.weight"]) v *= 2.0;
  ex.set_values("head.weight", p["head.weight"]);
  ex.set_values("tokens", kTokens);
  ex.set_values("targets", kTargets);
  ex.run("forward");
  const double ref = reference_loss(p, {});
  EXPECT_NEAR(ex.values("loss")[0], ref, 1e-12 * std::fabs(ref));
}

TEST(EndToEnd, RunErrors) {
  json doc = load_plan_json();
  hymo::rt::CpuExecutor ex(hymo::rt::parse_plan(doc.dump()));
  hymo::rt::Status s = ex.run_status("forward");
  EXPECT_NE(s.message().find("functions.forward: input buffer 0 'tokens' was not set before the run"),
            std::string::npos)
      << s.message();
  s = ex.run_status("backward");
  EXPECT_NE(s.message().find("no function 'backward' in the plan (have: forward)"), std::string::npos) << s.message();
  ex.set_values("tokens", {1, 2, 3, 4, 5, 16});
  ex.set_values("targets", kTargets);
  s = ex.run_status("forward");
  EXPECT_NE(s.message().find("functions.forward.calls[0] (embedding): id 16 at index 5 out of range [0, 16)"),
            std::string::npos)
      << s.message();
  EXPECT_THROW(ex.set_values("tokens", {1.5, 2, 3, 4, 5, 6}), hymo::rt::Error);
  EXPECT_THROW(ex.set_values("tokens", {1, 2}), hymo::rt::Error);
  EXPECT_THROW(ex.set_values("nope", {1}), hymo::rt::Error);
}

TEST(EndToEnd, ThreadCountDoesNotChangeTheResult) {
  json doc = load_plan_json();
  double first = 0;
  for (int threads : {1, 2, 3}) {
    hymo::rt::ExecutorOptions o;
    o.num_threads = threads;
    hymo::rt::CpuExecutor ex(hymo::rt::parse_plan(doc.dump()), o);
    ex.set_values("tokens", kTokens);
    ex.set_values("targets", kTargets);
    ex.run("forward");
    double l = ex.values("loss")[0];
    if (threads == 1) first = l;
    EXPECT_EQ(l, first) << threads << " threads";
  }
}

}  // namespace

namespace {

TEST(Npy, RoundTripsEachDtype) {
  for (DType dt : {DType::kF32, DType::kF64, DType::kI32}) {
    hymo::rt::HostTensor t;
    t.dtype = dt;
    t.shape = {2, 3};
    t.values = {1.5, -2, 3.25, 4, -5, 6};
    if (dt == DType::kI32) t.values = {1, -2, 3, 4, -5, 6};
    std::string path = ::testing::TempDir() + "/rt_" + hymo::rt::dtype_name(dt) + ".npy";
    ASSERT_TRUE(hymo::rt::write_npy(path, t).ok());
    hymo::rt::HostTensor back;
    hymo::rt::Status s = hymo::rt::read_npy(path, &back);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(back.dtype, dt);
    EXPECT_EQ(back.shape, t.shape);
    EXPECT_EQ(back.values, t.values);
  }
  hymo::rt::HostTensor scalar;
  scalar.shape = {};
  scalar.values = {0.25};
  std::string path = ::testing::TempDir() + "/rt_scalar.npy";
  ASSERT_TRUE(hymo::rt::write_npy(path, scalar).ok());
  hymo::rt::HostTensor back;
  ASSERT_TRUE(hymo::rt::read_npy(path, &back).ok());
  EXPECT_TRUE(back.shape.empty());
  EXPECT_EQ(back.values, scalar.values);
  hymo::rt::Status s = hymo::rt::read_npy(std::string(HYMO_TEST_PLANS) + "/tiny_forward.json", &back);
  EXPECT_NE(s.message().find("not a .npy file"), std::string::npos) << s.message();
}

}  // namespace

// Bad .npy files: each is refused with a Status naming the file and the
// problem; none throws, none allocates what its header claims.
namespace {

// A directory of this process's own (builds running their tests side by
// side must not rewrite each other's files).
std::string npy_dir() {
  static const std::string dir = [] {
    std::string tmpl = ::testing::TempDir() + "/rt_bad_npy.XXXXXX";
    const char* made = ::mkdtemp(tmpl.data());
    return made ? std::string(made) : std::string();
  }();
  EXPECT_FALSE(dir.empty()) << "mkdtemp failed";
  return dir;
}

// Writes a .npy file of format version major.minor with the given header
// text (padded with spaces and '\n' as numpy does) and raw data bytes.
std::string write_raw_npy(const std::string& name, const std::string& header, const std::string& data = "",
                          int major = 1, int minor = 0) {
  std::string path = npy_dir() + "/" + name;
  std::string h = header + "\n";
  std::ofstream o(path, std::ios::binary);
  o.write("\x93NUMPY", 6);
  o.put(char(major));
  o.put(char(minor));
  const uint32_t n = uint32_t(h.size());
  o.put(char(n & 0xff));
  o.put(char((n >> 8) & 0xff));
  if (major >= 2) {
    o.put(char((n >> 16) & 0xff));
    o.put(char((n >> 24) & 0xff));
  }
  o.write(h.data(), std::streamsize(h.size()));
  o.write(data.data(), std::streamsize(data.size()));
  return path;
}

std::string i32_header(const std::string& shape) {
  return "{'descr': '<i4', 'fortran_order': False, 'shape': " + shape + ", }";
}

// Six int32 values 1..6, the data of a (6,) or (2, 3) <i4 file.
std::string six_i32() {
  std::string d;
  for (int32_t v = 1; v <= 6; ++v) d.append(reinterpret_cast<const char*>(&v), 4);
  return d;
}

// read_npy fails, the message holds `want` and names the file, and `out` is untouched.
void expect_npy_error(const std::string& path, const std::string& want) {
  hymo::rt::HostTensor t;
  t.shape = {42};
  hymo::rt::Status s;
  ASSERT_NO_THROW(s = hymo::rt::read_npy(path, &t)) << path;
  ASSERT_FALSE(s.ok()) << path;
  EXPECT_EQ(s.message().rfind(path + ": ", 0), 0u) << s.message();
  EXPECT_NE(s.message().find(want), std::string::npos) << s.message();
  EXPECT_EQ(t.shape, std::vector<int64_t>{42}) << "a failed read changed its output";
}

TEST(Npy, ReadsFormatVersions2And3) {
  for (int major : {1, 2, 3}) {
    std::string path = write_raw_npy("v" + std::to_string(major) + ".npy", i32_header("(2, 3)"), six_i32(), major);
    hymo::rt::HostTensor t;
    hymo::rt::Status s = hymo::rt::read_npy(path, &t);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(t.dtype, DType::kI32);
    EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(t.values, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  }
  // Python 2's numpy wrote dimensions as longs.
  hymo::rt::HostTensor t;
  ASSERT_TRUE(hymo::rt::read_npy(write_raw_npy("long.npy", i32_header("(6L,)"), six_i32()), &t).ok());
  EXPECT_EQ(t.shape, std::vector<int64_t>{6});
}

TEST(Npy, RefusesPathsThatAreNotFiles) {
  std::string dir = npy_dir() + "/a_directory.npy";
  ::mkdir(dir.c_str(), 0755);
  expect_npy_error(dir, dir + ": is a directory");
  expect_npy_error(npy_dir() + "/missing.npy", "No such file or directory");
}

TEST(Npy, RefusesUnsupportedVersions) {
  expect_npy_error(write_raw_npy("v9.npy", i32_header("(6,)"), six_i32(), 9),
                   "unsupported .npy format version 9.0 (supported: 1.0, 2.0, 3.0)");
  expect_npy_error(write_raw_npy("v0.npy", i32_header("(6,)"), six_i32(), 0), "unsupported .npy format version 0.0");
  expect_npy_error(write_raw_npy("v1_1.npy", i32_header("(6,)"), six_i32(), 1, 1),
                   "unsupported .npy format version 1.1");
}

TEST(Npy, RefusesBadDimensions) {
  // neg.npy carries six values of data, the table's files none: {file,
  // shape, message}.
  expect_npy_error(write_raw_npy("neg.npy", i32_header("(-6,)"), six_i32()), "negative dimension -6 in shape (-6,)");
  const struct {
    const char* file;
    const char* shape;
    const char* want;
  } cases[] = {
      {"neg_huge.npy", "(-99999999999999999999,)", "negative dimension -99999999999999999999"},
      {"huge.npy", "(99999999999999999999,)",
       "dimension 99999999999999999999 in shape (99999999999999999999,) is too large"},
      {"big_dim.npy", "(2199023255552,)",
       "dimension 2199023255552 in shape (2199023255552,) is too large (more than 2^40 elements)"},
      // Each dimension is allowed, the product overflows int64.
      {"product.npy", "(1048576, 1048576, 1048576)",
       "shape (1048576, 1048576, 1048576) has too many elements (more than 2^40)"},
      {"float_dim.npy", "(6.5,)", "dimension '6.5' in shape (6.5,) is not an integer"},
      {"word_dim.npy", "(six,)", "dimension 'six' in shape (six,) is not an integer"},
      {"empty_dim.npy", "(2,,3)", "malformed shape (2,,3)"},
      {"comma_only.npy", "(,)", "malformed shape (,)"},
      {"list_shape.npy", "6", "malformed shape 6"},
  };
  for (const auto& c : cases) expect_npy_error(write_raw_npy(c.file, i32_header(c.shape)), c.want);
}

TEST(Npy, RefusesDataThatDoesNotMatchTheShape) {
  // 2^39 elements pass the element limit; the 24 data bytes cannot back them.
  expect_npy_error(write_raw_npy("short.npy", i32_header("(549755813888,)"), six_i32()),
                   "data size mismatch: shape (549755813888,) of <i4 needs 2199023255552 bytes, "
                   "the file holds 24 after");
  expect_npy_error(write_raw_npy("short_v2.npy", i32_header("(7,)"), six_i32(), 2),
                   "data size mismatch: shape (7,) of <i4 needs 28 bytes, the file holds 24 after");
  expect_npy_error(write_raw_npy("long_data.npy", i32_header("(5,)"), six_i32()),
                   "data size mismatch: shape (5,) of <i4 needs 20 bytes, the file holds 24 after");
}

TEST(Npy, RefusesMalformedHeaders) {
  expect_npy_error(write_raw_npy("unclosed.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (6, }"),
                   "malformed header: the 'shape' tuple is not closed by ')'");
  expect_npy_error(write_raw_npy("unclosed_descr.npy", "{'fortran_order': False, 'shape': (6,), 'descr': '<i4}"),
                   "malformed header: the 'descr' string is not closed by a quote");
  expect_npy_error(write_raw_npy("no_shape.npy", "{'descr': '<i4', 'fortran_order': False, }", six_i32()),
                   "header lacks the 'shape' key");
  expect_npy_error(write_raw_npy("no_descr.npy", "{'fortran_order': False, 'shape': (6,), }", six_i32()),
                   "header lacks the 'descr' key");
  expect_npy_error(write_raw_npy("no_order.npy", "{'descr': '<i4', 'shape': (6,), }", six_i32()),
                   "header lacks the 'fortran_order' key");
  expect_npy_error(write_raw_npy("no_value.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': }"),
                   "header key 'shape' has no value");
  expect_npy_error(write_raw_npy("not_dict.npy", "'descr': '<i4'"), "malformed header (expected a dict");
  expect_npy_error(write_raw_npy("bad_descr.npy", "{'descr': <i4, 'fortran_order': False, 'shape': (6,), }"),
                   "unsupported dtype <i4");
  // A header length of 4 GiB must not be allocated.
  std::string path = npy_dir() + "/huge_header.npy";
  {
    std::ofstream o(path, std::ios::binary);
    o.write("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14);
  }
  expect_npy_error(path, "header length 4294967295 bytes is implausible");
  path = write_raw_npy("cut_header.npy", i32_header("(6,)"));
  ASSERT_EQ(::truncate(path.c_str(), 20), 0);
  expect_npy_error(path, "truncated header (header length");
  path = write_raw_npy("cut_version.npy", "");
  ASSERT_EQ(::truncate(path.c_str(), 7), 0);
  expect_npy_error(path, "truncated header (the file ends inside the version bytes)");
}

}  // namespace
