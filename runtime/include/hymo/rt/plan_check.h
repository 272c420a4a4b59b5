// The runtime's plan check, for the compiler: hymo-emit-plan runs it on the
// plan it is about to write, so that hymo-opt never writes a plan the runtime
// would refuse. A plain function with no exceptions and no runtime types in
// its interface (the compiler is built without exceptions).
#pragma once

#include <string>

namespace hymo::rt {

// Parses and validates `json_text` as the loader does; on failure returns
// false with the loader's message in *error.
bool check_plan_text(const std::string& json_text, std::string* error) noexcept;

}  // namespace hymo::rt
