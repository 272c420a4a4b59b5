// The hymo plan: what the compiler writes and the runtime executes.
//
// On disk a plan is one JSON document (docs/plan-format.md describes every
// field); in memory it is the structs below. Nothing here depends on MLIR or
// on a JSON library: the loader (api.h, load_plan_file / parse_plan) parses
// and validates the file into a Plan, and executors only ever see a Plan
// that passed validation.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hymo::rt {

// The value of the top-level "format" field, and the version this runtime
// reads. A file of another version is rejected.
inline constexpr const char* kPlanFormatName = "hymo-plan";
inline constexpr int64_t kPlanFormatVersion = 1;
// Every arena buffer's byte offset is a multiple of this.
inline constexpr int64_t kArenaAlignment = 64;
// Upper bound on the element count of one buffer (2^40): keeps byte sizes far
// from int64 overflow.
inline constexpr int64_t kMaxBufferElements = int64_t(1) << 40;
// Upper bound on each size of a call's matrix product (M, N, K and the row
// strides): the CPU runtime hands them to CBLAS as int (cpu/gemm.cc).
inline constexpr int64_t kMaxGemmDim = 2147483647;
// The most sequences a decode step (@decode_step) takes, and the longest MLA
// cache Tmax it keeps: the ranges of hymo-opt's --hymo-decode-batch and
// --hymo-decode-max-len, which hymo-run sample's --max-len (and any caller's
// own options) checks against first, so that its errors name its options.
inline constexpr int64_t kMaxDecodeBatch = int64_t(1) << 16;
inline constexpr int64_t kMaxDecodeMaxLen = int64_t(1) << 24;

enum class DType { kF32, kF64, kBF16, kI32 };

inline int64_t dtype_size(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kF64: return 8;
    case DType::kBF16: return 2;
    case DType::kI32: return 4;
  }
  return 0;
}
inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kBF16: return "bf16";
    case DType::kI32: return "i32";
  }
  return "?";
}
inline bool dtype_is_float(DType t) { return t != DType::kI32; }

enum class StorageKind {
  kParam,     // trainable parameter, persistent, owned by the executor
  kState,     // other persistent state: optimizer moments, masters, gate bias
  kInput,     // set by the caller before a function runs (tokens)
  kArena,     // scratch inside the one arena, at a byte offset
  kConstant,  // read-only inline data from the plan
};
inline const char* storage_name(StorageKind k) {
  switch (k) {
    case StorageKind::kParam: return "param";
    case StorageKind::kState: return "state";
    case StorageKind::kInput: return "input";
    case StorageKind::kArena: return "arena";
    case StorageKind::kConstant: return "constant";
  }
  return "?";
}

// Initial contents of a param/state buffer ("init" in the file).
struct BufferInit {
  enum class Kind { kZeros, kFill, kData, kUniform, kNormal };
  Kind kind = Kind::kZeros;
  double fill = 0.0;          // kFill
  std::vector<double> data;   // kData: numel values
  double low = 0.0;           // kUniform: U(low, high) from splitmix64(seed)
  double high = 0.0;
  double mean = 0.0;          // kNormal: N(mean, stddev^2), Box-Muller on
  double stddev = 0.0;        //   splitmix64(seed) (docs/plan-format.md)
  uint64_t seed = 0;          // kUniform, kNormal
};

struct BufferDesc {
  int64_t id = 0;
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;  // empty: a scalar
  StorageKind storage = StorageKind::kArena;
  int64_t offset = -1;         // kArena only: byte offset inside the arena
  std::vector<double> data;    // kConstant only: numel values (or 1: a splat)
  BufferInit init;             // kParam / kState only

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  int64_t bytes() const { return numel() * dtype_size(dtype); }
};

enum class Optimizer { kNorMuon, kAdamW, kNone };
inline const char* optimizer_name(Optimizer o) {
  switch (o) {
    case Optimizer::kNorMuon: return "normuon";
    case Optimizer::kAdamW: return "adamw";
    case Optimizer::kNone: return "none";
  }
  return "?";
}

// One row of the parameter table: a spec §5 name bound to a buffer.
struct ParamEntry {
  std::string name;
  int64_t buffer = 0;
  Optimizer optimizer = Optimizer::kNone;
};

// A call attribute. JSON true/false -> kBool, an integer -> kInt, another
// number -> kFloat, an array of integers -> kIntList, an array of numbers
// with a non-integer -> kFloatList (an empty array is an empty kIntList), a
// string -> kString.
struct Attr {
  enum class Kind { kBool, kInt, kFloat, kIntList, kFloatList, kString };
  Kind kind = Kind::kInt;
  bool b = false;
  int64_t i = 0;
  double f = 0.0;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::string s;

  bool is_number() const { return kind == Kind::kInt || kind == Kind::kFloat; }
  double as_double() const { return kind == Kind::kInt ? double(i) : f; }
  bool is_list() const {
    return kind == Kind::kIntList || kind == Kind::kFloatList;
  }
  std::vector<double> as_doubles() const {
    if (kind == Kind::kFloatList) return floats;
    return std::vector<double>(ints.begin(), ints.end());
  }
};

// One kernel call: `op` is a docs/dialect.md op name without "hymo.".
struct Call {
  std::string op;
  std::vector<int64_t> operands;  // buffer ids
  std::vector<int64_t> results;   // buffer ids
  std::map<std::string, Attr> attrs;
};

// An entry point (micro_step, update, eval_step, ...).
struct Function {
  std::string name;
  std::vector<int64_t> inputs;   // buffers the caller must set first
  std::vector<int64_t> outputs;  // buffers the caller reads afterwards
  std::vector<Call> calls;       // run in order
};

struct Plan {
  std::string format = kPlanFormatName;
  int64_t version = kPlanFormatVersion;
  std::string config_json = "{}";  // the resolved model config, carried through
  int64_t arena_bytes = 0;
  std::vector<BufferDesc> buffers;  // buffers[i].id == i
  std::vector<ParamEntry> params;
  std::vector<Function> functions;  // in file order

  const Function* find_function(const std::string& name) const {
    for (const Function& f : functions)
      if (f.name == name) return &f;
    return nullptr;
  }
  const BufferDesc* find_buffer(const std::string& name) const {
    for (const BufferDesc& b : buffers)
      if (b.name == name) return &b;
    return nullptr;
  }
};

}  // namespace hymo::rt
