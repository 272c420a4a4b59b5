// RUN: hymo-opt %s -split-input-file -verify-diagnostics
// One case per verifier message; each function is named after its label.

func.func @embedding_c1(%t: tensor<256xf32>, %i: tensor<2x8xi32>) {
  // expected-error @+1 {{embedding_c1: expected table of rank 2, got rank 1}}
  %0 = hymo.embedding %t, %i : (tensor<256xf32>, tensor<2x8xi32>) -> tensor<2x8x64xf32>
  return
}

// -----

func.func @embedding_c2(%t: tensor<256x64xf32>, %i: tensor<2x8xi32>) {
  // expected-error @+1 {{embedding_c2: expected result shape [2,8,64], got [2,8,32]}}
  %0 = hymo.embedding %t, %i : (tensor<256x64xf32>, tensor<2x8xi32>) -> tensor<2x8x32xf32>
  return
}

// -----

func.func @embedding_c3(%t: tensor<256x64xf32>, %i: tensor<2x8xi32>) {
  // expected-error @+1 {{embedding_c3: expected element type 'f32' everywhere, got 'f64'}}
  %0 = hymo.embedding %t, %i : (tensor<256x64xf32>, tensor<2x8xi32>) -> tensor<2x8x64xf64>
  return
}

// -----

func.func @linear_c1(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{linear_c1: expected weight of rank 2, got rank 1}}
  %0 = hymo.linear %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @linear_c2(%x: tensor<4x8xf32>, %w: tensor<16x4xf32>) {
  // expected-error @+1 {{linear_c2: expected input last dim 4 (weight is (out, in) = [16,4]), got [4,8]}}
  %0 = hymo.linear %x, %w : (tensor<4x8xf32>, tensor<16x4xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @linear_c3(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) {
  // expected-error @+1 {{linear_c3: expected result shape [4,16], got [4,8]}}
  %0 = hymo.linear %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @linear_c4(%x: tensor<4x8xf32>, %w: tensor<16x8xbf16>) {
  // expected-error @+1 {{linear_c4: expected element type 'f32' everywhere, got 'bf16'}}
  %0 = hymo.linear %x, %w : (tensor<4x8xf32>, tensor<16x8xbf16>) -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_c1(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) {
  // expected-error @+1 {{matmul_c1: expected operands of one rank >= 2 with equal batch dims, got [2,4,8] and [3,8,4]}}
  %0 = hymo.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x4xf32>) -> tensor<2x4x4xf32>
  return
}

// -----

func.func @matmul_c2(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{matmul_c2: expected equal contraction dims, got 8 and 4}}
  %0 = hymo.matmul %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_c3(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{matmul_c3: expected result shape [4,4], got [8,8]}}
  %0 = hymo.matmul %a, %b {transpose_b = true} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @matmul_c4(%a: tensor<4x8xf32>, %b: tensor<8x4xf64>) {
  // expected-error @+1 {{matmul_c4: expected element type 'f32' everywhere, got 'f64'}}
  %0 = hymo.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf64>) -> tensor<4x4xf32>
  return
}

// -----

func.func @grouped_linear_c1(%x: tensor<4x6x64xf32>, %w: tensor<3x32x64xf32>) {
  // expected-error @+1 {{grouped_linear_c1: expected x [E,C,K] and w [E,N,K], got [4,6,64] and [3,32,64]}}
  %0 = hymo.grouped_linear %x, %w : (tensor<4x6x64xf32>, tensor<3x32x64xf32>) -> tensor<4x6x32xf32>
  return
}

// -----

func.func @grouped_linear_c2(%x: tensor<4x6x64xf32>, %w: tensor<4x32x64xf32>) {
  // expected-error @+1 {{grouped_linear_c2: expected result shape [4,6,32], got [4,6,64]}}
  %0 = hymo.grouped_linear %x, %w : (tensor<4x6x64xf32>, tensor<4x32x64xf32>) -> tensor<4x6x64xf32>
  return
}

// -----

func.func @grouped_linear_c3(%x: tensor<4x6x64xf32>, %w: tensor<4x32x64xbf16>) {
  // expected-error @+1 {{grouped_linear_c3: expected element type 'f32' everywhere, got 'bf16'}}
  %0 = hymo.grouped_linear %x, %w : (tensor<4x6x64xf32>, tensor<4x32x64xbf16>) -> tensor<4x6x32xf32>
  return
}

// -----

func.func @reduce_c1(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{reduce_c1: expected sorted unique dims in [0, 2), got [1,0]}}
  %0 = hymo.reduce_sum %x {dims = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<f32>
  return
}

// -----

func.func @reduce_c2(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{reduce_c2: expected result shape [4], got [8]}}
  %0 = hymo.reduce_mean %x {dims = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @reduce_c3(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{reduce_c3: expected element type 'f32' everywhere, got 'f64'}}
  %0 = hymo.reduce_max %x {dims = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf64>
  return
}

// -----

func.func @reshape_c1(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{reshape_c1: expected 32 elements of 'f32', got 30 of 'f32'}}
  %0 = hymo.reshape %x : (tensor<4x8xf32>) -> tensor<30xf32>
  return
}

// -----

func.func @transpose_c1(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{transpose_c1: expected a permutation of 0..1, got [0,0]}}
  %0 = hymo.transpose %x {permutation = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @transpose_c2(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{transpose_c2: expected result shape [8,4], got [4,8]}}
  %0 = hymo.transpose %x {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_c1(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{slice_c1: expected 0 <= start <= limit <= [4,8], got start [0,4] limit [4,9]}}
  %0 = hymo.slice %x {start = array<i64: 0, 4>, limit = array<i64: 4, 9>} : (tensor<4x8xf32>) -> tensor<4x5xf32>
  return
}

// -----

func.func @slice_c2(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{slice_c2: expected result shape [4,4], got [4,8]}}
  %0 = hymo.slice %x {start = array<i64: 0, 4>, limit = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @pad_c1(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{pad_c1: expected one non-negative low and high per dim of [4,8], got low [0,-1] high [0,0]}}
  %0 = hymo.pad %x {low = array<i64: 0, -1>, high = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x7xf32>
  return
}

// -----

func.func @pad_c2(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{pad_c2: expected result shape [4,10], got [4,9]}}
  %0 = hymo.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<4x9xf32>
  return
}

// -----

func.func @concat_c1_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{concat_c1: expected dim in [0, 2), got 2}}
  %0 = hymo.concat %x, %x {dim = 2 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @concat_c1_rank(%x: tensor<4x8xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{concat_c1: expected operands of rank 2 and element type 'f32', got 'tensor<4xf32>'}}
  %0 = hymo.concat %x, %y {dim = 0 : i64} : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @concat_c1_empty() {
  // expected-error @+1 {{concat_c1: expected at least one operand, got 0}}
  %0 = hymo.concat {dim = 0 : i64} : () -> tensor<4xf32>
  return
}

// -----

func.func @concat_c2(%x: tensor<4x8xf32>, %y: tensor<4x6xf32>) {
  // expected-error @+1 {{concat_c2: expected operands to agree off dim 0, got [4,8] and [4,6]}}
  %0 = hymo.concat %x, %y {dim = 0 : i64} : (tensor<4x8xf32>, tensor<4x6xf32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @concat_c3(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{concat_c3: expected result shape [4,16], got [4,8]}}
  %0 = hymo.concat %x, %x {dim = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @broadcast_c1(%x: tensor<8xf32>) {
  // expected-error @+1 {{broadcast_c1: expected 1 increasing dims in [0, 2), got [2]}}
  %0 = hymo.broadcast_in_dim %x {dims = array<i64: 2>} : (tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @broadcast_c2(%x: tensor<8xf32>) {
  // expected-error @+1 {{broadcast_c2: expected operand dim 0 to be 1 or 4, got 8}}
  %0 = hymo.broadcast_in_dim %x {dims = array<i64: 0>} : (tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @broadcast_c3(%x: tensor<8xf32>) {
  // expected-error @+1 {{broadcast_c3: expected element type 'f32' everywhere, got 'f64'}}
  %0 = hymo.broadcast_in_dim %x {dims = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf64>
  return
}

// -----

func.func @rms_norm_c1(%x: tensor<4x8xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{rms_norm_c1: expected weight shape [8], got [4]}}
  %0 = hymo.rms_norm %x, %w {eps = 1.0e-6 : f64} : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @rms_norm_c2(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{rms_norm_c2: expected eps > 0, got 0}}
  %0 = hymo.rms_norm %x, %w {eps = 0.0 : f64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @rms_norm_c3(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{rms_norm_c3: expected result type 'tensor<4x8xf32>', got 'tensor<4x8xf64>'}}
  %0 = hymo.rms_norm %x, %w {eps = 1.0e-6 : f64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf64>
  return
}

// -----

func.func @rope_c1(%x: tensor<2x16x2x7xf32>) {
  // expected-error @+1 {{rope_c1: expected [B,T,H,R] with even R, got [2,16,2,7]}}
  %0 = hymo.rope %x {theta = 10000.0 : f64} : tensor<2x16x2x7xf32>
  return
}

// -----

func.func @rope_c2(%x: tensor<2x16x2x8xf32>) {
  // expected-error @+1 {{rope_c2: expected theta > 0, got -1}}
  %0 = hymo.rope %x {theta = -1.0 : f64} : tensor<2x16x2x8xf32>
  return
}

// -----

func.func @causal_attention_c1(%q: tensor<2x16x2x24xf32>, %k: tensor<2x16x2x16xf32>, %v: tensor<2x16x2x16xf32>) {
  // expected-error @+1 {{causal_attention_c1: expected q, k [B,T,H,Dk] of one shape and v [B,T,H,Dv], got [2,16,2,24], [2,16,2,16], [2,16,2,16]}}
  %0 = hymo.causal_attention %q, %k, %v {scale = 0.2 : f64} : (tensor<2x16x2x24xf32>, tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>) -> tensor<2x16x2x16xf32>
  return
}

// -----

func.func @causal_attention_c2(%q: tensor<2x16x2x24xf32>, %v: tensor<2x16x2x16xf32>) {
  // expected-error @+1 {{causal_attention_c2: expected result shape [2,16,2,16], got [2,16,2,24]}}
  %0 = hymo.causal_attention %q, %q, %v {scale = 0.2 : f64} : (tensor<2x16x2x24xf32>, tensor<2x16x2x24xf32>, tensor<2x16x2x16xf32>) -> tensor<2x16x2x24xf32>
  return
}

// -----

func.func @causal_attention_c3(%q: tensor<2x16x2x24xf32>, %v: tensor<2x16x2x16xf32>) {
  // expected-error @+1 {{causal_attention_c3: expected scale > 0, got 0}}
  %0 = hymo.causal_attention %q, %q, %v {scale = 0.0 : f64} : (tensor<2x16x2x24xf32>, tensor<2x16x2x24xf32>, tensor<2x16x2x16xf32>) -> tensor<2x16x2x16xf32>
  return
}

// -----

func.func @causal_attention_c4(%q: tensor<2x16x2x24xf32>, %v: tensor<2x16x2x16xbf16>) {
  // expected-error @+1 {{causal_attention_c4: expected element type 'f32' everywhere, got 'bf16'}}
  %0 = hymo.causal_attention %q, %q, %v {scale = 0.2 : f64} : (tensor<2x16x2x24xf32>, tensor<2x16x2x24xf32>, tensor<2x16x2x16xbf16>) -> tensor<2x16x2x16xf32>
  return
}

// -----

func.func @gdn_c1_v(%v: tensor<2x16x64xf32>, %b: tensor<2x16x4x8xf32>, %g: tensor<2x16x4xf32>, %a: tensor<4x8xf32>) {
  // expected-error @+1 {{gdn_c1: expected v of rank 4, got rank 3}}
  %0 = hymo.gdn_recurrence %v, %b, %b, %g, %a {chunk_size = 16 : i64} : (tensor<2x16x64xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4xf32>, tensor<4x8xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @gdn_c1_b(%v: tensor<2x16x4x16xf32>, %b: tensor<2x16x2x8xf32>, %g: tensor<2x16x4xf32>, %a: tensor<4x8xf32>) {
  // expected-error @+1 {{gdn_c1: expected b [2,16,4,S], got [2,16,2,8]}}
  %0 = hymo.gdn_recurrence %v, %b, %b, %g, %a {chunk_size = 16 : i64} : (tensor<2x16x4x16xf32>, tensor<2x16x2x8xf32>, tensor<2x16x2x8xf32>, tensor<2x16x4xf32>, tensor<4x8xf32>) -> tensor<2x16x4x16xf32>
  return
}

// -----

func.func @gdn_c1_a(%v: tensor<2x16x4x16xf32>, %b: tensor<2x16x4x8xf32>, %g: tensor<2x16x4xf32>, %a: tensor<4x16xf32>) {
  // expected-error @+1 {{gdn_c1: expected a shape [4,8], got [4,16]}}
  %0 = hymo.gdn_recurrence %v, %b, %b, %g, %a {chunk_size = 16 : i64} : (tensor<2x16x4x16xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4xf32>, tensor<4x16xf32>) -> tensor<2x16x4x16xf32>
  return
}

// -----

func.func @gdn_c2(%v: tensor<2x16x4x16xf32>, %b: tensor<2x16x4x8xf32>, %g: tensor<2x16x4xf32>, %a: tensor<4x8xf32>) {
  // expected-error @+1 {{gdn_c2: expected chunk_size > 0, got 0}}
  %0 = hymo.gdn_recurrence %v, %b, %b, %g, %a {chunk_size = 0 : i64} : (tensor<2x16x4x16xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4xf32>, tensor<4x8xf32>) -> tensor<2x16x4x16xf32>
  return
}

// -----

func.func @gdn_c3(%v: tensor<2x16x4x16xf32>, %b: tensor<2x16x4x8xf32>, %g: tensor<2x16x4xf32>, %a: tensor<4x8xf32>) {
  // expected-error @+1 {{gdn_c3: expected result type 'tensor<2x16x4x16xf32>', got 'tensor<2x16x4x16xbf16>'}}
  %0 = hymo.gdn_recurrence %v, %b, %b, %g, %a {chunk_size = 16 : i64} : (tensor<2x16x4x16xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4xf32>, tensor<4x8xf32>) -> tensor<2x16x4x16xbf16>
  return
}

// -----

func.func @moe_route_c1(%p: tensor<32x4xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{moe_route_c1: expected bias shape [4], got [8]}}
  %0, %1 = hymo.moe_route %p, %b {top_k = 2 : i64} : (tensor<32x4xf32>, tensor<8xf32>) -> (tensor<32x2xi32>, tensor<32x2xf32>)
  return
}

// -----

func.func @moe_route_c2(%p: tensor<32x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{moe_route_c2: expected 1 <= top_k <= 4, got 5}}
  %0, %1 = hymo.moe_route %p, %b {top_k = 5 : i64} : (tensor<32x4xf32>, tensor<4xf32>) -> (tensor<32x5xi32>, tensor<32x5xf32>)
  return
}

// -----

func.func @moe_route_c3(%p: tensor<32x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{moe_route_c3: expected indices shape [32,2], got [32,3]}}
  %0, %1 = hymo.moe_route %p, %b {top_k = 2 : i64} : (tensor<32x4xf32>, tensor<4xf32>) -> (tensor<32x3xi32>, tensor<32x2xf32>)
  return
}

// -----

func.func @moe_dispatch_c1(%x: tensor<32x64xf32>, %i: tensor<16x2xi32>) {
  // expected-error @+1 {{moe_dispatch_c1: expected indices for 32 tokens, got 16}}
  %0, %1 = hymo.moe_dispatch %x, %i {num_experts = 4 : i64, capacity = 24 : i64} : (tensor<32x64xf32>, tensor<16x2xi32>) -> (tensor<4x24x64xf32>, tensor<16x2xi32>)
  return
}

// -----

func.func @moe_dispatch_c2(%x: tensor<32x64xf32>, %i: tensor<32x2xi32>) {
  // expected-error @+1 {{moe_dispatch_c2: expected num_experts >= 1 and capacity >= 1, got 4 and 0}}
  %0, %1 = hymo.moe_dispatch %x, %i {num_experts = 4 : i64, capacity = 0 : i64} : (tensor<32x64xf32>, tensor<32x2xi32>) -> (tensor<4x0x64xf32>, tensor<32x2xi32>)
  return
}

// -----

func.func @moe_dispatch_c3(%x: tensor<32x64xf32>, %i: tensor<32x2xi32>) {
  // expected-error @+1 {{moe_dispatch_c3: expected expert_inputs shape [4,24,64], got [4,16,64]}}
  %0, %1 = hymo.moe_dispatch %x, %i {num_experts = 4 : i64, capacity = 24 : i64} : (tensor<32x64xf32>, tensor<32x2xi32>) -> (tensor<4x16x64xf32>, tensor<32x2xi32>)
  return
}

// -----

func.func @moe_combine_c1(%y: tensor<4x24x64xf32>, %s: tensor<32x2xi32>, %w: tensor<32x3xf32>) {
  // expected-error @+1 {{moe_combine_c1: expected weights shape [32,2], got [32,3]}}
  %0 = hymo.moe_combine %y, %s, %w : (tensor<4x24x64xf32>, tensor<32x2xi32>, tensor<32x3xf32>) -> tensor<32x64xf32>
  return
}

// -----

func.func @moe_combine_c2(%y: tensor<4x24x64xf32>, %s: tensor<32x2xi32>, %w: tensor<32x2xf32>) {
  // expected-error @+1 {{moe_combine_c2: expected result shape [32,64], got [32,32]}}
  %0 = hymo.moe_combine %y, %s, %w : (tensor<4x24x64xf32>, tensor<32x2xi32>, tensor<32x2xf32>) -> tensor<32x32xf32>
  return
}

// -----

func.func @moe_combine_c3(%y: tensor<4x24x64xf32>, %s: tensor<32x2xi32>, %w: tensor<32x2xf64>) {
  // expected-error @+1 {{moe_combine_c3: expected element type 'f32' everywhere, got 'f64'}}
  %0 = hymo.moe_combine %y, %s, %w : (tensor<4x24x64xf32>, tensor<32x2xi32>, tensor<32x2xf64>) -> tensor<32x64xf32>
  return
}

// -----

func.func @moe_count_c1(%i: tensor<32x2xi32>) {
  // expected-error @+1 {{moe_count_c1: expected result shape [4], got [8]}}
  %0 = hymo.moe_count %i {num_experts = 4 : i64} : (tensor<32x2xi32>) -> tensor<8xf32>
  return
}

// -----

func.func @cross_entropy_c1(%l: tensor<30x256xf32>, %t: tensor<31xi32>) {
  // expected-error @+1 {{cross_entropy_c1: expected targets shape [30], got [31]}}
  %0 = hymo.cross_entropy %l, %t : (tensor<30x256xf32>, tensor<31xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_c2(%l: tensor<30x256xf32>, %t: tensor<30xi32>) {
  // expected-error @+1 {{cross_entropy_c2: expected result shape [], got [1]}}
  %0 = hymo.cross_entropy %l, %t : (tensor<30x256xf32>, tensor<30xi32>) -> tensor<1xf32>
  return
}

// -----

func.func @ods_dynamic_shape(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{must be statically shaped tensor}}
  %0 = hymo.exp %x : tensor<?x8xf32>
  return
}

// -----

func.func @ods_int_operand(%x: tensor<4xi32>) {
  // expected-error @+1 {{must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type values}}
  %0 = hymo.exp %x : tensor<4xi32>
  return
}

// -----

func.func @ods_fp16(%x: tensor<4xf16>) {
  // expected-error @+1 {{must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type values}}
  %0 = hymo.sigmoid %x : tensor<4xf16>
  return
}

// -----

func.func @ods_same_type(%x: tensor<4xf32>, %y: tensor<4xf64>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "hymo.add"(%x, %y) : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

func.func @fused_c1_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{fused_c1: expected at least one result}}
  "hymo.fused_elementwise"(%x) {program = "neg %0", outputs = array<i64>} : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @fused_c1_types(%x: tensor<4xf32>) {
  // expected-error @+1 {{fused_c1: expected every result of type 'tensor<4xf32>', got 'tensor<8xf32>'}}
  %0:2 = hymo.fused_elementwise %x {program = "neg %0; exp %1", outputs = array<i64: 1, 2>} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<8xf32>)
  return
}

// -----

func.func @fused_c1_input(%x: tensor<4xf32>, %y: tensor<2xf32>) {
  // expected-error @+1 {{fused_c1: expected inputs of type 'tensor<4xf32>', its scalar or a prefix of its shape, got 'tensor<2xf32>'}}
  %0 = hymo.fused_elementwise %x, %y {program = "add %0 %1", outputs = array<i64: 2>} : (tensor<4xf32>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @fused_c2_op(%x: tensor<4xf32>) {
  // expected-error @+1 {{fused_c2: expected an elementwise op name, got 'tanh'}}
  %0 = hymo.fused_elementwise %x {program = "tanh %0", outputs = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @fused_c2_arity(%x: tensor<4xf32>) {
  // expected-error @+1 {{fused_c2: expected 2 operands for add, got 1}}
  %0 = hymo.fused_elementwise %x {program = "add %0", outputs = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @fused_c2_register(%x: tensor<4xf32>) {
  // expected-error @+1 {{fused_c2: expected a register below %1, got '%1'}}
  %0 = hymo.fused_elementwise %x {program = "neg %1", outputs = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @fused_c2_literal(%x: tensor<4xf32>) {
  // expected-error @+1 {{fused_c2: expected a register or a number, got 'two'}}
  %0 = hymo.fused_elementwise %x {program = "mul %0 two", outputs = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @fused_c2_empty(%x: tensor<4xf32>) {
  // expected-error @+1 {{fused_c2: expected an instruction, got ''}}
  %0 = hymo.fused_elementwise %x {program = "neg %0;   ; exp %1", outputs = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @fused_c3_register(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{fused_c3: expected sum registers below %2, got %2}}
  %0 = hymo.fused_elementwise %x {program = "neg %0", outputs = array<i64>, sums = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<f32>
  return
}

// -----

func.func @fused_c3_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{fused_c3: expected sum 0 to be a shorter prefix of 'tensor<4x8xf32>', got 'tensor<8xf32>'}}
  %0 = hymo.fused_elementwise %x {program = "neg %0", outputs = array<i64>, sums = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @fused_c2_outputs(%x: tensor<4xf32>) {
  // expected-error @+1 {{fused_c2: expected 1 outputs and sums, got 2 + 0}}
  %0 = hymo.fused_elementwise %x {program = "neg %0", outputs = array<i64: 1, 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @fused_c2_output_reg(%x: tensor<4xf32>) {
  // expected-error @+1 {{fused_c2: expected output registers below %2, got %2}}
  %0 = hymo.fused_elementwise %x {program = "neg %0", outputs = array<i64: 2>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @rope_at_c1(%x: tensor<1x2x7xf32>, %pos: tensor<i32>) {
  // expected-error @+1 {{rope_at_c1: expected [B,H,R] with even R, got [1,2,7]}}
  %0 = hymo.rope_at %x, %pos {theta = 10000.0 : f64} : (tensor<1x2x7xf32>, tensor<i32>) -> tensor<1x2x7xf32>
  return
}

// -----

func.func @rope_at_c2(%x: tensor<1x2x8xf32>, %pos: tensor<1xi32>) {
  // expected-error @+1 {{rope_at_c2: expected pos to be a scalar, got [1]}}
  %0 = hymo.rope_at %x, %pos {theta = 10000.0 : f64} : (tensor<1x2x8xf32>, tensor<1xi32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @rope_at_c3(%x: tensor<1x2x8xf32>, %pos: tensor<i32>) {
  // expected-error @+1 {{rope_at_c3: expected theta > 0, got 0}}
  %0 = hymo.rope_at %x, %pos {theta = 0.0 : f64} : (tensor<1x2x8xf32>, tensor<i32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @rope_at_c4(%x: tensor<1x2x8xf32>, %pos: tensor<i32>) {
  // expected-error @+1 {{rope_at_c4: expected result type 'tensor<1x2x8xf32>', got 'tensor<1x2x8xf64>'}}
  %0 = hymo.rope_at %x, %pos {theta = 10000.0 : f64} : (tensor<1x2x8xf32>, tensor<i32>) -> tensor<1x2x8xf64>
  return
}

// -----

func.func @gdn_step_c1(%v: tensor<1x4x16xf32>, %b: tensor<1x2x8xf32>, %g: tensor<1x4xf32>, %a: tensor<4x8xf32>, %h: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{gdn_step_c1: expected b [1,4,S], got [1,2,8]}}
  %o, %h2 = hymo.gdn_step %v, %b, %b, %g, %a, %h : (tensor<1x4x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>, tensor<1x4xf32>, tensor<4x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x16xf32>, tensor<1x4x8x16xf32>)
  return
}

// -----

func.func @gdn_step_c2(%v: tensor<1x4x16xf32>, %b: tensor<1x4x8xf32>, %g: tensor<1x4xf32>, %a: tensor<4x8xf32>, %h: tensor<1x4x16x8xf32>) {
  // expected-error @+1 {{gdn_step_c2: expected state shape [1,4,8,16], got [1,4,16,8]}}
  %o, %h2 = hymo.gdn_step %v, %b, %b, %g, %a, %h : (tensor<1x4x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<4x8xf32>, tensor<1x4x16x8xf32>) -> (tensor<1x4x16xf32>, tensor<1x4x16x8xf32>)
  return
}

// -----

func.func @gdn_step_c2_bf16(%v: tensor<1x4x16xbf16>, %b: tensor<1x4x8xbf16>, %g: tensor<1x4xbf16>, %a: tensor<4x8xbf16>, %h: tensor<1x4x8x16xbf16>) {
  // expected-error @+1 {{gdn_step_c2: expected an f32 or f64 state, got 'bf16'}}
  %o, %h2 = hymo.gdn_step %v, %b, %b, %g, %a, %h : (tensor<1x4x16xbf16>, tensor<1x4x8xbf16>, tensor<1x4x8xbf16>, tensor<1x4xbf16>, tensor<4x8xbf16>, tensor<1x4x8x16xbf16>) -> (tensor<1x4x16xbf16>, tensor<1x4x8x16xbf16>)
  return
}

// -----

func.func @gdn_step_c3(%v: tensor<1x4x16xf32>, %b: tensor<1x4x8xf32>, %g: tensor<1x4xf32>, %a: tensor<4x8xf32>, %h: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{gdn_step_c3: expected result type 'tensor<1x4x16xf32>', got 'tensor<1x4x8xf32>'}}
  %o, %h2 = hymo.gdn_step %v, %b, %b, %g, %a, %h : (tensor<1x4x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<4x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8x16xf32>)
  return
}

// -----

func.func @cache_write_c1(%c: tensor<1x128x32xf32>, %x: tensor<1x16xf32>, %pos: tensor<i32>) {
  // expected-error @+1 {{cache_write_c1: expected x shape [1,32], got [1,16]}}
  %0 = hymo.cache_write %c, %x, %pos : (tensor<1x128x32xf32>, tensor<1x16xf32>, tensor<i32>) -> tensor<1x128x32xf32>
  return
}

// -----

func.func @cache_write_c2(%c: tensor<1x128x32xf32>, %x: tensor<1x32xf32>, %pos: tensor<2xi32>) {
  // expected-error @+1 {{cache_write_c2: expected pos to be a scalar, got [2]}}
  %0 = hymo.cache_write %c, %x, %pos : (tensor<1x128x32xf32>, tensor<1x32xf32>, tensor<2xi32>) -> tensor<1x128x32xf32>
  return
}

// -----

func.func @cache_write_c3(%c: tensor<1x128x32xf32>, %x: tensor<1x32xf32>, %pos: tensor<i32>) {
  // expected-error @+1 {{cache_write_c3: expected result type 'tensor<1x128x32xf32>', got 'tensor<1x64x32xf32>'}}
  %0 = hymo.cache_write %c, %x, %pos : (tensor<1x128x32xf32>, tensor<1x32xf32>, tensor<i32>) -> tensor<1x64x32xf32>
  return
}

// -----

func.func @latent_attention_c1(%qn: tensor<1x2x16xf32>, %qr: tensor<1x3x8xf32>, %c: tensor<1x128x32xf32>, %kr: tensor<1x128x8xf32>, %n: tensor<32xf32>, %w: tensor<64x32xf32>, %pos: tensor<i32>) {
  // expected-error @+1 {{latent_attention_c1: expected q_rope [1,2,dr], got [1,3,8]}}
  %0 = hymo.latent_attention_step %qn, %qr, %c, %kr, %n, %w, %pos {eps = 1.0e-6 : f64, scale = 0.2 : f64} : (tensor<1x2x16xf32>, tensor<1x3x8xf32>, tensor<1x128x32xf32>, tensor<1x128x8xf32>, tensor<32xf32>, tensor<64x32xf32>, tensor<i32>) -> tensor<1x2x16xf32>
  return
}

// -----

func.func @latent_attention_c2(%qn: tensor<1x2x16xf32>, %qr: tensor<1x2x8xf32>, %c: tensor<1x128x32xf32>, %kr: tensor<1x64x8xf32>, %n: tensor<32xf32>, %w: tensor<64x32xf32>, %pos: tensor<i32>) {
  // expected-error @+1 {{latent_attention_c2: expected k_rope shape [1,128,8], got [1,64,8]}}
  %0 = hymo.latent_attention_step %qn, %qr, %c, %kr, %n, %w, %pos {eps = 1.0e-6 : f64, scale = 0.2 : f64} : (tensor<1x2x16xf32>, tensor<1x2x8xf32>, tensor<1x128x32xf32>, tensor<1x64x8xf32>, tensor<32xf32>, tensor<64x32xf32>, tensor<i32>) -> tensor<1x2x16xf32>
  return
}

// -----

func.func @latent_attention_c3(%qn: tensor<1x2x16xf32>, %qr: tensor<1x2x8xf32>, %c: tensor<1x128x32xf32>, %kr: tensor<1x128x8xf32>, %n: tensor<32xf32>, %w: tensor<64x16xf32>, %pos: tensor<i32>) {
  // expected-error @+1 {{latent_attention_c3: expected w_kvb [2*(16+dv),32] with dv >= 1, got [64,16]}}
  %0 = hymo.latent_attention_step %qn, %qr, %c, %kr, %n, %w, %pos {eps = 1.0e-6 : f64, scale = 0.2 : f64} : (tensor<1x2x16xf32>, tensor<1x2x8xf32>, tensor<1x128x32xf32>, tensor<1x128x8xf32>, tensor<32xf32>, tensor<64x16xf32>, tensor<i32>) -> tensor<1x2x16xf32>
  return
}

// -----

func.func @latent_attention_c4(%qn: tensor<1x2x16xf32>, %qr: tensor<1x2x8xf32>, %c: tensor<1x128x32xf32>, %kr: tensor<1x128x8xf32>, %n: tensor<32xf32>, %w: tensor<64x32xf32>, %pos: tensor<1xi32>) {
  // expected-error @+1 {{latent_attention_c4: expected pos to be a scalar, got [1]}}
  %0 = hymo.latent_attention_step %qn, %qr, %c, %kr, %n, %w, %pos {eps = 1.0e-6 : f64, scale = 0.2 : f64} : (tensor<1x2x16xf32>, tensor<1x2x8xf32>, tensor<1x128x32xf32>, tensor<1x128x8xf32>, tensor<32xf32>, tensor<64x32xf32>, tensor<1xi32>) -> tensor<1x2x16xf32>
  return
}

// -----

func.func @latent_attention_c5(%qn: tensor<1x2x16xf32>, %qr: tensor<1x2x8xf32>, %c: tensor<1x128x32xf32>, %kr: tensor<1x128x8xf32>, %n: tensor<32xf32>, %w: tensor<64x32xf32>, %pos: tensor<i32>) {
  // expected-error @+1 {{latent_attention_c5: expected result shape [1,2,16], got [1,2,8]}}
  %0 = hymo.latent_attention_step %qn, %qr, %c, %kr, %n, %w, %pos {eps = 1.0e-6 : f64, scale = 0.2 : f64} : (tensor<1x2x16xf32>, tensor<1x2x8xf32>, tensor<1x128x32xf32>, tensor<1x128x8xf32>, tensor<32xf32>, tensor<64x32xf32>, tensor<i32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @latent_attention_c6(%qn: tensor<1x2x16xf32>, %qr: tensor<1x2x8xf32>, %c: tensor<1x128x32xf32>, %kr: tensor<1x128x8xf32>, %n: tensor<32xf32>, %w: tensor<64x32xf32>, %pos: tensor<i32>) {
  // expected-error @+1 {{latent_attention_c6: expected scale > 0 and eps >= 0, got 0.000000e+00 and 1.000000e-06}}
  %0 = hymo.latent_attention_step %qn, %qr, %c, %kr, %n, %w, %pos {eps = 1.0e-6 : f64, scale = 0.0 : f64} : (tensor<1x2x16xf32>, tensor<1x2x8xf32>, tensor<1x128x32xf32>, tensor<1x128x8xf32>, tensor<32xf32>, tensor<64x32xf32>, tensor<i32>) -> tensor<1x2x16xf32>
  return
}

// -----

func.func @latent_attention_c7(%qn: tensor<1x2x16xf32>, %qr: tensor<1x2x8xf32>, %c: tensor<1x128x32xf64>, %kr: tensor<1x128x8xf32>, %n: tensor<32xf32>, %w: tensor<64x32xf32>, %pos: tensor<i32>) {
  // expected-error @+1 {{latent_attention_c7: expected element type 'f32' everywhere, got 'f64'}}
  %0 = hymo.latent_attention_step %qn, %qr, %c, %kr, %n, %w, %pos {eps = 1.0e-6 : f64, scale = 0.2 : f64} : (tensor<1x2x16xf32>, tensor<1x2x8xf32>, tensor<1x128x32xf64>, tensor<1x128x8xf32>, tensor<32xf32>, tensor<64x32xf32>, tensor<i32>) -> tensor<1x2x16xf32>
  return
}

// -----

func.func @embedding_grad_c1_dout(%i: tensor<2x8xi32>, %d: tensor<2x7x64xf32>) {
  // expected-error @+1 {{embedding_grad_c1: expected dout shape [2,8,64], got [2,7,64]}}
  %0 = hymo.embedding_grad %i, %d : (tensor<2x8xi32>, tensor<2x7x64xf32>) -> tensor<256x64xf32>
  return
}

// -----

func.func @embedding_grad_c1_rank(%i: tensor<2x8xi32>, %d: tensor<2x8x64xf32>) {
  // expected-error @+1 {{embedding_grad_c1: expected result of rank 2, got rank 1}}
  %0 = hymo.embedding_grad %i, %d : (tensor<2x8xi32>, tensor<2x8x64xf32>) -> tensor<256xf32>
  return
}

// -----

func.func @embedding_grad_c1_width(%i: tensor<2x8xi32>, %d: tensor<2x8x64xf32>) {
  // expected-error @+1 {{embedding_grad_c1: expected result width 64, got 32}}
  %0 = hymo.embedding_grad %i, %d : (tensor<2x8xi32>, tensor<2x8x64xf32>) -> tensor<256x32xf32>
  return
}

// -----

func.func @embedding_grad_c1_type(%i: tensor<2x8xi32>, %d: tensor<2x8x64xf32>) {
  // expected-error @+1 {{embedding_grad_c1: expected element type 'f32' everywhere, got 'f64'}}
  %0 = hymo.embedding_grad %i, %d : (tensor<2x8xi32>, tensor<2x8x64xf32>) -> tensor<256x64xf64>
  return
}

// -----

func.func @rms_norm_grad_c1(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{rms_norm_grad_c1: expected dw of type 'tensor<8xf32>', got 'tensor<4xf32>'}}
  %0:2 = hymo.rms_norm_grad %x, %w, %x {eps = 1.0e-6 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return
}

// -----

func.func @causal_attention_grad_c1(%q: tensor<2x16x2x24xf32>, %v: tensor<2x16x2x16xf32>) {
  // expected-error @+1 {{causal_attention_grad_c1: expected dout of type 'tensor<2x16x2x16xf32>', got 'tensor<2x16x2x24xf32>'}}
  %0:3 = hymo.causal_attention_grad %q, %q, %v, %q {scale = 0.2 : f64} : (tensor<2x16x2x24xf32>, tensor<2x16x2x24xf32>, tensor<2x16x2x16xf32>, tensor<2x16x2x24xf32>) -> (tensor<2x16x2x24xf32>, tensor<2x16x2x24xf32>, tensor<2x16x2x16xf32>)
  return
}

// -----

func.func @gdn_grad_c1(%v: tensor<2x16x4x16xf32>, %b: tensor<2x16x4x8xf32>, %g: tensor<2x16x4xf32>, %a: tensor<4x8xf32>) {
  // expected-error @+1 {{gdn_grad_c1: expected da of type 'tensor<4x8xf32>', got 'tensor<8x4xf32>'}}
  %0:5 = hymo.gdn_recurrence_grad %v, %b, %b, %g, %a, %v {chunk_size = 16 : i64} : (tensor<2x16x4x16xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4xf32>, tensor<4x8xf32>, tensor<2x16x4x16xf32>) -> (tensor<2x16x4x16xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4xf32>, tensor<8x4xf32>)
  return
}

// -----

func.func @moe_route_grad_c1(%p: tensor<32x4xf32>, %i: tensor<32x2xi32>, %d: tensor<32x3xf32>) {
  // expected-error @+1 {{moe_route_grad_c1: expected dweights shape [32,2], got [32,3]}}
  %0 = hymo.moe_route_grad %p, %i, %d : (tensor<32x4xf32>, tensor<32x2xi32>, tensor<32x3xf32>) -> tensor<32x4xf32>
  return
}

// -----

func.func @moe_combine_grad_c1(%y: tensor<4x24x64xf32>, %s: tensor<32x2xi32>, %w: tensor<32x2xf32>, %d: tensor<32x64xf32>) {
  // expected-error @+1 {{moe_combine_grad_c1: expected dexpert_outputs of type 'tensor<4x24x64xf32>', got 'tensor<4x24x32xf32>'}}
  %0:2 = hymo.moe_combine_grad %y, %s, %w, %d : (tensor<4x24x64xf32>, tensor<32x2xi32>, tensor<32x2xf32>, tensor<32x64xf32>) -> (tensor<4x24x32xf32>, tensor<32x2xf32>)
  return
}

// -----

func.func @cross_entropy_grad_c1(%l: tensor<30x256xf32>, %t: tensor<30xi32>, %d: tensor<1xf32>) {
  // expected-error @+1 {{cross_entropy_grad_c1: expected dloss shape [], got [1]}}
  %0 = hymo.cross_entropy_grad %l, %t, %d : (tensor<30x256xf32>, tensor<30xi32>, tensor<1xf32>) -> tensor<30x256xf32>
  return
}

// -----

func.func @eye_c1() {
  // expected-error @+1 {{eye_c1: expected a result of rank >= 2, got rank 1}}
  %0 = hymo.eye : tensor<4xf32>
  return
}
