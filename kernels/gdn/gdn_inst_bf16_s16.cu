// Instantiation unit: BF16, S = 16 (one file per S keeps parallel builds short).
#include "gdn_impl.cuh"
namespace hymo::gdn::dev {
template cudaError_t run_variant<__nv_bfloat16, 16>(int, bool, int, bool, const KParams&, cudaStream_t);
}
