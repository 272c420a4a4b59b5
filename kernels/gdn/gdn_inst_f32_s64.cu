// Instantiation unit: FP32 test variant, S = D = 64.
#include "gdn_impl.cuh"
namespace hymo::gdn::dev {
template cudaError_t run_variant<float, 64>(int, bool, int, bool, const KParams&, cudaStream_t);
}
