#include <sstream>

#include "commands.h"
#include "hymo/rt/api.h"

namespace hymo_run {

std::string version_text() {
  hymo::rt::BuildInfo info = hymo::rt::build_info();
  std::ostringstream os;
  os << "hymo-run " << HYMO_RUN_VERSION << " (plan format " << hymo::rt::kPlanFormatName << " version "
     << hymo::rt::kPlanFormatVersion << ")\n";
  os << "blas: " << (info.blas ? "on (" + info.blas_name + ")" : "off: " + info.blas_name) << "\n";
  os << "cuda: " << (info.cuda ? "on" : "off") << "\n";
  os << "nccl: " << (info.nccl ? "on" : "off") << "\n";
  os << "cpu threads: " << info.threads << "\n";
  return os.str();
}

}  // namespace hymo_run
