// Launch sequences of the GDN kernels for one (dtype, S, D, fused) variant.
#pragma once
#include <algorithm>
#include <cstdio>
#include "gdn.cuh"
#include "gdn_bwd_bf16.cuh"
#include "gdn_split.cuh"

namespace hymo::gdn::dev {

template <int S, int D> constexpr int chunk_of() { return (S <= 32 && D <= 32) ? 64 : 32; }

// Dynamic shared memory above 48 KB needs an opt-in; the carveout preference asks for
// the largest shared-memory split, so that as many CTAs as the bytes allow fit an SM.
template <class K>
inline cudaError_t set_smem(K kernel, size_t bytes) {
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       int(cudaSharedmemCarveoutMaxShared));
  if (e != cudaSuccess || bytes <= 48 * 1024) return e;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
}

#define HYMO_GDN_TRY(x)                  \
  do {                                   \
    cudaError_t _e = (x);                \
    if (_e != cudaSuccess) return _e;    \
  } while (0)

// Launches kernel k with arguments args on stream st; `follows`: k comes after another
// kernel of the same call, and with HYMO_GDN_PDL it is launched as a programmatic
// dependent of that kernel (see pdl_enter in gdn.cuh).
template <typename... KArgs, typename... Args>
cudaError_t launch(void (*k)(KArgs...), dim3 grid, int threads, size_t smem, cudaStream_t st,
                   bool follows, Args... args) {
#if HYMO_GDN_PDL
  if (follows) {
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = st;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, k, args...);
  }
#else
  (void)follows;
#endif
  k<<<grid, threads, smem, st>>>(args...);
  return cudaGetLastError();
}

// The most (b, h) pairs a segment grid takes: 65535 (gridDim.y's limit), or fewer under the test
// hook gdn_set_grid_slice (gdn.cu).
int grid_slice();
// HYMO_GDN_STATE_PAIR, or the hook gdn_set_state_pair (gdn.cu): the state pass over head pairs
bool state_pair_on();
// HYMO_GDN_ADJ_PAIR, or the hook gdn_set_adj_pair (gdn.cu): the adjoint pass over head pairs
bool adj_pair_on();

// Launches kernel k over a (segment, (b, h)) grid (gridx columns instead of the
// segments when given); gridDim.y is at most 65535, so more (b, h) pairs go in slices
// that start at p.bh0 (each slice after the first follows the one before). extra: the kernel's
// parameters after p (HYMO_GDN_TMA's tile maps).
template <typename K, typename... X>
cudaError_t launch_bh(K k, KParams p, int threads, size_t smem, cudaStream_t st, bool follows,
                      int gridx = 0, const X&... extra) {
  const int slice = grid_slice();
  const int BH = p.B * p.H;
  for (int bh0 = 0; bh0 < BH; bh0 += slice) {
    p.bh0 = bh0;
    const int nbh = std::min(slice, BH - bh0);
    const dim3 grid = gridx > 0 ? dim3(gridx, nbh) : dim3(p.NSEG, nbh);
    HYMO_GDN_TRY(launch(k, grid, threads, smem, st, follows || bh0 > 0, p, extra...));
  }
  return cudaSuccess;
}

// ... over head pairs (HYMO_GDN_STATE_PAIR's state pass and HYMO_GDN_ADJ_PAIR's adjoint pass, p.H
// even): blockIdx.y + p.bh0 a pair of heads; gdn_set_grid_slice's slices (in (b, h) pairs) halved
// to head pairs
template <class K>
cudaError_t launch_pairs(K k, KParams p, int threads, size_t smem, cudaStream_t st, bool follows = false) {
  const int slice = std::max(1, grid_slice() / 2);
  const int NP = p.B * p.H / 2;
  for (int bp0 = 0; bp0 < NP; bp0 += slice) {
    p.bh0 = bp0;
    const dim3 grid(p.NSEG, std::min(slice, NP - bp0));
    HYMO_GDN_TRY(launch(k, grid, threads, smem, st, follows || bp0 > 0, p));
  }
  return cudaSuccess;
}

// The BF16 forward passes with staged operands (gdn_fwd_bf16.cuh) serve S, D <= 64, and
// where S or D = 128 the split forward (gdn_split.cuh) runs them on blocks of the state; the
// FP32 test variant and the backward where S or D = 128 use the generic kernels.
constexpr bool staged_variant(bool bf16, int S, int D) { return bf16 && S <= 64 && D <= 64; }
template <typename Tin, int S, int D>
constexpr bool staged_fwd() { return staged_variant(sizeof(Tin) == 2, S, D); }

// The split path (S or D = 128 in BF16; gdn_split.cuh): NS x NV blocks of S2 x D2 a head, in
// chunks of C tokens, the kernels' head map HM.
template <int S, int D>
struct SplitOf {
  static constexpr int NS = split_ns(S), NV = split_nv(D), S2 = S / NS, D2 = D / NV, C = chunk_of<S2, D2>();
  static_assert(C == chunk_of<S, D>(), "the blocks' chunks are the generic kernels' (one layout)");
  using HM = HeadMap<NS, NV>;
};

// ... and the kernels' view of p.
template <int S, int D>
KParams split_params(const KParams& p) {
  KParams q = p;
  q.H = p.H * SplitOf<S, D>::NS * SplitOf<S, D>::NV;
  q.segstate = p.sp_state;
  q.seggsum = p.sp_gsum;
  q.dObuf = p.sp_o;
  return q;
}

#if HYMO_GDN_TMA
// HYMO_GDN_TMA_L2: the maps' L2 promotion (cuda.h's CUtensorMapL2promotion: 0 none, 1 64 B, 2
// 128 B, the default, 3 256 B; run 203: 3 measured as 2, within the noise; run 208: 0 and 1
// forward + backward +0.3..+0.4%)
#ifndef HYMO_GDN_TMA_L2
#define HYMO_GDN_TMA_L2 2
#endif
// HYMO_GDN_TMA (gdn.cuh): the map of a BF16 (f32: FP32) tensor [B][T][W] (W = heads x width) whose boxes are
// `box` columns by C tokens (one batch row); columns past W and tokens past T read as zeros
// (the entering states [B H NC][S][2 D] are such a tensor too: S rows, one box a tile).
// cuTensorMapEncodeTiled comes from the driver through the runtime (no libcuda link).
inline cudaError_t encode_tile_map(CUtensorMap* m, const void* base, int B, int T, int W, int box, int C,
                                   bool f32 = false) {
  using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static Encode encode = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      f = nullptr;
    return reinterpret_cast<Encode>(f);
  }();
  if (!encode) {
    std::fprintf(stderr, "hymo gdn: the driver has no cuTensorMapEncodeTiled (the TMA tile fetches need it;"
                         " build with -DHYMO_GDN_TMA=0 for the cp.async ones)\n");
    return cudaErrorSymbolNotFound;
  }
  const cuuint64_t dims[3] = {cuuint64_t(W), cuuint64_t(T), cuuint64_t(B)};
  const cuuint64_t es = f32 ? 4 : 2;
  const cuuint64_t strides[2] = {cuuint64_t(W) * es, cuuint64_t(W) * T * es};  // bytes, dims 1 and 2
  const cuuint32_t boxd[3] = {cuuint32_t(box), cuuint32_t(C), 1u};
  const cuuint32_t estr[3] = {1u, 1u, 1u};
  const CUresult r = encode(m, f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(base), dims, strides, boxd,
                            estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                            CUtensorMapL2promotion(HYMO_GDN_TMA_L2), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr,
                 "hymo gdn: cuTensorMapEncodeTiled failed (CUresult %d) for a [%d][%d][%d] %s tensor at %p, boxes of"
                 " %d x %d (the TMA needs a 16-byte aligned base and rows of a multiple of 16 bytes)\n",
                 int(r), B, T, W, f32 ? "FP32" : "BF16", base, box, C);
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}
// the b, c and v maps of p's heads (HM: the split path's blocks of them), boxes of LS and LD
// columns by C tokens
template <int S, int D, class HM>
cudaError_t encode_bcv(TileMaps& tm, const KParams& p, int LS, int LD, int C) {
  HYMO_GDN_TRY(encode_tile_map(&tm.b, p.b, p.B, p.T, HM::HS(p.H) * S, LS, C));
  HYMO_GDN_TRY(encode_tile_map(&tm.c, p.c, p.B, p.T, HM::HS(p.H) * S, LS, C));
  return encode_tile_map(&tm.v, p.v, p.B, p.T, HM::HD(p.H) * D, LD, C);
}
#endif

// The output pass of the staged BF16 forward (TRAIN: the training pass) over p's heads.
template <int S, int D, int C, bool FUSED, bool TRAIN, class HM>
cudaError_t run_out_pass(const KParams& p, cudaStream_t st, bool follows = true) {
  using PF = PlanF<S, D, C, TRAIN>;
  auto k = out_bf16_kernel<S, D, C, FUSED, TRAIN, HM>;
  HYMO_GDN_TRY(set_smem(k, PF::bytes_out));
#if HYMO_GDN_TMA & 2
  if constexpr (!PF::TMA) {
    return launch_bh(k, p, PF::NTHO, PF::bytes_out, st, follows, 0, TileMaps{});  // (unused)
  } else {
    TileMaps tm;
    HYMO_GDN_TRY((encode_bcv<S, D, HM>(tm, p, PF::LS, PF::LD, C)));
    return launch_bh(k, p, PF::NTHO, PF::bytes_out, st, follows, 0, tm);
  }
#else
  return launch_bh(k, p, PF::NTHO, PF::bytes_out, st, follows);
#endif
}

// The adjoint pass (the staged backward's first) over p's heads.
template <int S, int D, int C, bool FUSED, class HM>
cudaError_t run_adj_pass(const KParams& p, cudaStream_t st, bool follows) {
  // HYMO_GDN_ADJ_PAIR (gdn.cuh): two adjacent heads a CTA where H is even
  if constexpr (adj_pair_fits(S, D) && std::is_same_v<HM, HeadMap<>>) {
    if (p.H % 2 == 0 && adj_pair_on()) {
      using P2 = PlanA<S, D, C, 2>;
      auto a2 = adj_bf16_kernel<S, D, C, FUSED, HM, true>;
      HYMO_GDN_TRY(set_smem(a2, P2::bytes));
      return launch_pairs(a2, p, 2 * P2::NTH, P2::bytes, st, follows);
    }
  }
  using PA = PlanA<S, D, C>;
  auto a = adj_bf16_kernel<S, D, C, FUSED, HM>;
  HYMO_GDN_TRY(set_smem(a, PA::bytes));
#if HYMO_GDN_TMA & 4
  TileMaps tm{};
  if constexpr (adj_tma<HM>()) {
    HYMO_GDN_TRY((encode_bcv<S, D, HM>(tm, p, PA::LS, PA::LD, C)));
    if constexpr (FUSED)  // (the o tile: adj_bf16_kernel's LO)
      HYMO_GDN_TRY(encode_tile_map(&tm.o, p.dObuf, p.B, p.T, HM::HD(p.H) * D, PA::FD, C, true));
  }
  return launch_bh(a, p, PA::NTH, PA::bytes, st, follows, 0, tm);
#else
  return launch_bh(a, p, PA::NTH, PA::bytes, st, follows);
#endif
}

// The staged BF16 forward passes (S, D <= 64) over p's heads: the state pass, the segment scan
// (local -> entering states) and the output pass; train: the training pass, which also leaves o
// in FP32 (in dObuf) and the per-chunk entering states (h0buf) for the backward. HM: the split
// path's blocks of the caller's heads (p is then split_params' view).
template <int S, int D, bool FUSED, class HM = HeadMap<>>
cudaError_t run_fwd_staged(const KParams& p, bool train, cudaStream_t st) {
  constexpr int C = chunk_of<S, D>();
  // HYMO_GDN_PK2: the plain forward's state pass keeps the keys as BF16 only (the training
  // forward's entering states, and so o, must stay FP32-accurate); it runs the grid's order, so
  // only unsplit layouts (HYMO_GDN_TAIL: a plain forward split on request takes the other)
  const bool pk = !train && pk2_at(S) && HYMO_GDN_PK2_STATE && p.nlong == p.NSEG;
  // HYMO_GDN_STATE_PAIR (gdn.cuh): two adjacent heads a CTA where H is even
  bool paired = false;
  if constexpr (state_pair_fits(S, D) && std::is_same_v<HM, HeadMap<>>) {
    if (p.H % 2 == 0 && state_pair_on()) {
      using PF = PlanF<S, D, C>;
      auto k = pk ? state_bf16_kernel<S, D, C, FUSED, HM, true, true>
                  : state_bf16_kernel<S, D, C, FUSED, HM, false, true>;
      HYMO_GDN_TRY(set_smem(k, PF::bytes_state2));
      HYMO_GDN_TRY(launch_pairs(k, p, 2 * PF::NTH, PF::bytes_state2, st));
      paired = true;
    }
  }
  if (!paired) {
    using PF = PlanF<S, D, C>;
    auto k = pk ? state_bf16_kernel<S, D, C, FUSED, HM, true> : state_bf16_kernel<S, D, C, FUSED, HM, false>;
    HYMO_GDN_TRY(set_smem(k, PF::bytes_state));
#if HYMO_GDN_TMA & 8
    TileMaps tm{};
    if constexpr (PF::TMA_S) HYMO_GDN_TRY((encode_bcv<S, D, HM>(tm, p, PF::LS, PF::LD, C)));
    HYMO_GDN_TRY(launch_bh(k, p, PF::NTH, PF::bytes_state, st, false, 0, tm));
#else
    HYMO_GDN_TRY(launch_bh(k, p, PF::NTH, PF::bytes_state, st, false));
#endif
  }
  // HYMO_GDN_FWD_PDL (gdn.cuh): the plain forward's links, one bit each
  const bool pdl_scan = train || (HYMO_GDN_FWD_PDL & 1), pdl_out = train || (HYMO_GDN_FWD_PDL & 2);
  if (seg_scan_fwd_in(S, D, train, HM::split))
    HYMO_GDN_TRY(launch_bh(seg_scan_kernel<S, D, false, HM>, p, 128, 0, st, pdl_scan, (S * D + 127) / 128));
  return train ? run_out_pass<S, D, C, FUSED, true, HM>(p, st) : run_out_pass<S, D, C, FUSED, false, HM>(p, st, pdl_out);
}

// The split forward: the staged passes on the blocks (their parts of o; train: also the blocks'
// entering states in h0buf), then the parts' sum and the epilogue (split_out_kernel; not in the
// backward's recomputation, p.out null).
template <int S, int D, bool FUSED>
cudaError_t run_fwd_split(const KParams& p, bool train, cudaStream_t st) {
  using SP = SplitOf<S, D>;
  HYMO_GDN_TRY((run_fwd_staged<SP::S2, SP::D2, FUSED, typename SP::HM>(split_params<S, D>(p), train, st)));
  if (!p.out) return cudaSuccess;
  constexpr int RPB = 256 / (D / 4);
  const size_t rows = size_t(p.B) * p.T * p.H;
  return launch(split_out_kernel<D, SP::NS, SP::NV, FUSED>, dim3(unsigned((rows + RPB - 1) / RPB)), 256, 0, st, true, p);
}

// The generic kernels' (the FP32 test variant's) state pass.
template <typename Tin, int S, int D, bool FUSED>
cudaError_t run_states(const KParams& p, cudaStream_t st) {
  constexpr int C = chunk_of<S, D>();
  using P = Plan<Tin, S, D, C>;
  auto k1 = seg_fwd_kernel<Tin, S, D, C, FUSED, MODE_STATE>;
  HYMO_GDN_TRY(set_smem(k1, P::bytes_state));
  return launch_bh(k1, p, P::NTH, P::bytes_state, st, false);
}

// train: the staged variants also leave o (FP32, in dObuf) and the per-chunk entering
// states (h0buf) for the backward; the generic kernels recompute them there.
template <typename Tin, int S, int D, bool FUSED>
cudaError_t run_fwd(const KParams& p, bool train, cudaStream_t st) {
  if constexpr (split_variant(sizeof(Tin) == 2, S, D)) {
    return run_fwd_split<S, D, FUSED>(p, train, st);
  } else if constexpr (staged_fwd<Tin, S, D>()) {
    return run_fwd_staged<S, D, FUSED>(p, train, st);
  } else {
    constexpr int C = chunk_of<S, D>();
    using P = Plan<Tin, S, D, C>;
    HYMO_GDN_TRY((run_states<Tin, S, D, FUSED>(p, st)));
    auto k3 = seg_fwd_kernel<Tin, S, D, C, FUSED, MODE_OUT>;
    HYMO_GDN_TRY(set_smem(k3, P::bytes_out));
    return launch_bh(k3, p, P::NTH, P::bytes_out, st, true);
  }
}

// The split backward (after the split training forward, or recomputing it): the epilogue's
// backward on whole rows (split_dout_kernel: dO into p.dObuf), then per block the staged adjoint
// pass and the generic main kernel without the epilogue (their parts of dv, dc, db and dgate in
// FP32), the parts' sums (in the main kernel's last CTAs, HYMO_GDN_SPLIT_SUMS; or
// split_grad_kernel), the parameter reduction over the blocks.
template <int S, int D, bool FUSED>
cudaError_t run_bwd_split(const KParams& p, bool recompute, cudaStream_t st) {
  using SP = SplitOf<S, D>;
  constexpr int S2 = SP::S2, D2 = SP::D2, C = SP::C;
  using HM = typename SP::HM;
  if (recompute) {  // the training forward without its output
    KParams r = p;
    r.out = nullptr;
    HYMO_GDN_TRY((run_fwd_split<S, D, FUSED>(r, true, st)));
  }
  HYMO_GDN_TRY(launch_bh(split_dout_kernel<D, SP::NS, SP::NV, C, FUSED>, p, 256, 0, st, recompute));
  KParams q = split_params<S, D>(p);
  q.dObuf = p.dObuf;  // dO, the caller's heads (read as v's view)
  q.dv = p.sp_o;      // the blocks' parts (o's are dead)
  q.dc = p.sp_dc;
  q.db = p.sp_db;
  q.dgate = p.sp_dg;
  q.sum_dv = p.dv;  // HYMO_GDN_SPLIT_SUMS: the caller's, where the main kernel sums the parts
  q.sum_dc = p.dc;
  q.sum_db = p.db;
  q.sum_dg = p.dgate;
  HYMO_GDN_TRY((run_adj_pass<S2, D2, C, FUSED, HM>(q, st, true)));
  using P = Plan<bf16, S2, D2, C>;
  auto b3 = seg_bwd_kernel<bf16, S2, D2, C, FUSED, HM>;
  HYMO_GDN_TRY(set_smem(b3, P::bytes_bwd));
  HYMO_GDN_TRY(launch_bh(b3, q, seg_bwd_threads<bf16, C>(), P::bytes_bwd, st, true));
  if constexpr (!HYMO_GDN_SPLIT_SUMS) {
    const size_t n = size_t(p.B) * p.T * p.H * (D / 4);
    const int blocks = int(std::min<size_t>((n + 255) / 256, 132 * 16));
    HYMO_GDN_TRY(launch(split_grad_kernel<S, D, SP::NS, SP::NV>, dim3(blocks), 256, 0, st, true, p));
  }
  const int nout = p.H * S + 2 * p.H + D;
  return launch(param_grad_kernel<FUSED>, dim3(nout), 128, 0, st, true, p, S, D, SP::NS, SP::NV);
}

template <typename Tin, int S, int D, bool FUSED>
cudaError_t run_bwd_whole(const KParams& p, bool recompute, cudaStream_t st) {
  constexpr int C = chunk_of<S, D>();
  using P = Plan<Tin, S, D, C>;
  if constexpr (staged_fwd<Tin, S, D>()) {
    if (recompute) {  // the training forward without its output
      KParams q = p;
      q.out = nullptr;
      HYMO_GDN_TRY((run_fwd<Tin, S, D, FUSED>(q, true, st)));
    }
    HYMO_GDN_TRY((run_adj_pass<S, D, C, FUSED, HeadMap<>>(p, st, recompute)));
  } else {
    if (recompute) HYMO_GDN_TRY((run_states<Tin, S, D, FUSED>(p, st)));
    auto b1 = seg_fwd_kernel<Tin, S, D, C, FUSED, MODE_BPREP>;
    HYMO_GDN_TRY(set_smem(b1, P::bytes_bprep));
    HYMO_GDN_TRY(launch_bh(b1, p, P::NTH, P::bytes_bprep, st, recompute));
  }
  if constexpr (staged_fwd<Tin, S, D>() && staged_bwd(S, D)) {
    if constexpr (seg_scan_bwd(S, D))  // local adjoints -> the adjoints leaving each segment
      HYMO_GDN_TRY(launch_bh(seg_scan_kernel<S, D, true>, p, 128, 0, st, true, (S * D + 127) / 128));
    using PB = PlanB<S, D, C>;
    auto b3 = bwd_bf16_kernel<S, D, C, FUSED>;
    HYMO_GDN_TRY(set_smem(b3, PB::bytes));
#if HYMO_GDN_TMA & 1
    TileMaps tm;
    HYMO_GDN_TRY((encode_bcv<S, D, HeadMap<>>(tm, p, PB::LS, PB::LD, C)));
    HYMO_GDN_TRY(encode_tile_map(&tm.o, p.dObuf, p.B, p.T, p.H * 2 * D, PB::LD, C));  // (BF16 high, low)
    HYMO_GDN_TRY(encode_tile_map(&tm.h0, p.h0buf, p.B * p.H * p.NC, S, 2 * D, PB::LD, S));
    HYMO_GDN_TRY(launch_bh(b3, p, PB::NTH, PB::bytes, st, true, 0, tm));
#else
    HYMO_GDN_TRY(launch_bh(b3, p, PB::NTH, PB::bytes, st, true));
#endif
  } else {
    auto b3 = seg_bwd_kernel<Tin, S, D, C, FUSED>;
    HYMO_GDN_TRY(set_smem(b3, P::bytes_bwd));
    HYMO_GDN_TRY(launch_bh(b3, p, seg_bwd_threads<Tin, C>(), P::bytes_bwd, st, true));
  }
  const int nout = p.H * S + 2 * p.H + D;
  return launch(param_grad_kernel<FUSED>, dim3(nout), 128, 0, st, true, p, S, D, 1, 1);
}

template <typename Tin, int S, int D, bool FUSED>
cudaError_t run_bwd(const KParams& p, bool recompute, cudaStream_t st) {
  if constexpr (split_variant(sizeof(Tin) == 2, S, D))
    return run_bwd_split<S, D, FUSED>(p, recompute, st);
  else
    return run_bwd_whole<Tin, S, D, FUSED>(p, recompute, st);
}

// One entry point per (dtype, S): dispatches D and fused (instantiated in gdn_inst_*.cu).
// what: 0 forward, 2 training forward, 1 backward.
template <typename Tin, int S>
cudaError_t run_variant(int D, bool fused, int what, bool recompute, const KParams& p,
                        cudaStream_t st) {
#define HYMO_GDN_CASE(DD)                                                                   \
  case DD:                                                                                  \
    if (fused)                                                                              \
      return what == 1 ? run_bwd<Tin, S, DD, true>(p, recompute, st) : run_fwd<Tin, S, DD, true>(p, what == 2, st); \
    else                                                                                    \
      return what == 1 ? run_bwd<Tin, S, DD, false>(p, recompute, st) : run_fwd<Tin, S, DD, false>(p, what == 2, st);
  if constexpr (sizeof(Tin) == 4) {
    // FP32 test variant: D == S only
    if (D != S) return cudaErrorInvalidValue;
    switch (D) { HYMO_GDN_CASE(S) }
  } else {
    switch (D) {
      HYMO_GDN_CASE(16)
      HYMO_GDN_CASE(32)
      HYMO_GDN_CASE(64)
      HYMO_GDN_CASE(128)
    }
  }
#undef HYMO_GDN_CASE
  return cudaErrorInvalidValue;
}

}  // namespace hymo::gdn::dev
