#include "cpu/gemm.h"

#include <algorithm>
#include <vector>

#include "thread_pool.h"

#ifdef HYMO_HAVE_CBLAS
#include <cblas.h>
#endif

namespace hymo::rt {
namespace {

// The fallback: C = alpha op(A) op(B) + beta C with a row-parallel loop.
template <class T>
void loop_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha,
               const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c,
               int64_t ldc, ThreadPool& pool) {
  int64_t grain = std::max<int64_t>(1, (64 * 64 * 64) / std::max<int64_t>(1, n * k));
  pool.parallel_for(m, grain, [&](int64_t i0, int64_t i1) {
    std::vector<T> row(static_cast<size_t>(n));
    for (int64_t i = i0; i < i1; ++i) {
      std::fill(row.begin(), row.end(), T(0));
      for (int64_t p = 0; p < k; ++p) {
        T av = ta ? a[p * lda + i] : a[i * lda + p];
        if (av == T(0)) continue;
        if (!tb) {
          const T* br = b + p * ldb;
          for (int64_t j = 0; j < n; ++j) row[size_t(j)] += av * br[j];
        } else {
          for (int64_t j = 0; j < n; ++j) row[size_t(j)] += av * b[j * ldb + p];
        }
      }
      T* cr = c + i * ldc;
      for (int64_t j = 0; j < n; ++j)
        cr[j] = alpha * row[size_t(j)] + (beta == T(0) ? T(0) : beta * cr[j]);
    }
  });
}

// Copies the upper triangle onto the lower one, in 32 x 32 tiles (a
// transposed copy row by row strides through memory).
template <class T>
void mirror_upper(int64_t n, T* c, int64_t ldc) {
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < n; i0 += kTile)
    for (int64_t j0 = 0; j0 <= i0; j0 += kTile)
      for (int64_t i = i0; i < std::min(n, i0 + kTile); ++i)
        for (int64_t j = j0; j < std::min(i, j0 + kTile); ++j) c[i * ldc + j] = c[j * ldc + i];
}

}  // namespace

#ifdef HYMO_HAVE_CBLAS
template <>
void syrk<float>(bool trans, int64_t n, int64_t k, const float* a, int64_t lda, float* c, int64_t ldc,
                 ThreadPool&) {
  cblas_ssyrk(CblasRowMajor, CblasUpper, trans ? CblasTrans : CblasNoTrans, int(n), int(k), 1.0f, a, int(lda),
              0.0f, c, int(ldc));
  mirror_upper(n, c, ldc);
}
template <>
void syrk<double>(bool trans, int64_t n, int64_t k, const double* a, int64_t lda, double* c, int64_t ldc,
                  ThreadPool&) {
  cblas_dsyrk(CblasRowMajor, CblasUpper, trans ? CblasTrans : CblasNoTrans, int(n), int(k), 1.0, a, int(lda),
              0.0, c, int(ldc));
  mirror_upper(n, c, ldc);
}
#else
template <class T>
void syrk(bool trans, int64_t n, int64_t k, const T* a, int64_t lda, T* c, int64_t ldc, ThreadPool& pool) {
  loop_gemm(trans, !trans, n, n, k, T(1), a, lda, a, lda, T(0), c, ldc, pool);
}
template void syrk<float>(bool, int64_t, int64_t, const float*, int64_t, float*, int64_t, ThreadPool&);
template void syrk<double>(bool, int64_t, int64_t, const double*, int64_t, double*, int64_t, ThreadPool&);
#endif

#ifdef HYMO_HAVE_CBLAS
template <>
void gemm<float>(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                 const float* a, int64_t lda, const float* b, int64_t ldb,
                 float beta, float* c, int64_t ldc, ThreadPool&) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}
template <>
void gemm<double>(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                  const double* a, int64_t lda, const double* b, int64_t ldb,
                  double beta, double* c, int64_t ldc, ThreadPool&) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}
BlasSingleThreaded::BlasSingleThreaded() : saved_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
BlasSingleThreaded::~BlasSingleThreaded() { openblas_set_num_threads(saved_); }

bool gemm_uses_blas() { return true; }
const char* gemm_backend_name() { return "openblas"; }
#else
template <>
void gemm<float>(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                 const float* a, int64_t lda, const float* b, int64_t ldb,
                 float beta, float* c, int64_t ldc, ThreadPool& pool) {
  loop_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool);
}
template <>
void gemm<double>(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                  const double* a, int64_t lda, const double* b, int64_t ldb,
                  double beta, double* c, int64_t ldc, ThreadPool& pool) {
  loop_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool);
}
BlasSingleThreaded::BlasSingleThreaded() = default;
BlasSingleThreaded::~BlasSingleThreaded() = default;

bool gemm_uses_blas() { return false; }
const char* gemm_backend_name() { return "none (plain loop GEMM)"; }
#endif

}  // namespace hymo::rt
