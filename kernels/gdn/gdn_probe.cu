// hymo_gdn_probe: the state pass's memory schedule without its arithmetic.
//
// The state pass (gdn_fwd_bf16.cuh, state_bf16_kernel) moves about 52 MB at the default shape in
// 23.5 us (ncu), 2.0-2.2 TB/s, where a stream reaches about 4 TB/s; its profile (run 204) waits on
// a chunk's tiles for half its stall samples, and deeper prefetches a CTA made it slower (runs 50,
// 119, 205). This program asks what the loads alone can do: each CTA walks its segment's chunks
// as the pass does (b and v tiles of C = 64 rows by cp.async, 16 bytes a thread, the next chunk in
// flight while the current one is read; warp 0 fetches the next chunk's gates into registers),
// and only sums what lands. Variants change one thing at a time: the chunks in flight, the
// segment length (the number of CTAs), the walk's direction, and the CTA's width (one head's
// 64-byte rows, or a pair of adjacent heads whose rows share a 128-byte line). The first line
// reads the same bytes as one flat stream (the reference of the "x flat" column). Times are CUDA-event means over launches that rotate through
// input sets larger than L2, so every launch reads from DRAM, as the benchmark's loop does.
// The last lines do the same for the adjoint pass's traffic (the backward's first pass, memory
// latency bound: o, v, c, dy, z in, dz and dO out), one head or a head pair a CTA, for the plain
// output pass's (b, c, v, z in, y out) and for the backward main kernel's (b, c, v, dO and the
// chunk states in, dv, db, dc out; both session 46, runs 224-226).
//
// Usage: hymo_gdn_probe [--shape B,T,H] [--cps N] [--iters N] [--json]
//   (S = D = 32: 64-byte rows; H must be even for the head-pair lines; --cps: the segment length
//   the library takes at that shape, default 8, the default shape's)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int C = 64;        // tokens a chunk
constexpr int ROW = 64;      // bytes of one head's row (S = D = 32, BF16)
// threads a CTA: the state pass's 2 C = 128 a head (4 warps; 8 for a head pair, as
// HYMO_GDN_STATE_PAIR's)
template <int W>
__host__ __device__ constexpr int threads_of() {
  return 128 * W / ROW;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "hymo_gdn_probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// PF: L2's prefetch size for the copy (.L2::128B, .L2::256B: L2 fetches that much around the
// 16 bytes asked for), 0 none (the kernels' load_rows_async)
template <int PF = 0>
__device__ __forceinline__ void cp16(uint32_t sa, const void* g, bool ok) {
  if constexpr (PF == 128)
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(g), "r"(ok ? 16 : 0));
  else if constexpr (PF == 256)
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(g), "r"(ok ? 16 : 0));
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(g), "r"(ok ? 16 : 0));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// One CTA per (b, unit, segment); a unit is one head (W = 64) or a head pair (W = 128, rows of
// 128 bytes at offset 2 * pair * 64). Buffers: AHEAD + 1, each a b tile and a v tile of C rows of
// W bytes padded by 16 (as the kernels pad theirs).
struct Args {
  const char* b;
  const char* v;
  const uint16_t* gate;
  int T, H, nseg, cps;
  size_t set_bytes, gate_set;  // offsets between input sets (bytes of b or v; gates)
  int set;                     // the set this launch reads
  bool skip_last, rev;
  unsigned* sink;
};

template <int W, int AHEAD, int PF>
__global__ void __launch_bounds__(threads_of<W>()) seg_walk(Args a) {
  constexpr int NTH = threads_of<W>();
  extern __shared__ __align__(16) unsigned char sm[];
  constexpr int LDB = W + 16, TILE = C * LDB, PIECES = C * W / 16;  // 16-byte pieces of a tile
  const int seg = blockIdx.x, units = a.H * ROW / W, bu = blockIdx.y, bb = bu / units, u = bu % units;
  if (a.skip_last && a.nseg > 1 && seg + 1 == a.nseg) return;  // the state pass's HYMO_GDN_STATE_LAST=0
  const int nch = (a.T + C - 1) / C, c0 = seg * a.cps, c1 = min(nch, c0 + a.cps);
  if (c0 >= c1) return;
  const size_t tstride = size_t(a.H) * ROW;  // bytes between tokens
  const char* bsrc = a.b + a.set * a.set_bytes + size_t(bb) * a.T * tstride + size_t(u) * W;
  const char* vsrc = a.v + a.set * a.set_bytes + size_t(bb) * a.T * tstride + size_t(u) * W;
  const uint16_t* gsrc = a.gate + a.set * a.gate_set + size_t(bb) * a.T * a.H + u * (W / ROW);
  const uint32_t s0 = static_cast<uint32_t>(__cvta_generic_to_shared(sm));
  const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
  auto chunk_at = [&](int k) { return a.rev ? c1 - 1 - k : c0 + k; };
  auto fetch = [&](int k) {  // the k-th chunk walked into buffer k % (AHEAD + 1)
    const int ch = chunk_at(k), n = min(C, a.T - ch * C);
    const uint32_t buf = s0 + (k % (AHEAD + 1)) * 2 * TILE;
    for (int i = tid; i < PIECES; i += NTH) {
      const int t = i / (W / 16), q = i % (W / 16);
      const size_t go = size_t(ch * C + (t < n ? t : 0)) * tstride + q * 16;
      cp16<PF>(buf + t * LDB + q * 16, bsrc + go, t < n);
      cp16<PF>(buf + TILE + t * LDB + q * 16, vsrc + go, t < n);
    }
    commit();
  };
  // warp 0: the gates of chunk k, two tokens a lane (one BF16 or a pair of them)
  uint32_t gr[2] = {0, 0};
  auto gate_fetch = [&](int k) {
    const int ch = chunk_at(k);
    for (int e = 0; e < 2; ++e) {
      const int t = ch * C + lane + 32 * e;
      if (t < a.T) {
        const uint16_t* p = gsrc + size_t(t) * a.H;
        gr[e] = W == ROW ? uint32_t(__ldg(p)) : __ldg(reinterpret_cast<const uint32_t*>(p));
      }
    }
  };
  const int n = c1 - c0;
  for (int k = 0; k < AHEAD; ++k) {
    if (k < n) fetch(k);
    else commit();
  }
  if (wid == 0) gate_fetch(0);
  uint32_t acc = 0;
  for (int k = 0; k < n; ++k) {
    if (wid == 0) {
      acc += gr[0] ^ gr[1];
      if (k + 1 < n) gate_fetch(k + 1);
    }
    wait_group<AHEAD - 1>();  // chunk k has landed (later chunks may be in flight)
    __syncthreads();          // ... for every thread, and everyone is done with chunk k - 1's buffer
    if (k + AHEAD < n) fetch(k + AHEAD);
    else commit();            // (an empty group keeps the count)
    const unsigned char* buf = sm + (k % (AHEAD + 1)) * 2 * TILE;
    for (int i = tid; i < PIECES; i += NTH) {
      const int t = i / (W / 16), q = i % (W / 16);
      const uint4 x = *reinterpret_cast<const uint4*>(buf + t * LDB + q * 16);
      const uint4 y = *reinterpret_cast<const uint4*>(buf + TILE + t * LDB + q * 16);
      acc += (x.x ^ y.x) + (x.y ^ y.y) + (x.z ^ y.z) + (x.w ^ y.w);
    }
  }
  if (acc == 0x9E3779B9u) a.sink[0] = acc;  // keeps the reads; (almost) never stores
}

// The same bytes (b, v and the gates of one set) as flat streams: 16 bytes a thread, 4 in flight.
__global__ void __launch_bounds__(256) flat_read(const uint4* b, const uint4* v, size_t n16,
                                                 const uint4* g, size_t g16, unsigned* sink) {
  uint32_t acc = 0;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n16; i += 2 * stride) {
    const uint4 x0 = __ldcg(b + i), y0 = __ldcg(v + i);
    uint4 x1{}, y1{};
    if (i + stride < n16) {
      x1 = __ldcg(b + i + stride);
      y1 = __ldcg(v + i + stride);
    }
    acc += (x0.x ^ y0.y) + (x1.z ^ y1.w) + (x0.w ^ y1.x);
  }
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < g16; i += stride) acc += __ldcg(g + i).x;
  if (acc == 0x9E3779B9u) sink[0] = acc;
}

// f(j, t, q) for each of this thread's PT 16-byte pieces j of a chunk's W-byte rows: row t, piece
// q of it (the pieces dealt over NTH threads)
template <int PT, int NTH, int W, class F>
__device__ __forceinline__ void each_piece(int tid, F f) {
#pragma unroll
  for (int j = 0; j < PT; ++j) {
    const int i = tid + j * NTH;
    f(j, i / (W / 16), i % (W / 16));
  }
}

// The adjoint, output and backward walks' skeleton: chunks c0 .. c1-1 of a segment (T tokens in
// all), each one's tiles fetched AHEAD chunks ahead into AHEAD + 1 buffers of BUF bytes at sm. For
// chunk ch of rows tokens: fill(buf, ch, rows) issues its copies into buf (a shared address),
// top(ch, rows) its loads into registers before the wait, then (after the wait for its copies, a
// barrier and the next chunk's fetch) body(buf, ch, rows) with buf the generic pointer of its
// buffer. REV: the chunks from the last to the first.
template <int AHEAD, int BUF, bool REV = false, class Fill, class Top, class Body>
__device__ __forceinline__ void walk_chunks(int c0, int c1, int T, unsigned char* sm, Fill fill, Top top, Body body) {
  const int n = c1 - c0;
  const uint32_t s0 = static_cast<uint32_t>(__cvta_generic_to_shared(sm));
  auto chunk = [&](int k) { return REV ? c1 - 1 - k : c0 + k; };  // the walk's k-th chunk
  auto rows = [&](int ch) { return min(C, T - ch * C); };
  auto fetch = [&](int k) {
    const int ch = chunk(k);
    fill(s0 + (k % (AHEAD + 1)) * BUF, ch, rows(ch));
    commit();
  };
  for (int k = 0; k < AHEAD; ++k) {
    if (k < n) fetch(k);
    else commit();
  }
  for (int k = 0; k < n; ++k) {
    const int ch = chunk(k), nn = rows(ch);
    top(ch, nn);
    wait_group<AHEAD - 1>();
    __syncthreads();
    if (k + AHEAD < n) fetch(k + AHEAD);
    else commit();
    body(static_cast<const unsigned char*>(sm + (k % (AHEAD + 1)) * BUF), ch, nn);
  }
}

// The adjoint pass's traffic (gdn_fwd_bf16.cuh, adj_bf16_kernel: about 265 MB at the default
// shape, 95 us under ncu): per chunk of a (b, unit, segment), walked forwards, the o tile (FP32,
// rows of 2 W bytes) and the v and c tiles (W bytes) by cp.async, AHEAD chunks ahead; dy and z
// (W bytes) loaded into registers at the chunk's top; then dz (W bytes) and dO (its BF16 high and
// low halves, 2 W bytes) stored from what landed. W = 64: one head (S = D = 32); 128: a pair.
struct AdjArgs {
  const char* in;  // one input set: o (2 t bytes), v, c, dy, z (t each), t = B T H 64
  char* out;       // dz (t), dO (2 t)
  size_t t;
  int T, H, nseg, cps;
  unsigned* sink;
};

// An adjoint or output walk's CTA: its segment's chunks [c0, c1) and the byte offset of its
// unit's first row (blockIdx.x the segment, blockIdx.y the (b, unit)); ts: bytes between tokens
struct WalkCta {
  int c0, c1;
  size_t ts, base;
};
// ... and the 16-byte pieces of a chunk's W-byte rows each of its NTH threads moves
template <int W, int NTH = threads_of<W>()>
__host__ __device__ constexpr int pieces_a_thread() {
  static_assert((C * W / 16) % NTH == 0, "whole pieces a thread");
  return C * W / 16 / NTH;
}
template <int W>
__device__ __forceinline__ WalkCta walk_cta(const AdjArgs& a) {
  const int seg = blockIdx.x, units = a.H * ROW / W, bu = blockIdx.y, bb = bu / units, u = bu % units;
  const int nch = (a.T + C - 1) / C, c0 = seg * a.cps;
  const size_t ts = size_t(a.H) * ROW;
  return {c0, min(nch, c0 + a.cps), ts, size_t(bb) * a.T * ts + size_t(u) * W};
}

template <int W, int AHEAD>
__global__ void __launch_bounds__(threads_of<W>()) adj_walk(AdjArgs a) {
  extern __shared__ __align__(16) unsigned char sm[];
  constexpr int NTH = threads_of<W>(), RO = 2 * W + 16, RV = W + 16;  // row strides (o; v, c)
  constexpr int BUF = C * (RO + 2 * RV), PT = pieces_a_thread<W>();
  const WalkCta wc = walk_cta<W>(a);
  const int c0 = wc.c0, c1 = wc.c1;
  const size_t ts = wc.ts, base = wc.base;  // bytes
  if (c0 >= c1) return;
  const char* o = a.in;
  const char* v = a.in + 2 * a.t;
  const char* c = a.in + 3 * a.t;
  const char* dy = a.in + 4 * a.t;
  const char* z = a.in + 5 * a.t;
  char* dz = a.out;
  char* dO = a.out + a.t;
  const int tid = threadIdx.x;
  auto fetch = [&](uint32_t buf, int ch, int n) {
    each_piece<PT, NTH, W>(tid, [&](int, int t, int q) {
      const int tt = ch * C + (t < n ? t : 0);
      const size_t g1 = base + size_t(tt) * ts + q * 16, g2 = 2 * (base + size_t(tt) * ts) + q * 32;
      cp16(buf + t * RO + q * 32, o + g2, t < n);
      cp16(buf + t * RO + q * 32 + 16, o + g2 + 16, t < n);
      cp16(buf + C * RO + t * RV + q * 16, v + g1, t < n);
      cp16(buf + C * RO + C * RV + t * RV + q * 16, c + g1, t < n);
    });
  };
  uint32_t acc = 0;
  uint4 ry[PT], rz[PT];  // the chunk's dy and z pieces
  auto top = [&](int ch, int nn) {
    each_piece<PT, NTH, W>(tid, [&](int j, int t, int q) {
      const size_t g1 = base + size_t(ch * C + (t < nn ? t : 0)) * ts + q * 16;
      ry[j] = __ldcg(reinterpret_cast<const uint4*>(dy + g1));
      rz[j] = __ldcg(reinterpret_cast<const uint4*>(z + g1));
    });
  };
  walk_chunks<AHEAD, BUF>(c0, c1, a.T, sm, fetch, top, [&](const unsigned char* buf, int ch, int nn) {
    each_piece<PT, NTH, W>(tid, [&](int j, int t, int q) {
      if (t >= nn) return;
      const uint4 o0 = *reinterpret_cast<const uint4*>(buf + t * RO + q * 32);
      const uint4 o1 = *reinterpret_cast<const uint4*>(buf + t * RO + q * 32 + 16);
      const uint4 x = *reinterpret_cast<const uint4*>(buf + C * RO + t * RV + q * 16);
      const uint4 y = *reinterpret_cast<const uint4*>(buf + C * RO + C * RV + t * RV + q * 16);
      const uint4 w1 = make_uint4(x.x ^ ry[j].x, x.y ^ rz[j].y, y.z ^ ry[j].z, y.w ^ rz[j].w);
      const uint4 w2 = make_uint4(o0.x ^ ry[j].y, o0.y, o0.z ^ rz[j].x, o0.w);
      const uint4 w3 = make_uint4(o1.x, o1.y ^ ry[j].w, o1.z, o1.w ^ rz[j].z);
      const size_t g1 = base + size_t(ch * C + t) * ts + q * 16, g2 = 2 * (base + size_t(ch * C + t) * ts) + q * 32;
      *reinterpret_cast<uint4*>(dz + g1) = w1;
      *reinterpret_cast<uint4*>(dO + g2) = w2;
      *reinterpret_cast<uint4*>(dO + g2 + 16) = w3;
      acc += w1.x;
    });
  });
  if (acc == 0x9E3779B9u) a.sink[1] = acc;
}

template <int W, int AHEAD>
constexpr int adj_smem_need() {
  return (AHEAD + 1) * C * (2 * W + 16 + 2 * (W + 16));
}

// The plain output pass's traffic (gdn_fwd_bf16.cuh, out_bf16_kernel without TRAIN: about 148 MB
// at the default shape, 80 us of the forward's 107 on the H200): per chunk of a (b, unit,
// segment), walked forwards, the b, c and v tiles (W bytes a row) by cp.async, AHEAD chunks ahead;
// z (W bytes) loaded into registers at the chunk's top; then y (W bytes) stored from what landed.
// The gates (2 bytes a token and head, 0.6% of the bytes) are left out. Its inputs are the adjoint
// block's: b, c, v, z at offsets 0, t, 2 t, 4 t of a set, y the first t of the outputs.
template <int W, int AHEAD, int PF = 0>
__global__ void __launch_bounds__(threads_of<W>()) out_walk(AdjArgs a) {
  extern __shared__ __align__(16) unsigned char sm[];
  constexpr int NTH = threads_of<W>(), RV = W + 16;  // the tiles' row stride
  constexpr int BUF = 3 * C * RV, PT = pieces_a_thread<W>();
  const WalkCta wc = walk_cta<W>(a);
  const int c0 = wc.c0, c1 = wc.c1;
  const size_t ts = wc.ts, base = wc.base;  // bytes
  if (c0 >= c1) return;
  const char* b = a.in;
  const char* c = a.in + a.t;
  const char* v = a.in + 2 * a.t;
  const char* z = a.in + 4 * a.t;
  char* y = a.out;
  const int tid = threadIdx.x;
  auto fetch = [&](uint32_t buf, int ch, int n) {
    each_piece<PT, NTH, W>(tid, [&](int, int t, int q) {
      const size_t g1 = base + size_t(ch * C + (t < n ? t : 0)) * ts + q * 16;
      cp16<PF>(buf + t * RV + q * 16, b + g1, t < n);
      cp16<PF>(buf + C * RV + t * RV + q * 16, c + g1, t < n);
      cp16<PF>(buf + 2 * C * RV + t * RV + q * 16, v + g1, t < n);
    });
  };
  uint32_t acc = 0;
  uint4 rz[PT];  // the chunk's z pieces
  auto top = [&](int ch, int nn) {
    each_piece<PT, NTH, W>(tid, [&](int j, int t, int q) {
      rz[j] = __ldcg(reinterpret_cast<const uint4*>(z + base + size_t(ch * C + (t < nn ? t : 0)) * ts + q * 16));
    });
  };
  walk_chunks<AHEAD, BUF>(c0, c1, a.T, sm, fetch, top, [&](const unsigned char* buf, int ch, int nn) {
    each_piece<PT, NTH, W>(tid, [&](int j, int t, int q) {
      if (t >= nn) return;
      const uint4 x = *reinterpret_cast<const uint4*>(buf + t * RV + q * 16);
      const uint4 w = *reinterpret_cast<const uint4*>(buf + C * RV + t * RV + q * 16);
      const uint4 e = *reinterpret_cast<const uint4*>(buf + 2 * C * RV + t * RV + q * 16);
      const uint4 o = make_uint4(x.x ^ rz[j].x, w.y ^ rz[j].y, e.z ^ rz[j].z, x.w ^ w.w ^ e.w ^ rz[j].w);
      *reinterpret_cast<uint4*>(y + base + size_t(ch * C + t) * ts + q * 16) = o;
      acc += o.x;
    });
  });
  if (acc == 0x9E3779B9u) a.sink[2] = acc;
}

template <int W, int AHEAD>
constexpr int out_smem_need() {
  return (AHEAD + 1) * 3 * C * (W + 16);
}

// The staged backward main kernel's traffic (gdn_bwd_bf16.cuh, bwd_bf16_kernel: 232 us under ncu
// on an H100 in run 223, 2 CTAs of 256 threads an SM, 114.5 KB each; about 265 MB by its bytes): per
// chunk of a (b, h, segment), walked from the last to the first, the b, c and v tiles (64-byte rows),
// dO (its BF16 high and low halves, 128-byte rows) and the chunk's entering state (h0buf: 4 KB, S
// rows of D high and low BF16 values) by cp.async, AHEAD chunks ahead; then dv, db and dc (64 bytes
// a token each) stored from what landed. The gate and dgate (2 bytes each a token) and the leaving
// adjoints (4 KB a segment) are left out. Its inputs are the adjoint block's: b, c, v at 0, t, 2 t,
// dO at 3 t (2 t), the chunk states at 5 t (t: 4 KB a chunk of 64 tokens is 64 bytes a token);
// dv, db, dc the outputs' 3 t. One head a CTA (ROW = 64), NTH threads.
template <int NTH, int AHEAD>
__global__ void __launch_bounds__(NTH) bwd_walk(AdjArgs a) {
  extern __shared__ __align__(16) unsigned char sm[];
  constexpr int RV = ROW + 16, RO = 2 * ROW + 16, HB = 4096;  // row strides (b, c, v; dO), h0's bytes
  constexpr int BUF = 3 * C * RV + C * RO + HB;
  constexpr int PT = pieces_a_thread<ROW, NTH>(), PTH = HB / 16 / NTH;  // pieces a thread: rows; h0
  static_assert(PTH * NTH * 16 == HB, "whole pieces of h0 a thread");
  const WalkCta wc = walk_cta<ROW>(a);
  const int c0 = wc.c0, c1 = wc.c1;
  const size_t ts = wc.ts, base = wc.base;  // bytes
  if (c0 >= c1) return;
  const int nch = (a.T + C - 1) / C;
  const char* b = a.in;
  const char* c = a.in + a.t;
  const char* v = a.in + 2 * a.t;
  const char* dO = a.in + 3 * a.t;
  const char* h0 = a.in + 5 * a.t + size_t(blockIdx.y) * nch * HB;  // this (b, h)'s chunk states
  char* dv = a.out;
  char* db = a.out + a.t;
  char* dc = a.out + 2 * a.t;
  const int tid = threadIdx.x;
  auto fetch = [&](uint32_t buf, int ch, int n) {
    each_piece<PT, NTH, ROW>(tid, [&](int, int t, int q) {
      const size_t tt = size_t(ch * C + (t < n ? t : 0));
      const size_t g1 = base + tt * ts + q * 16, g2 = 2 * (base + tt * ts) + q * 32;
      cp16(buf + t * RV + q * 16, b + g1, t < n);
      cp16(buf + C * RV + t * RV + q * 16, c + g1, t < n);
      cp16(buf + 2 * C * RV + t * RV + q * 16, v + g1, t < n);
      cp16(buf + 3 * C * RV + t * RO + q * 32, dO + g2, t < n);
      cp16(buf + 3 * C * RV + t * RO + q * 32 + 16, dO + g2 + 16, t < n);
    });
#pragma unroll
    for (int j = 0; j < PTH; ++j) {
      const int i = tid + j * NTH;
      cp16(buf + 3 * C * RV + C * RO + i * 16, h0 + size_t(ch) * HB + i * 16, true);
    }
  };
  uint32_t acc = 0;
  auto top = [](int, int) {};  // (nothing into registers)
  walk_chunks<AHEAD, BUF, true>(c0, c1, a.T, sm, fetch, top, [&](const unsigned char* buf, int ch, int nn) {
    const uint4 hs = *reinterpret_cast<const uint4*>(buf + 3 * C * RV + C * RO + (tid % (HB / 16)) * 16);
    each_piece<PT, NTH, ROW>(tid, [&](int, int t, int q) {
      if (t >= nn) return;
      const uint4 x = *reinterpret_cast<const uint4*>(buf + t * RV + q * 16);
      const uint4 w = *reinterpret_cast<const uint4*>(buf + C * RV + t * RV + q * 16);
      const uint4 e = *reinterpret_cast<const uint4*>(buf + 2 * C * RV + t * RV + q * 16);
      const uint4 d0 = *reinterpret_cast<const uint4*>(buf + 3 * C * RV + t * RO + q * 32);
      const uint4 d1 = *reinterpret_cast<const uint4*>(buf + 3 * C * RV + t * RO + q * 32 + 16);
      const size_t g1 = base + size_t(ch * C + t) * ts + q * 16;
      *reinterpret_cast<uint4*>(dv + g1) = make_uint4(x.x ^ d0.x, x.y ^ hs.y, x.z ^ d1.z, x.w);
      *reinterpret_cast<uint4*>(db + g1) = make_uint4(w.x ^ d0.y, w.y, w.z ^ d1.w ^ hs.z, w.w);
      *reinterpret_cast<uint4*>(dc + g1) = make_uint4(e.x, e.y ^ d0.z, e.z ^ hs.x, e.w ^ d1.x ^ hs.w);
      acc += x.x ^ e.w;
    });
  });
  if (acc == 0x9E3779B9u) a.sink[3] = acc;
}
template <int NTH, int AHEAD>
constexpr int bwd_smem_need() {
  return (AHEAD + 1) * (3 * C * (ROW + 16) + C * (2 * ROW + 16) + 4096);
}


// Dynamic shared memory: the buffers, and at least 26 KB so that at most 8 CTAs share an SM, as
// the state pass's 21.6 KB allow (the buffers alone would let 10; 2 chunks ahead take 30 KB, 7 an SM,
// as HYMO_GDN_STATE_AHEAD did).
template <int W, int AHEAD>
constexpr int smem_bytes() {
  return std::max((AHEAD + 1) * 2 * C * (W + 16), 26 * 1024);
}

template <int W, int AHEAD, int PF = 0>
void launch(const Args& a, int nunits, int B, cudaStream_t st) {
  dim3 grid(a.nseg, B * nunits);
  seg_walk<W, AHEAD, PF><<<grid, threads_of<W>(), smem_bytes<W, AHEAD>(), st>>>(a);
}

template <int W, int AHEAD, int PF = 0>
int resident() {
  constexpr int smem = smem_bytes<W, AHEAD>();
  check(cudaFuncSetAttribute(seg_walk<W, AHEAD, PF>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
        "cudaFuncSetAttribute");
  int n = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, seg_walk<W, AHEAD, PF>, threads_of<W>(), smem),
        "occupancy");
  return n;
}

using LaunchFn = void (*)(const Args&, int, int, cudaStream_t);

// A variant of the state pass's walk: how it differs, its launch and its CTAs an SM
struct Variant {
  const char* name;
  int W, ahead;  // row bytes (64: one head, 128: a head pair), chunks in flight
  int cps;       // segment length: 0 --cps (the state pass's: the library's rule is not linked
                 // here), -2 half of it, -1 twice
  int pf;        // the copies' L2 prefetch size (cp16)
  bool skip_last, rev;
  LaunchFn fn;
  int (*resident)();
};

bool parse_shape(const char* s, int& B, int& T, int& H) {
  return std::sscanf(s, "%d,%d,%d", &B, &T, &H) == 3 && B > 0 && T > 0 && H > 0;
}

}  // namespace

int main(int argc, char** argv) {
  int B = 4, T = 4096, H = 28, iters = 20, cps_state = 8;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string o = argv[i];
    if (o == "--json") {
      json = true;
    } else if (o == "--shape" && i + 1 < argc) {
      if (!parse_shape(argv[++i], B, T, H)) {
        std::fprintf(stderr, "hymo_gdn_probe: --shape expects B,T,H (positive), got \"%s\"\n", argv[i]);
        return 2;
      }
    } else if (o == "--iters" && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
      if (iters < 1) {
        std::fprintf(stderr, "hymo_gdn_probe: --iters expects a count >= 1, got \"%s\"\n", argv[i]);
        return 2;
      }
    } else if (o == "--cps" && i + 1 < argc) {
      cps_state = std::atoi(argv[++i]);
      if (cps_state < 1) {
        std::fprintf(stderr, "hymo_gdn_probe: --cps expects chunks a segment >= 1, got \"%s\"\n", argv[i]);
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "hymo_gdn_probe: unknown or incomplete argument \"%s\"\n"
                   "usage: hymo_gdn_probe [--shape B,T,H] [--iters N] [--cps N (the state pass's segment "
                   "length, default 8)] [--json]\n",
                   o.c_str());
      return 2;
    }
  }
  if (H % 2 != 0) {
    std::fprintf(stderr, "hymo_gdn_probe: H = %d: the head-pair variants need an even H\n", H);
    return 2;
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "hymo_gdn_probe: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");

  // input sets: b, v ([B][T][H][32] BF16) and the gates ([B][T][H] BF16), rotated so that the
  // sets together are at least four times L2
  const size_t tile_bytes = size_t(B) * T * H * ROW, gate_bytes = size_t(B) * T * H * 2;
  const size_t set_all = 2 * tile_bytes + gate_bytes;
  const int R = int(std::max<size_t>(2, (4 * size_t(prop.l2CacheSize)) / set_all + 1));
  const size_t gate_pad = (gate_bytes + 255) / 256 * 256;
  char *b = nullptr, *v = nullptr, *g = nullptr;
  unsigned* sink = nullptr;
  check(cudaMalloc(&b, tile_bytes * R), "cudaMalloc b");
  check(cudaMalloc(&v, tile_bytes * R), "cudaMalloc v");
  check(cudaMalloc(&g, gate_pad * R), "cudaMalloc gate");
  check(cudaMalloc(&sink, 16), "cudaMalloc sink");  // (sink[0..3]: the state, adjoint, output, backward walks)
  check(cudaMemset(b, 0x3c, tile_bytes * R), "memset");
  check(cudaMemset(v, 0x3d, tile_bytes * R), "memset");
  check(cudaMemset(g, 0x3e, gate_pad * R), "memset");
  const int nch = (T + C - 1) / C;
  if (cps_state > nch) cps_state = nch;

  const Variant variants[] = {
      {"state pass (1 chunk ahead, reverse walk, last segment skipped)", 64, 1, 0, 0, true, true, launch<64, 1>,
       resident<64, 1>},
      {"2 chunks ahead", 64, 2, 0, 0, true, true, launch<64, 2>, resident<64, 2>},
      {"3 chunks ahead", 64, 3, 0, 0, true, true, launch<64, 3>, resident<64, 3>},
      {"forward walk", 64, 1, 0, 0, true, false, launch<64, 1>, resident<64, 1>},
      {"last segment read too", 64, 1, 0, 0, false, true, launch<64, 1>, resident<64, 1>},
      {"half segments (2x the CTAs)", 64, 1, -2, 0, true, true, launch<64, 1>, resident<64, 1>},
      {"double segments (half the CTAs)", 64, 1, -1, 0, true, true, launch<64, 1>, resident<64, 1>},
      {"copies with L2::128B (L2 fetches whole lines)", 64, 1, 0, 128, true, true, launch<64, 1, 128>,
       resident<64, 1, 128>},
      {"copies with L2::256B", 64, 1, 0, 256, true, true, launch<64, 1, 256>, resident<64, 1, 256>},
      {"head pairs: 128-byte rows, 1 chunk ahead", 128, 1, 0, 0, true, true, launch<128, 1>, resident<128, 1>},
      {"head pairs, 2 chunks ahead", 128, 2, 0, 0, true, true, launch<128, 2>, resident<128, 2>},
  };

  cudaStream_t st;
  check(cudaStreamCreate(&st), "cudaStreamCreate");
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "event");
  check(cudaEventCreate(&e1), "event");
  // mean time of `iters` launches (each on the next input set), median of 5 such means
  auto time_us = [&](auto&& run) {
    for (int r = 0; r < R; ++r) run(r);  // warm-up
    std::vector<float> ms;
    for (int rep = 0; rep < 5; ++rep) {
      check(cudaEventRecord(e0, st), "record");
      for (int i = 0; i < iters; ++i) run(i % R);
      check(cudaEventRecord(e1, st), "record");
      check(cudaEventSynchronize(e1), "sync");
      float m = 0.f;
      check(cudaEventElapsedTime(&m, e0, e1), "elapsed");
      ms.push_back(m);
    }
    check(cudaGetLastError(), "launch");
    std::sort(ms.begin(), ms.end());
    return 1000.0 * ms[ms.size() / 2] / iters;
  };

  // the flat stream first: the reference the other lines are divided by
  const size_t n16 = tile_bytes / 16, g16 = gate_bytes / 16;
  const int flat_blocks = prop.multiProcessorCount * 8;
  const double flat_us = time_us([&](int r) {
    flat_read<<<flat_blocks, 256, 0, st>>>(reinterpret_cast<const uint4*>(b + r * tile_bytes),
                                            reinterpret_cast<const uint4*>(v + r * tile_bytes), n16,
                                            reinterpret_cast<const uint4*>(g + r * gate_pad), g16, sink);
  });
  const double flat_bytes = double(2 * tile_bytes + g16 * 16);
  if (!json)
    std::printf("%s, %d SMs, L2 %.0f MB; B=%d T=%d H=%d S=D=32, %d input sets of %.1f MB\n", prop.name,
                prop.multiProcessorCount, prop.l2CacheSize / 1e6, B, T, H, R, set_all / 1e6);
  auto report = [&](const char* name, int W, int ahead, int cps, int nseg, long ctas, int res, double us,
                    double bytes) {
    const double waves = double(ctas) / (double(res) * prop.multiProcessorCount);
    if (json)
      std::printf("{\"B\": %d, \"T\": %d, \"H\": %d, \"variant\": \"%s\", \"row_bytes\": %d, \"ahead\": %d, "
                  "\"cps\": %d, \"nseg\": %d, \"ctas\": %ld, \"ctas_per_sm\": %d, \"waves\": %.2f, "
                  "\"us\": %.2f, \"mb\": %.1f, \"tb_s\": %.3f, \"x_flat\": %.2f}\n",
                  B, T, H, name, W, ahead, cps, nseg, ctas, res, waves, us, bytes / 1e6, bytes / us / 1e6,
                  us / (flat_us * bytes / flat_bytes));
    else
      std::printf("%-64s row %3d B  ahead %d  cps %2d  %5ld CTAs  %d/SM  %.2f waves  %7.2f us  %5.1f MB  "
                  "%.2f TB/s  %.2fx flat\n",
                  name, W, ahead, cps, ctas, res, waves, us, bytes / 1e6, bytes / us / 1e6,
                  us / (flat_us * bytes / flat_bytes));
  };
  int flat_res = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&flat_res, flat_read, 256, 0), "occupancy");
  report("flat stream (b, v, gates)", 0, 0, 0, 0, flat_blocks, flat_res, flat_us, flat_bytes);

  for (const Variant& w : variants) {
    const int cps = w.cps == 0 ? cps_state : w.cps == -2 ? std::max(1, cps_state / 2) : 2 * cps_state;
    const int nseg = (nch + cps - 1) / cps, units = H * ROW / w.W;
    const LaunchFn fn = w.fn;
    const int res = w.resident();
    Args a{b, v, reinterpret_cast<const uint16_t*>(g), T, H, nseg, cps, tile_bytes, gate_pad / 2, 0,
           w.skip_last, w.rev, sink};
    const double us = time_us([&](int r) {
      a.set = r;
      fn(a, units, B, st);
    });
    // the bytes the working CTAs read (every token but the skipped last segment's): b and v rows
    // and the gates
    const bool skip = w.skip_last && nseg > 1;
    const long tokens = skip ? std::min(long(T), long(nseg - 1) * cps * C) : long(T);
    const double bytes = double(B) * H * double(tokens) * (2 * ROW + 2);
    const long ctas = long(nseg) * B * units - (skip ? long(B) * units : 0);
    report(w.name, w.W, w.ahead, cps, nseg, ctas, res, us, bytes);
  }
  check(cudaFree(b), "cudaFree");
  check(cudaFree(v), "cudaFree");
  check(cudaFree(g), "cudaFree");

  // The adjoint pass's traffic: two input sets (each 6 t, together more than four times L2 at the
  // default shape's t = 29 MB: at least 2), one output set (3 t), every segment walked forwards
  {
    const size_t t = tile_bytes;
    const int RA = int(std::max<size_t>(2, (4 * size_t(prop.l2CacheSize)) / (6 * t) + 1));
    char *in = nullptr, *out = nullptr;
    check(cudaMalloc(&in, 6 * t * RA), "cudaMalloc adjoint inputs");
    check(cudaMalloc(&out, 3 * t), "cudaMalloc adjoint outputs");
    check(cudaMemset(in, 0x3c, 6 * t * RA), "memset");
    struct AdjVariant {
      const char* name;
      int W, ahead, min_smem;  // min_smem: the dynamic shared memory at least (CTAs an SM)
      void (*k)(AdjArgs);
      int need;      // the buffers' shared memory
      int nth = 0;   // threads a CTA (0: the state pass's, 128 a head)
    };
    // 46 KB: 4 CTAs an SM, as the pass (40,832 bytes, held at 4 by its registers); 0: the
    // buffers' own 38,912 bytes, 5 an SM (HYMO_GDN_ADJ_MINB=5)
    const AdjVariant av[] = {
        {"adjoint pass's traffic (1 chunk ahead, 4 CTAs an SM)", 64, 1, 46 * 1024, adj_walk<64, 1>,
         adj_smem_need<64, 1>()},
        {"adjoint, 5 CTAs an SM", 64, 1, 0, adj_walk<64, 1>, adj_smem_need<64, 1>()},
        {"adjoint, 2 chunks ahead", 64, 2, 0, adj_walk<64, 2>, adj_smem_need<64, 2>()},
        {"adjoint, head pairs", 128, 1, 0, adj_walk<128, 1>, adj_smem_need<128, 1>()},
    };
    // one variant's line: row_bytes, the bytes a token and head moves
    auto run = [&](const AdjVariant& w, int row_bytes) {
      const int cps = cps_state, nseg = (nch + cps - 1) / cps, units = H * ROW / w.W;
      void (*const k)(AdjArgs) = w.k;
      const int smem = std::max(w.need, w.min_smem), nth = w.nth ? w.nth : 128 * w.W / ROW;
      check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "cudaFuncSetAttribute");
      int res = 0;
      check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&res, k, nth, smem), "occupancy");
      AdjArgs a{in, out, t, T, H, nseg, cps, sink};
      const dim3 grid(nseg, B * units);
      const double us = time_us([&](int r) {
        a.in = in + (r % RA) * 6 * t;
        k<<<grid, nth, smem, st>>>(a);
      });
      report(w.name, w.W, w.ahead, cps, nseg, long(nseg) * B * units, res, us, double(B) * H * T * row_bytes);
    };
    // read o (128 bytes a token and head), v, c, dy, z (64 each); written dz (64), dO (128)
    for (const AdjVariant& w : av) run(w, 2 * ROW + 4 * ROW + ROW + 2 * ROW);
    // The plain output pass's traffic from the same sets: 56,848 bytes of shared memory, 4 CTAs
    // an SM as the pass; then as many CTAs as the buffers allow, and head pairs
    const AdjVariant ov[] = {
        {"output pass's traffic (1 chunk ahead, 4 CTAs an SM)", 64, 1, 56848, out_walk<64, 1>,
         out_smem_need<64, 1>()},
        {"output, CTAs as the buffers allow", 64, 1, 0, out_walk<64, 1>, out_smem_need<64, 1>()},
        {"output, 2 chunks ahead, 4 CTAs an SM", 64, 2, 56848, out_walk<64, 2>, out_smem_need<64, 2>()},
        {"output, head pairs", 128, 1, 0, out_walk<128, 1>, out_smem_need<128, 1>()},
        // the pass fetches its tiles by the TMA with 256-byte L2 promotion (HYMO_GDN_TMA bit 2):
        // the copies' L2 prefetch is the nearer model of it
        {"output, copies with L2::256B, 4 CTAs an SM", 64, 1, 56848, out_walk<64, 1, 256>,
         out_smem_need<64, 1>()},
        {"output, copies with L2::128B, 4 CTAs an SM", 64, 1, 56848, out_walk<64, 1, 128>,
         out_smem_need<64, 1>()},
        {"output, head pairs, L2::256B", 128, 1, 0, out_walk<128, 1, 256>, out_smem_need<128, 1>()},
    };
    // read b, c, v, z (64 bytes a token and head each); written y (64)
    for (const AdjVariant& w : ov) run(w, 5 * ROW);
    // The backward main kernel's traffic (bwd_walk): 256 threads and 114,000 bytes, 2 CTAs an SM
    // as the kernel (114.5 KB); 1 chunk ahead as its tiles (TMA) are; then 2 ahead at the same
    // occupancy. (The chunk states are 4 KB a chunk of 64 tokens: T a multiple of 64 only.)
    const AdjVariant bv[] = {
        {"backward main's traffic (1 chunk ahead, 2 CTAs an SM)", 64, 1, 114000, bwd_walk<256, 1>,
         bwd_smem_need<256, 1>(), 256},
        {"backward main, 2 chunks ahead, 2 CTAs an SM", 64, 2, 114000, bwd_walk<256, 2>, bwd_smem_need<256, 2>(),
         256},
        {"backward main, CTAs as the buffers allow", 64, 1, 0, bwd_walk<256, 1>, bwd_smem_need<256, 1>(), 256},
    };
    // read b, c, v (64 bytes a token and head each), dO (128), the chunk states (64); written dv,
    // db, dc (64 each)
    if (T % C == 0)
      for (const AdjVariant& w : bv) run(w, 3 * ROW + 2 * ROW + ROW + 3 * ROW);
    else
      std::fprintf(stderr, "backward main's traffic: skipped (T = %d is not a multiple of %d)\n", T, C);
    check(cudaFree(in), "cudaFree");
    check(cudaFree(out), "cudaFree");
  }
  check(cudaFree(sink), "cudaFree");
  return 0;
}
