// safetensors reader and writer, and the atomic file write (safetensors.h).
#include "hymo/rt/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "cpu/bf16.h"

namespace hymo::rt {
namespace {

// Headers beyond this are not plausible (the format's own limit is 100 MB).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

struct DTypeRow {
  StDType t;
  const char* name;
  int64_t size;
};
constexpr DTypeRow kDTypes[] = {
    {StDType::kF64, "F64", 8}, {StDType::kF32, "F32", 4}, {StDType::kF16, "F16", 2},
    {StDType::kBF16, "BF16", 2}, {StDType::kI64, "I64", 8}, {StDType::kI32, "I32", 4},
    {StDType::kI16, "I16", 2}, {StDType::kI8, "I8", 1}, {StDType::kU8, "U8", 1},
    {StDType::kU16, "U16", 2}, {StDType::kU32, "U32", 4}, {StDType::kU64, "U64", 8},
    {StDType::kBool, "BOOL", 1},
};

std::string errno_text() { return std::strerror(errno); }

template <class T>
T load_le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // the machines we run on are little-endian
  return v;
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31;
  uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  uint32_t u;
  if (exp == 0) {
    if (man == 0) {
      u = sign;
    } else {  // subnormal
      float f = std::ldexp(float(man), -24);
      return sign ? -f : f;
    }
  } else if (exp == 31) {
    u = sign | 0x7F800000u | (man << 13);
  } else {
    u = sign | ((exp + 112) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

bool is_float(StDType t) {
  return t == StDType::kF64 || t == StDType::kF32 || t == StDType::kF16 || t == StDType::kBF16;
}

// Element i of a tensor as double (floats) or int64 (integers).
double float_at(StDType t, const uint8_t* p, int64_t i) {
  switch (t) {
    case StDType::kF64: return load_le<double>(p + 8 * i);
    case StDType::kF32: return load_le<float>(p + 4 * i);
    case StDType::kF16: return f16_to_f32(load_le<uint16_t>(p + 2 * i));
    case StDType::kBF16: return bf16_to_f32(load_le<uint16_t>(p + 2 * i));
    default: return 0;
  }
}
bool int_at(StDType t, const uint8_t* p, int64_t i, int64_t* v) {
  switch (t) {
    case StDType::kI64: *v = load_le<int64_t>(p + 8 * i); return true;
    case StDType::kI32: *v = load_le<int32_t>(p + 4 * i); return true;
    case StDType::kI16: *v = load_le<int16_t>(p + 2 * i); return true;
    case StDType::kI8: *v = int8_t(p[i]); return true;
    case StDType::kU8: *v = p[i]; return true;
    case StDType::kBool: *v = p[i] != 0; return true;
    case StDType::kU16: *v = load_le<uint16_t>(p + 2 * i); return true;
    case StDType::kU32: *v = load_le<uint32_t>(p + 4 * i); return true;
    case StDType::kU64: {
      uint64_t u = load_le<uint64_t>(p + 8 * i);
      if (u > uint64_t(std::numeric_limits<int64_t>::max())) return false;
      *v = int64_t(u);
      return true;
    }
    default: return false;
  }
}

class FdSink : public FileSink {
 public:
  FdSink(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  Status write(const void* data, size_t bytes) override {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      ssize_t n = ::write(fd_, p, std::min(bytes, size_t(1) << 30));
      if (n < 0) {
        if (errno == EINTR) continue;
        return error_status("writing " + path_ + ": " + errno_text());
      }
      p += n;
      bytes -= size_t(n);
    }
    return ok_status();
  }

 private:
  int fd_;
  std::string path_;
};

class StringSink : public FileSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  Status write(const void* data, size_t bytes) override {
    out_->append(static_cast<const char*>(data), bytes);
    return ok_status();
  }

 private:
  std::string* out_;
};

// Checks the tensors and writes header + data into `sink`.
Status encode_into(const std::vector<StWriteTensor>& tensors, const std::map<std::string, std::string>& metadata,
                   FileSink& sink) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  uint64_t offset = 0;
  std::vector<uint64_t> sizes;
  for (const StWriteTensor& t : tensors) {
    if (t.name.empty()) return error_status("safetensors: a tensor has an empty name");
    if (t.name == "__metadata__") return error_status("safetensors: a tensor may not be named __metadata__");
    if (header.contains(t.name)) return error_status("safetensors: tensor " + t.name + " appears twice");
    uint64_t n = 1;
    for (int64_t d : t.shape) {
      if (d < 0) return error_status("safetensors: tensor " + t.name + " has a negative dimension");
      n *= uint64_t(d);
    }
    uint64_t bytes = n * uint64_t(st_dtype_size(t.dtype));
    if (bytes > 0 && !t.data) return error_status("safetensors: tensor " + t.name + " has no data");
    nlohmann::ordered_json e;
    e["dtype"] = st_dtype_name(t.dtype);
    e["shape"] = t.shape;
    e["data_offsets"] = {offset, offset + bytes};
    header[t.name] = e;
    offset += bytes;
    sizes.push_back(bytes);
  }
  std::string text = header.dump();
  while ((8 + text.size()) % 8 != 0) text.push_back(' ');  // data 8-byte aligned
  uint8_t len[8];
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) len[i] = uint8_t(n >> (8 * i));
  HYMO_RETURN_IF_ERROR(sink.write(len, 8));
  HYMO_RETURN_IF_ERROR(sink.write(text.data(), text.size()));
  for (size_t i = 0; i < tensors.size(); ++i)
    if (sizes[i]) HYMO_RETURN_IF_ERROR(sink.write(tensors[i].data, sizes[i]));
  return ok_status();
}

}  // namespace

const char* st_dtype_name(StDType t) {
  for (const DTypeRow& r : kDTypes)
    if (r.t == t) return r.name;
  return "?";
}
int64_t st_dtype_size(StDType t) {
  for (const DTypeRow& r : kDTypes)
    if (r.t == t) return r.size;
  return 0;
}
bool st_dtype_from_name(const std::string& name, StDType* out) {
  for (const DTypeRow& r : kDTypes)
    if (name == r.name) {
      *out = r.t;
      return true;
    }
  return false;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) munmap(const_cast<uint8_t*>(map_), map_size_);
}

Status SafetensorsFile::open(const std::string& path, std::unique_ptr<SafetensorsFile>* out) {
  const std::string where = "checkpoint " + path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return error_status(where + ": cannot open: " + errno_text());
  struct stat st;
  if (fstat(fd, &st) != 0) {
    std::string e = errno_text();
    ::close(fd);
    return error_status(where + ": cannot stat: " + e);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return error_status(where + ": not a regular file");
  }
  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->path_ = path;
  size_t size = size_t(st.st_size);
  if (size < 8) {
    ::close(fd);
    return error_status(where + ": truncated: " + std::to_string(size) +
                        " bytes, shorter than the 8-byte header length (not a safetensors file?)");
  }
  void* m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return error_status(where + ": cannot map: " + errno_text());
  f->map_ = static_cast<const uint8_t*>(m);
  f->map_size_ = size;

  uint64_t hlen = load_le<uint64_t>(f->map_);
  if (hlen > kMaxHeaderBytes)
    return error_status(where + ": header length " + std::to_string(hlen) +
                        " is implausible (over 100 MB): not a safetensors file, or corrupt");
  if (hlen > size - 8)
    return error_status(where + ": truncated: the header says " + std::to_string(hlen) +
                        " bytes of JSON, the file holds " + std::to_string(size - 8) + " after the length");
  const char* hp = reinterpret_cast<const char*>(f->map_ + 8);
  nlohmann::json header = nlohmann::json::parse(hp, hp + hlen, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) return error_status(where + ": the header is not valid JSON (corrupt file?)");
  if (!header.is_object()) return error_status(where + ": the header is not a JSON object");
  f->data_ = f->map_ + 8 + hlen;
  const uint64_t data_size = size - 8 - hlen;

  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) return error_status(where + ": __metadata__ is not an object");
      for (auto m2 = v.begin(); m2 != v.end(); ++m2) {
        if (!m2.value().is_string())
          return error_status(where + ": __metadata__." + m2.key() + " is not a string");
        f->metadata_[m2.key()] = m2.value().get<std::string>();
      }
      continue;
    }
    const std::string tw = where + ": tensor " + name;
    if (!v.is_object()) return error_status(tw + ": expected an object {dtype, shape, data_offsets}");
    for (auto k = v.begin(); k != v.end(); ++k)
      if (k.key() != "dtype" && k.key() != "shape" && k.key() != "data_offsets")
        return error_status(tw + ": unknown field '" + k.key() + "'");
    StTensorInfo t;
    t.name = name;
    if (!v.contains("dtype") || !v["dtype"].is_string()) return error_status(tw + ": dtype missing or not a string");
    if (!st_dtype_from_name(v["dtype"].get<std::string>(), &t.dtype))
      return error_status(tw + ": unknown dtype '" + v["dtype"].get<std::string>() + "'");
    if (!v.contains("shape") || !v["shape"].is_array()) return error_status(tw + ": shape missing or not an array");
    uint64_t numel = 1;
    for (const auto& d : v["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t(1) << 40))
        return error_status(tw + ": shape holds " + d.dump() + ", expected integers in [0, 2^40]");
      t.shape.push_back(int64_t(d.get<uint64_t>()));
      numel *= d.get<uint64_t>();
      if (numel > (uint64_t(1) << 40)) return error_status(tw + ": more than 2^40 elements");
    }
    const auto& off = v.contains("data_offsets") ? v["data_offsets"] : nlohmann::json();
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      return error_status(tw + ": data_offsets missing or not [begin, end]");
    t.begin = off[0].get<uint64_t>();
    t.end = off[1].get<uint64_t>();
    if (t.end < t.begin) return error_status(tw + ": data_offsets end < begin");
    uint64_t want = numel * uint64_t(st_dtype_size(t.dtype));
    if (t.end - t.begin != want)
      return error_status(tw + ": data_offsets span " + std::to_string(t.end - t.begin) + " bytes, its " +
                          st_dtype_name(t.dtype) + " shape needs " + std::to_string(want));
    f->tensors_.push_back(std::move(t));
  }
  std::sort(f->tensors_.begin(), f->tensors_.end(), [](const StTensorInfo& a, const StTensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  for (const StTensorInfo& t : f->tensors_) {
    if (t.begin != at)
      return error_status(where + ": tensor " + t.name + ": data_offsets begin at " + std::to_string(t.begin) +
                          ", expected " + std::to_string(at) + " (tensors must tile the data without gaps or overlap)");
    at = t.end;
  }
  if (at > data_size)
    return error_status(where + ": truncated: the header describes " + std::to_string(at) +
                        " bytes of tensor data, the file holds " + std::to_string(data_size));
  if (at < data_size)
    return error_status(where + ": " + std::to_string(data_size - at) +
                        " bytes after the last tensor (corrupt file?)");
  for (size_t i = 0; i < f->tensors_.size(); ++i) f->index_[f->tensors_[i].name] = i;
  *out = std::move(f);
  return ok_status();
}

const StTensorInfo* SafetensorsFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const uint8_t* SafetensorsFile::bytes(const StTensorInfo& t) const { return data_ + t.begin; }

Status SafetensorsFile::read_into(const StTensorInfo& t, DType dst, void* out) const {
  const uint8_t* p = bytes(t);
  const int64_t n = t.numel();
  const std::string where = "checkpoint " + path_ + ": tensor " + t.name;
  if (dst == DType::kI32) {
    if (is_float(t.dtype))
      return error_status(where + ": is " + st_dtype_name(t.dtype) + ", expected an integer dtype (I32)");
    int32_t* o = static_cast<int32_t*>(out);
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = 0;
      if (!int_at(t.dtype, p, i, &v) || v < std::numeric_limits<int32_t>::min() ||
          v > std::numeric_limits<int32_t>::max())
        return error_status(where + ": element " + std::to_string(i) + " does not fit i32");
      o[i] = int32_t(v);
    }
    return ok_status();
  }
  if (!is_float(t.dtype))
    return error_status(where + ": is " + st_dtype_name(t.dtype) + ", expected a float dtype (F32)");
  if (dst == DType::kF32 && t.dtype == StDType::kF32) {
    std::memcpy(out, p, size_t(n) * 4);
    return ok_status();
  }
  if (dst == DType::kF64 && t.dtype == StDType::kF64) {
    std::memcpy(out, p, size_t(n) * 8);
    return ok_status();
  }
  for (int64_t i = 0; i < n; ++i) {
    double v = float_at(t.dtype, p, i);
    switch (dst) {
      case DType::kF32: static_cast<float*>(out)[i] = float(v); break;
      case DType::kF64: static_cast<double*>(out)[i] = v; break;
      case DType::kBF16: static_cast<uint16_t*>(out)[i] = f32_to_bf16(float(v)); break;
      case DType::kI32: break;
    }
  }
  return ok_status();
}

Status encode_safetensors(const std::vector<StWriteTensor>& tensors,
                          const std::map<std::string, std::string>& metadata, std::string* out) {
  out->clear();
  StringSink sink(out);
  return encode_into(tensors, metadata, sink);
}

Status write_safetensors(const std::string& path, const std::vector<StWriteTensor>& tensors,
                         const std::map<std::string, std::string>& metadata) {
  return atomic_write_file(path, [&](FileSink& sink) { return encode_into(tensors, metadata, sink); });
}

Status atomic_write_file(const std::string& path, const std::function<Status(FileSink&)>& fill) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) return error_status("cannot write '" + path + "': not a file name");
  std::string tmp = (dir == "/" ? "" : dir) + "/." + base + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return error_status("cannot write " + path + ": cannot create " + tmp + ": " + errno_text());
  auto fail = [&](Status s) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  FdSink sink(fd, tmp);
  Status s = fill(sink);
  if (!s.ok()) return fail(s.with_context("writing " + path));
  if (::fsync(fd) != 0) return fail(error_status("writing " + path + ": fsync: " + errno_text()));
  int rc = ::close(fd);
  fd = -1;
  if (rc != 0) return fail(error_status("writing " + path + ": close: " + errno_text()));
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return fail(error_status("writing " + path + ": rename from " + tmp + ": " + errno_text()));
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    if (::fsync(dfd) != 0 && errno != EINVAL) {
      std::string e = errno_text();
      ::close(dfd);
      return error_status("writing " + path + ": fsync of directory " + dir + ": " + e);
    }
    ::close(dfd);
  }
  return ok_status();
}

}  // namespace hymo::rt
