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
  auto feature = [](bool built, bool configured) -> std::string {
    if (built) return "on";
    return configured ? "off (found at configure time; not in this runtime yet)" : "off";
  };
  os << "cuda: " << feature(info.cuda, info.cuda_configured) << "\n";
  os << "nccl: " << feature(info.nccl, info.nccl_configured) << "\n";
  if (info.threads > 0)
    os << "cpu threads: " << info.threads << "\n";
  else
    os << "cpu threads: HYMO_NUM_THREADS is not a thread count (1 to " << hymo::rt::kMaxThreads << ")\n";
  return os.str();
}

}  // namespace hymo_run
