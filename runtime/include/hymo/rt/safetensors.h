// safetensors files (https://github.com/huggingface/safetensors, format only):
//   8 bytes  little-endian u64 N: the header's length
//   N bytes  JSON: {"__metadata__": {str: str}, NAME: {"dtype": "F32",
//            "shape": [..], "data_offsets": [begin, end]}, ...}
//   rest     the tensors' bytes; offsets are relative to the end of the
//            header, every byte belongs to exactly one tensor
// Our own small reader and writer (no third-party safetensors code). The
// reader checks every field and names the file and the tensor in each error;
// the writer is atomic (atomic_write_file below).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hymo/rt/plan_format.h"
#include "hymo/rt/status.h"

namespace hymo::rt {

// The safetensors dtypes this reader knows. Data are little-endian.
enum class StDType { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kU16, kU32, kU64, kBool };
const char* st_dtype_name(StDType t);  // "F32", ...
int64_t st_dtype_size(StDType t);
bool st_dtype_from_name(const std::string& name, StDType* out);

struct StTensorInfo {
  std::string name;
  StDType dtype = StDType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // data_offsets, relative to the start of the data
  uint64_t end = 0;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

// A safetensors file opened read-only (mapped into memory).
class SafetensorsFile {
 public:
  // Reads and validates the header; errors look like
  //   checkpoint runs/x/step_10.safetensors: truncated: the header says 2048
  //   bytes of tensor data, the file holds 1000
  static Status open(const std::string& path, std::unique_ptr<SafetensorsFile>* out);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // In the order of their data offsets.
  const std::vector<StTensorInfo>& tensors() const { return tensors_; }
  const StTensorInfo* find(const std::string& name) const;
  // The tensor's raw bytes (end - begin of them).
  const uint8_t* bytes(const StTensorInfo& t) const;
  // Converts the tensor's values into `numel` elements of `dst` (a plan
  // dtype): exact where the target holds the value (F32 -> f32/f64, BF16 ->
  // f32, integers -> i32 when in range), rounded to nearest even where it
  // narrows (F64 -> f32, F32 -> bf16). Float <-> integer mixes are errors.
  Status read_into(const StTensorInfo& t, DType dst, void* out) const;

 private:
  SafetensorsFile() = default;
  std::string path_;
  const uint8_t* map_ = nullptr;
  size_t map_size_ = 0;
  const uint8_t* data_ = nullptr;  // start of the tensor data
  std::map<std::string, std::string> metadata_;
  std::vector<StTensorInfo> tensors_;
  std::map<std::string, size_t> index_;
};

// One tensor to write: `data` points at numel * st_dtype_size(dtype) bytes.
struct StWriteTensor {
  std::string name;
  StDType dtype = StDType::kF32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
};

// Writes `tensors` (in the given order) and `metadata` to `path` through
// atomic_write_file. Names must be unique and non-empty and not
// "__metadata__".
Status write_safetensors(const std::string& path, const std::vector<StWriteTensor>& tensors,
                         const std::map<std::string, std::string>& metadata);

// Serialises to bytes (what write_safetensors writes).
Status encode_safetensors(const std::vector<StWriteTensor>& tensors,
                          const std::map<std::string, std::string>& metadata, std::string* out);

// Writes a file atomically: `fill` writes the contents into a temporary file
// in the same directory ("<dir>/.<name>.tmp.<pid>"); on success the file is
// fsynced, renamed over `path` and the directory fsynced. If `fill` or any
// step fails, the temporary file is removed and `path` is left exactly as it
// was (an older file of that name survives).
class FileSink {
 public:
  virtual ~FileSink() = default;
  virtual Status write(const void* data, size_t bytes) = 0;
};
Status atomic_write_file(const std::string& path, const std::function<Status(FileSink&)>& fill);

}  // namespace hymo::rt
