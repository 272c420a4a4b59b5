// Instantiation unit: BF16, S = 64 (one file per S keeps parallel builds short).
#include "gdn_impl.cuh"
namespace hymo::gdn::dev {
template cudaError_t run_variant<__nv_bfloat16, 64>(int, bool, int, bool, const KParams&, cudaStream_t);
}
