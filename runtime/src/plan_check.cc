#include "hymo/rt/plan_check.h"

#include <exception>

#include "hymo/rt/api.h"

namespace hymo::rt {

bool check_plan_text(const std::string& json_text, std::string* error) noexcept {
  try {
    Plan plan;
    Status st = parse_plan_status(json_text, &plan);
    if (st.ok()) return true;
    *error = st.message();
  } catch (const std::exception& e) {  // (allocation failure)
    *error = e.what();
  }
  return false;
}

}  // namespace hymo::rt
