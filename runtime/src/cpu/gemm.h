// Row-major GEMM for the CPU kernels: C = alpha * op(A) op(B) + beta * C,
// op(A) M x K, op(B) K x N. Through CBLAS (OpenBLAS) when the build found
// it (HYMO_HAVE_CBLAS), else a plain loop spread over the thread pool.
#pragma once

#include <cstdint>

namespace hymo::rt {

class ThreadPool;

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha,
          const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c,
          int64_t ldc, ThreadPool& pool);

// C = op(A) op(A)^T (n x n, symmetric; op(A) n x k, trans: A stored k x n):
// the symmetric rank-k product, half the multiplies of gemm, through
// CBLAS syrk (both triangles written).
template <class T>
void syrk(bool trans, int64_t n, int64_t k, const T* a, int64_t lda, T* c,
          int64_t ldc, ThreadPool& pool);

// While alive, BLAS calls run single-threaded (for callers that run several
// independent products in parallel themselves); restores the count after.
class BlasSingleThreaded {
 public:
  BlasSingleThreaded();
  ~BlasSingleThreaded();
  BlasSingleThreaded(const BlasSingleThreaded&) = delete;
  BlasSingleThreaded& operator=(const BlasSingleThreaded&) = delete;

 private:
  int saved_ = 0;
};

// True when gemm goes through CBLAS.
bool gemm_uses_blas();
const char* gemm_backend_name();

}  // namespace hymo::rt
