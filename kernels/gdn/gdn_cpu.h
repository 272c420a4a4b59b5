// The CPU twin of the GDN recurrence (spec 2.1): FP64, plain C++17.
//
// Layouts (row-major, innermost last): v, z, y, o: [B,T,H,D]; b, c: [B,T,H,S];
// gate (gate_raw when fused, g when not): [B,T,H]; dt_bias [H]; A_log [H,S];
// D_skip [H]; w_y [D].
//
// fused = true computes   g = sigmoid(gate_raw + dt_bias), A = -exp(A_log),
//   h_t = diag(exp(g_t A)) h_{t-1} + b_t v_t^T,  o_t = c_t^T h_t,
//   y = RMSNorm_D(o + D_skip v; w_y, eps) * silu(z)
// fused = false takes g directly and returns o (no epilogue; z, dt_bias,
// D_skip, w_y unused).
#pragma once
#include <vector>

namespace hymo::gdn {

struct CpuShape {
  int B = 1, T = 1, H = 1, D = 16, S = 16;
  bool fused = true;
  double eps = 1e-6;
};

struct CpuInputs {
  std::vector<double> v, b, c, gate, z, dt_bias, A_log, D_skip, w_y;
};

struct CpuGrads {
  std::vector<double> v, b, c, gate, z, dt_bias, A_log, D_skip, w_y;
  // For the three per-head sums over tokens (dt_bias, A_log, D_skip): the sum of the
  // magnitudes of the per-token terms they add up (same shape; a token's terms: dgate_raw_t,
  // g_t dl_t[s] A_s and dyp_t . v_t). mag / |grad| is the sum's
  // condition number: an evaluation whose terms are accurate to e relative can be off by
  // e * mag, however small the sum itself (docs/kernels/gdn.md, "Parity").
  std::vector<double> dt_bias_mag, A_log_mag, D_skip_mag;
};

// Naive sequential recurrence (the definition).
void cpu_forward(const CpuShape& s, const CpuInputs& in, std::vector<double>& out);
// Chunked evaluation (intra-chunk masked products + carried state), same function.
void cpu_forward_chunked(const CpuShape& s, const CpuInputs& in, int chunk,
                         std::vector<double>& out);
// Reverse mode of the sequential recurrence; dout has the shape of out.
void cpu_backward(const CpuShape& s, const CpuInputs& in, const std::vector<double>& dout,
                  CpuGrads& g);

}  // namespace hymo::gdn
