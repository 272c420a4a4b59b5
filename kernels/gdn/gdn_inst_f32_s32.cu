// Instantiation unit: FP32 test variant, S = D = 32.
#include "gdn_impl.cuh"
namespace hymo::gdn::dev {
template cudaError_t run_variant<float, 32>(int, bool, int, bool, const KParams&, cudaStream_t);
}
