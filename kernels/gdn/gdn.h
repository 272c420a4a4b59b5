// hymo GDN recurrence kernels (spec 2.1): host launchers.
//
// Plain C++ header (no CUDA-only syntax): a runtime includes it and calls the
// launchers with device pointers, shapes and a stream. Every launcher checks
// the shape once and returns cudaErrorInvalidValue (with a message from
// gdn_last_error()) for unsupported shapes; kernels check nothing.
//
// Layouts (row-major, innermost last), all tensors contiguous:
//   v, z, out, dout, dv, dz: [B,T,H,D]      b, c, db, dc: [B,T,H,S]
//   gate, dgate: [B,T,H]  (gate_raw when fused, g = sigmoid(.) when not)
//   dt_bias [H], A_log [H,S], D_skip [H], w_y [D]: FP32 (and their grads FP32)
// io dtype: BF16 (production) or FP32 (the test variant; no TF32 anywhere).
// v, b, c, z, out, dout, dv, db, dc, dz and the workspace must be 16-byte aligned
// (checked). No output may overlap an input or another output (not checked): a call's
// kernels write outputs while others still read inputs (since session 57 the forward's first
// output rows can be written while its state pass reads v, b, c and the gate).
// D and S must each be one of 16, 32, 64, 128; any T >= 1, any B*H >= 1.
//
// fused = 1: g = sigmoid(gate_raw + dt_bias), A = -exp(A_log),
//            y = RMSNorm_D(o + D_skip v; w_y, eps) * silu(z)   (out = y)
// fused = 0: gate holds g, out = o (z, dt_bias, D_skip, w_y unused).
#pragma once
#include <cstddef>

#include <cuda_runtime_api.h>

namespace hymo::gdn {

enum class DType : int { BF16 = 0, F32 = 1 };

struct Shape {
  int B = 0, T = 0, H = 0, D = 0, S = 0;
  DType dtype = DType::BF16;
  bool fused = true;
  float eps = 1e-6f;
};

struct FwdArgs {
  const void* v = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  const void* gate = nullptr;
  const void* z = nullptr;
  const float* dt_bias = nullptr;
  const float* A_log = nullptr;
  const float* D_skip = nullptr;
  const float* w_y = nullptr;
  void* out = nullptr;
};

struct BwdArgs {
  FwdArgs in;              // the forward's inputs (in.out unused)
  const void* dout = nullptr;
  void* dv = nullptr;
  void* db = nullptr;
  void* dc = nullptr;
  void* dgate = nullptr;   // d gate_raw (fused) or d g
  void* dz = nullptr;      // fused only
  float* ddt_bias = nullptr;  // fused only   [H]
  float* dA_log = nullptr;    //              [H,S]
  float* dD_skip = nullptr;   // fused only   [H]
  float* dw_y = nullptr;      // fused only   [D]
};

// Checks a shape; returns "" when supported, else the reason.
const char* gdn_check_shape(const Shape& s);
// Last error message of a launcher in this thread ("" when none).
const char* gdn_last_error();

// Device workspace (bytes) the forward and backward need; one workspace
// serves both. A forward with save_for_backward leaves what the backward needs in
// it (the per-segment states and, in the BF16 variants, o in FP32 (S or D = 128: its
// blocks' parts) and the per-chunk states, computed FP32-accurately: a slower forward that
// spares the backward recomputing o); the backward reuses it when states_from_forward is
// true (same inputs, untouched workspace, a forward with save_for_backward just
// before; without such a forward on that workspace the backward returns
// cudaErrorInvalidValue and says so; so it does where the segment settings below,
// gdn_set_chunks_per_segment, gdn_set_segments or gdn_set_tail_segments, changed the forward's
// segments in between), else recomputes it. The BF16 backward consumes what it reuses (it
// writes dO over o), so a second backward needs another such forward first (or
// states_from_forward = false). The size is the current device's: the automatic segment
// lengths depend on its SM count (HYMO_GDN_CPS_FILL), so size a workspace on the device that uses it.
size_t gdn_workspace_bytes(const Shape& s);

cudaError_t gdn_forward(const Shape& s, const FwdArgs& a, void* workspace,
                        cudaStream_t stream, bool save_for_backward = false);
cudaError_t gdn_backward(const Shape& s, const BwdArgs& a, void* workspace,
                         bool states_from_forward, cudaStream_t stream);

// Tuning: chunks per segment (0 = automatic), or segments per sequence (0 = from the
// chunks per segment; more than the sequence's chunks: one chunk each; else ceil(chunks /
// nseg) chunks a segment, the last one shorter). Each changes gdn_workspace_bytes.
void gdn_set_chunks_per_segment(int cps);
void gdn_set_segments(int nseg);
// Tuning (HYMO_GDN_TAIL, docs/kernels/gdn.md; on by default, a build with -DHYMO_GDN_TAIL=0 ignores
// it): the last n segments of each (b, h), as the two calls above set them, split in halves (where
// their length is even), the CTAs of every (b, h)'s long segments dispatched before any short
// one's; -1 (the default): the layout's rule (0 to 3 where S <= 32, D = 32 and the segment count
// is automatic; 0 or 1 at D = S = 128 in BF16; else none). In BF16 the plain forward (no
// save_for_backward) keeps its segments unsplit, unless plain_too. Changes gdn_segments (the
// split count) and gdn_workspace_bytes. gdn_tail_segments_built: whether this build has the
// switch.
void gdn_set_tail_segments(int n, bool plain_too = false);
bool gdn_tail_segments_built();
// Test hook: the kernels over (segment, (b, h)) grids launch in slices of at most n (b, h) pairs
// (0 = the grid's limit, 65535), as more pairs than that launch anyway; lets a small case cover
// the slices' offsets.
void gdn_set_grid_slice(int n);
// Tuning (HYMO_GDN_STATE_PAIR, docs/kernels/gdn.md): the BF16 forward's state pass walks two
// adjacent heads a CTA (1) or one (0); -1 (the default): the build's choice. Two apply where S <=
// 32, D = 32 and H is even; the results are the same bits either way.
void gdn_set_state_pair(int mode);
// ... whether it takes two heads now (where a shape allows), and whether this build's state pass
// can take them on shape s (BF16, S <= 32, D = 32, H even, and the switches it builds on).
bool gdn_state_pair();
bool gdn_state_pair_fits(const Shape& s);
// Tuning (HYMO_GDN_ADJ_PAIR, docs/kernels/gdn.md): the BF16 backward's adjoint pass (its first)
// walks two adjacent heads a CTA (1) or one (0); -1 (the default): the build's choice. Two apply
// where S <= 32, D = 32 and H is even; the results are the same bits either way. As above, whether
// it takes two now, and whether this build's adjoint pass can take them on shape s.
void gdn_set_adj_pair(int mode);
bool gdn_adj_pair();
bool gdn_adj_pair_fits(const Shape& s);
// The segments a (b, h) that calls on this shape use now (after the overrides above; 0 for a
// shape gdn_check_shape rejects).
int gdn_segments(const Shape& s);

// Profiling (a build with -DHYMO_GDN_CLOCKS=1 in its CUDA flags; docs/kernels/gdn.md, "Clock
// stamps"): while armed with a device buffer of gdn_clocks_bytes() bytes (16-byte aligned), the
// staged BF16 passes' CTAs write time stamps into it (the layout: gdn.cuh's ClkWord; read by
// scripts/gdn-clocks.py); null disarms. Calls enqueued while armed carry the pointer. In a
// build without the switch, arming returns cudaErrorNotSupported (gdn_last_error() names the
// flag); disarming always succeeds.
size_t gdn_clocks_bytes();
cudaError_t gdn_clocks_arm(void* buf);

// Testing (hymo_gdn_test): the FP32 o ([B,T,H,D], before the epilogue) that a forward with
// save_for_backward leaves in the workspace for the backward (the staged BF16 kernels: S, D <=
// 64), or nullptr where the shape's kernels keep none (they recompute o in the backward). Valid
// from that forward until the next backward on the workspace, which overwrites it with dO.
const float* gdn_saved_o(const Shape& s, const void* workspace);

// Kernel launches each call makes (for the benchmark's report).
int gdn_forward_launches(const Shape& s, bool save_for_backward = false);
int gdn_backward_launches(const Shape& s, bool states_from_forward);
// The build's segment scans (HYMO_GDN_SEG_SCAN, docs/kernels/gdn.md): bit 1 the forward's, bit 2
// the staged backward's (the default, 3: both).
int gdn_segment_scans();
// The build's HYMO_GDN_OUT_EARLY (gdn.cuh; bit 16 with bit 1: the plain forward without its
// segment scan off the split path where S, D <= 32, one launch fewer).
int gdn_out_early();
// HYMO_GDN_SPLIT_SUMS of this build (1: the split path's backward, S or D = 128, sums its blocks'
// parts of dv, dc, db and dgate in its main kernel, one launch fewer; 0: split_grad_kernel after
// it)
int gdn_split_sums();

}  // namespace hymo::gdn
