// Internal helpers shared by the loader, the validator and the executors.
#pragma once

#include <string>
#include <vector>

#include "hymo/rt/plan_format.h"
#include "hymo/rt/status.h"

namespace hymo::rt {

// "a" + "b" -> "a.b" ("" + "b" -> "b").
std::string join_path(const std::string& path, const std::string& key);
// "plan: <path>: <msg>".
Status plan_error(const std::string& path, const std::string& msg);

// "f32[2,3]" ("f32[]" for a scalar).
std::string type_str(DType dtype, const std::vector<int64_t>& shape);
std::string shape_str(const std::vector<int64_t>& shape);

// The op table: the docs/dialect.md ops the runtime knows.
struct OpInfo {
  const char* name;
  // Results may be the very same memory as an operand (elementwise ops);
  // for every other op results and operands must not overlap.
  bool inplace_ok;
  // Kernels that move bytes only (shape ops): bf16 runs natively.
  bool bytes_only;
};
const OpInfo* find_op(const std::string& name);
std::vector<std::string> all_op_names();

// Checks one call's operand/result counts, dtypes, shapes and attributes
// against the op's definition. `path` is e.g. "functions.f.calls[3]".
Status verify_call(const Plan& plan, const Call& call, const std::string& path);

}  // namespace hymo::rt
