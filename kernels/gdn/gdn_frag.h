// hymo GDN: where each lane of an ldmatrix.x4 points in the 16 x 16 BF16 tile it reads, for
// the mma.m16n8k16 fragments the kernels build (gdn.cuh, gdn_fwd_bf16.cuh, gdn_bwd_bf16.cuh).
// Host code sees the same functions: gdn_frag_test.cc emulates ldmatrix and the mma's fragment
// layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16" and "ldmatrix") on the CPU and checks
// that the products the kernels form from these addresses are the products they mean.
#pragma once

#if defined(__CUDACC__)
#define HYMO_GDN_FRAG_FN __host__ __device__ __forceinline__
#else
#define HYMO_GDN_FRAG_FN inline
#endif

namespace hymo::gdn {

// The lane addresses of an ldmatrix.x4 that reads a 16 x 16 BF16 tile: the lanes of group q
// (8 q .. 8 q + 7) give the rows of the tile's q-th 8 x 8 quarter, which register q receives.
// These give this lane's row and column in the tile (gdn_frag_test.cc checks them against the
// PTX fragment layouts).
// ldsm_row, ldsm_col: the quarters top left, bottom left, top right, bottom right. That is the
// mma A fragment of a row-major tile (rows m, columns k), and with .trans the two n8 B
// fragments (registers 0-1, then 2-3) of a row-major K x N tile.
HYMO_GDN_FRAG_FN int ldsm_row(int lane) { return lane & 15; }
HYMO_GDN_FRAG_FN int ldsm_col(int lane) { return (lane >> 4) * 8; }
// ldsm_row_t, ldsm_col_t: top left, top right, bottom left, bottom right. That is, with .trans,
// the A fragment of a tile stored transposed (K x M), and without it the two n8 B fragments of
// a tile stored transposed (N x K).
HYMO_GDN_FRAG_FN int ldsm_row_t(int lane) { return (lane & 7) + ((lane >> 4) & 1) * 8; }
HYMO_GDN_FRAG_FN int ldsm_col_t(int lane) { return ((lane >> 3) & 1) * 8; }

}  // namespace hymo::gdn
