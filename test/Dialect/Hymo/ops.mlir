// RUN: hymo-opt %s | hymo-opt | FileCheck %s
// RUN: hymo-opt %s --mlir-print-op-generic | hymo-opt | FileCheck %s
// Every hymo op parses, verifies, prints and parses again.

// CHECK-LABEL: func @dense
func.func @dense(%table: tensor<256x64xf32>, %ids: tensor<2x8xi32>, %w: tensor<32x64xf32>,
                 %a: tensor<3x8x16xf32>, %b: tensor<3x8x16xf32>,
                 %xe: tensor<4x6x64xf32>, %we: tensor<4x32x64xf32>) -> tensor<2x8x32xf32> {
  // CHECK: %[[X:.*]] = hymo.embedding %{{.*}}, %{{.*}} : (tensor<256x64xf32>, tensor<2x8xi32>) -> tensor<2x8x64xf32>
  %x = hymo.embedding %table, %ids : (tensor<256x64xf32>, tensor<2x8xi32>) -> tensor<2x8x64xf32>
  // CHECK: hymo.linear %[[X]], %{{.*}} : (tensor<2x8x64xf32>, tensor<32x64xf32>) -> tensor<2x8x32xf32>
  %y = hymo.linear %x, %w : (tensor<2x8x64xf32>, tensor<32x64xf32>) -> tensor<2x8x32xf32>
  // CHECK: hymo.matmul %{{.*}}, %{{.*}} {transpose_b = true} : (tensor<3x8x16xf32>, tensor<3x8x16xf32>) -> tensor<3x8x8xf32>
  %m = hymo.matmul %a, %b {transpose_b = true} : (tensor<3x8x16xf32>, tensor<3x8x16xf32>) -> tensor<3x8x8xf32>
  // CHECK: hymo.matmul %{{.*}}, %{{.*}} {transpose_a = true} : (tensor<3x8x16xf32>, tensor<3x8x16xf32>) -> tensor<3x16x16xf32>
  %m2 = hymo.matmul %a, %b {transpose_a = true} : (tensor<3x8x16xf32>, tensor<3x8x16xf32>) -> tensor<3x16x16xf32>
  // CHECK: hymo.grouped_linear %{{.*}}, %{{.*}} : (tensor<4x6x64xf32>, tensor<4x32x64xf32>) -> tensor<4x6x32xf32>
  %g = hymo.grouped_linear %xe, %we : (tensor<4x6x64xf32>, tensor<4x32x64xf32>) -> tensor<4x6x32xf32>
  return %y : tensor<2x8x32xf32>
}

// CHECK-LABEL: func @elementwise
func.func @elementwise(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %i: tensor<4x8xi32>) -> tensor<4x8xf32> {
  // CHECK: hymo.constant dense<1.000000e+00> : tensor<4x8xf32>
  %c = hymo.constant dense<1.0> : tensor<4x8xf32>
  // CHECK: hymo.neg
  %0 = hymo.neg %x : tensor<4x8xf32>
  // CHECK: hymo.exp
  %1 = hymo.exp %0 : tensor<4x8xf32>
  // CHECK: hymo.log
  %2 = hymo.log %1 : tensor<4x8xf32>
  // CHECK: hymo.sqrt
  %3 = hymo.sqrt %1 : tensor<4x8xf32>
  // CHECK: hymo.rsqrt
  %4 = hymo.rsqrt %3 : tensor<4x8xf32>
  // CHECK: hymo.square
  %5 = hymo.square %4 : tensor<4x8xf32>
  // CHECK: hymo.abs
  %6 = hymo.abs %5 : tensor<4x8xf32>
  // CHECK: hymo.sigmoid
  %7 = hymo.sigmoid %6 : tensor<4x8xf32>
  // CHECK: hymo.silu
  %8 = hymo.silu %7 : tensor<4x8xf32>
  // CHECK: hymo.softplus
  %9 = hymo.softplus %8 : tensor<4x8xf32>
  // CHECK: hymo.sin
  %s0 = hymo.sin %9 : tensor<4x8xf32>
  // CHECK: hymo.cos
  %s1 = hymo.cos %s0 : tensor<4x8xf32>
  // CHECK: hymo.isfinite
  %10 = hymo.isfinite %9 : tensor<4x8xf32>
  // CHECK: hymo.add
  %11 = hymo.add %10, %y : tensor<4x8xf32>
  // CHECK: hymo.sub
  %12 = hymo.sub %11, %c : tensor<4x8xf32>
  // CHECK: hymo.mul
  %13 = hymo.mul %12, %y : tensor<4x8xf32>
  // CHECK: hymo.div
  %14 = hymo.div %13, %c : tensor<4x8xf32>
  // CHECK: hymo.max
  %15 = hymo.max %14, %y : tensor<4x8xf32>
  // CHECK: hymo.min
  %16 = hymo.min %15, %y : tensor<4x8xf32>
  // CHECK: hymo.greater
  %17 = hymo.greater %16, %y : tensor<4x8xf32>
  // CHECK: hymo.select
  %18 = hymo.select %17, %x, %y : tensor<4x8xf32>
  // CHECK: hymo.cast %{{.*}} : tensor<4x8xf32> -> tensor<4x8xbf16>
  %19 = hymo.cast %18 : tensor<4x8xf32> -> tensor<4x8xbf16>
  // CHECK: hymo.cast %{{.*}} : tensor<4x8xi32> -> tensor<4x8xf32>
  %20 = hymo.cast %i : tensor<4x8xi32> -> tensor<4x8xf32>
  return %20 : tensor<4x8xf32>
}

// CHECK-LABEL: func @reductions_and_shapes
func.func @reductions_and_shapes(%x: tensor<4x8xf32>, %v: tensor<8xf32>, %t: tensor<2x64xi32>) -> tensor<4xf32> {
  // CHECK: hymo.reduce_sum %{{.*}} {dims = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %s = hymo.reduce_sum %x {dims = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  // CHECK: hymo.reduce_mean %{{.*}} {dims = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  %m = hymo.reduce_mean %x {dims = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  // CHECK: hymo.reduce_max %{{.*}} {dims = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %k = hymo.reduce_max %x {dims = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  // CHECK: hymo.reshape %{{.*}} : (tensor<4x8xf32>) -> tensor<32xf32>
  %r = hymo.reshape %x : (tensor<4x8xf32>) -> tensor<32xf32>
  // CHECK: hymo.transpose %{{.*}} {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %tr = hymo.transpose %x {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  // CHECK: hymo.slice %{{.*}} {limit = array<i64: 2, 64>, start = array<i64: 0, 1>} : (tensor<2x64xi32>) -> tensor<2x63xi32>
  %sl = hymo.slice %t {start = array<i64: 0, 1>, limit = array<i64: 2, 64>} : (tensor<2x64xi32>) -> tensor<2x63xi32>
  // CHECK: hymo.pad %{{.*}} {high = array<i64: 0, 0>, low = array<i64: 0, 2>} : (tensor<4x8xf32>) -> tensor<4x10xf32>
  %p = hymo.pad %x {low = array<i64: 0, 2>, high = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x10xf32>
  // CHECK: hymo.concat %{{.*}}, %{{.*}} {dim = 1 : i64} : (tensor<4x8xf32>, tensor<4x10xf32>) -> tensor<4x18xf32>
  %c = hymo.concat %x, %p {dim = 1 : i64} : (tensor<4x8xf32>, tensor<4x10xf32>) -> tensor<4x18xf32>
  // CHECK: hymo.broadcast_in_dim %{{.*}} {dims = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %b = hymo.broadcast_in_dim %v {dims = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4xf32>
}

// CHECK-LABEL: func @model_ops
func.func @model_ops(%x: tensor<2x16x64xf32>, %w: tensor<64xf32>, %r: tensor<2x16x2x8xf32>,
                     %q: tensor<2x16x2x24xf32>, %k: tensor<2x16x2x24xf32>, %v: tensor<2x16x2x16xf32>,
                     %gv: tensor<2x16x4x16xf32>, %gb: tensor<2x16x4x8xf32>, %gc: tensor<2x16x4x8xf32>,
                     %gg: tensor<2x16x4xf32>, %ga: tensor<4x8xf32>,
                     %p: tensor<32x4xf32>, %bias: tensor<4xf32>, %u: tensor<32x64xf32>,
                     %logits: tensor<30x256xf32>, %tgt: tensor<30xi32>) -> tensor<f32> {
  // CHECK: hymo.rms_norm %{{.*}}, %{{.*}} {eps = 9.9999999999999995E-7 : f64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %n = hymo.rms_norm %x, %w {eps = 1.0e-6 : f64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  // CHECK: hymo.softmax %{{.*}} : tensor<32x4xf32>
  %sm = hymo.softmax %p : tensor<32x4xf32>
  // CHECK: hymo.rope %{{.*}} {theta = 1.000000e+04 : f64} : tensor<2x16x2x8xf32>
  %ro = hymo.rope %r {theta = 10000.0 : f64} : tensor<2x16x2x8xf32>
  // CHECK: hymo.rope %{{.*}} {inverse = true, theta = 1.000000e+04 : f64} : tensor<2x16x2x8xf32>
  %ri = hymo.rope %r {theta = 10000.0 : f64, inverse = true} : tensor<2x16x2x8xf32>
  // CHECK: hymo.causal_attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 2.000000e-01 : f64} : (tensor<2x16x2x24xf32>, tensor<2x16x2x24xf32>, tensor<2x16x2x16xf32>) -> tensor<2x16x2x16xf32>
  %att = hymo.causal_attention %q, %k, %v {scale = 0.2 : f64} : (tensor<2x16x2x24xf32>, tensor<2x16x2x24xf32>, tensor<2x16x2x16xf32>) -> tensor<2x16x2x16xf32>
  // CHECK: hymo.gdn_recurrence %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {chunk_size = 16 : i64}
  %o = hymo.gdn_recurrence %gv, %gb, %gc, %gg, %ga {chunk_size = 16 : i64} : (tensor<2x16x4x16xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4xf32>, tensor<4x8xf32>) -> tensor<2x16x4x16xf32>
  // CHECK: %[[IDX:.*]], %[[WT:.*]] = hymo.moe_route %{{.*}}, %{{.*}} {top_k = 2 : i64} : (tensor<32x4xf32>, tensor<4xf32>) -> (tensor<32x2xi32>, tensor<32x2xf32>)
  %idx, %wt = hymo.moe_route %sm, %bias {top_k = 2 : i64} : (tensor<32x4xf32>, tensor<4xf32>) -> (tensor<32x2xi32>, tensor<32x2xf32>)
  // CHECK: %[[XE:.*]], %[[SLOT:.*]] = hymo.moe_dispatch %{{.*}}, %[[IDX]] {capacity = 24 : i64, num_experts = 4 : i64}
  %xe, %slot = hymo.moe_dispatch %u, %idx {num_experts = 4 : i64, capacity = 24 : i64} : (tensor<32x64xf32>, tensor<32x2xi32>) -> (tensor<4x24x64xf32>, tensor<32x2xi32>)
  // CHECK: hymo.moe_combine %[[XE]], %[[SLOT]], %[[WT]] : (tensor<4x24x64xf32>, tensor<32x2xi32>, tensor<32x2xf32>) -> tensor<32x64xf32>
  %y = hymo.moe_combine %xe, %slot, %wt : (tensor<4x24x64xf32>, tensor<32x2xi32>, tensor<32x2xf32>) -> tensor<32x64xf32>
  // CHECK: hymo.moe_count %[[IDX]] {num_experts = 4 : i64} : (tensor<32x2xi32>) -> tensor<4xf32>
  %cnt = hymo.moe_count %idx {num_experts = 4 : i64} : (tensor<32x2xi32>) -> tensor<4xf32>
  // CHECK: hymo.cross_entropy %{{.*}}, %{{.*}} : (tensor<30x256xf32>, tensor<30xi32>) -> tensor<f32>
  %l = hymo.cross_entropy %logits, %tgt : (tensor<30x256xf32>, tensor<30xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func @eye
func.func @eye() -> tensor<3x4x4xf32> {
  // CHECK: hymo.eye : tensor<3x4x4xf32>
  %i = hymo.eye : tensor<3x4x4xf32>
  return %i : tensor<3x4x4xf32>
}

// CHECK-LABEL: func @fused
func.func @fused(%x: tensor<4x8xf32>, %g: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // CHECK: %{{.*}}:2 = hymo.fused_elementwise %{{.*}}, %{{.*}}, %{{.*}} {outputs = array<i64: 4, 5>, program = "mul %1 %2; add %0 %3; select %4 %3 -1.5"} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %r:2 = hymo.fused_elementwise %x, %g, %s {program = "mul %1 %2; add %0 %3; select %4 %3 -1.5", outputs = array<i64: 4, 5>} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  // CHECK: hymo.fused_elementwise %{{.*}} {outputs = array<i64: 4>, program = "mul %1 %2; square %3", sums = array<i64: 3, 4>} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<f32>, tensor<4xf32>)
  %q:3 = hymo.fused_elementwise %x, %g, %s {program = "mul %1 %2; square %3", outputs = array<i64: 4>, sums = array<i64: 3, 4>} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<f32>, tensor<4xf32>)
  return %r#0 : tensor<4x8xf32>
}

// CHECK-LABEL: func @precisions
func.func @precisions(%x: tensor<4x8xbf16>, %w: tensor<2x8xbf16>, %y: tensor<4x8xf64>) -> tensor<4x2xbf16> {
  // CHECK: hymo.linear %{{.*}}, %{{.*}} : (tensor<4x8xbf16>, tensor<2x8xbf16>) -> tensor<4x2xbf16>
  %0 = hymo.linear %x, %w : (tensor<4x8xbf16>, tensor<2x8xbf16>) -> tensor<4x2xbf16>
  // CHECK: hymo.exp %{{.*}} : tensor<4x8xf64>
  %1 = hymo.exp %y : tensor<4x8xf64>
  return %0 : tensor<4x2xbf16>
}

// CHECK-LABEL: func @decode
func.func @decode(%x: tensor<1x2x8xf32>, %pos: tensor<i32>,
                  %v: tensor<1x4x16xf32>, %b: tensor<1x4x8xf32>, %g: tensor<1x4xf32>,
                  %a: tensor<4x8xf32>, %h: tensor<1x4x8x16xf32>,
                  %cache: tensor<1x128x32xf32>, %row: tensor<1x32xf32>, %kr: tensor<1x128x8xf32>,
                  %qn: tensor<1x2x16xf32>, %nkv: tensor<32xf32>, %wkvb: tensor<64x32xf32>) -> tensor<1x2x16xf32> {
  // CHECK: hymo.rope_at %{{.*}}, %{{.*}} {theta = 1.000000e+04 : f64} : (tensor<1x2x8xf32>, tensor<i32>) -> tensor<1x2x8xf32>
  %qr = hymo.rope_at %x, %pos {theta = 10000.0 : f64} : (tensor<1x2x8xf32>, tensor<i32>) -> tensor<1x2x8xf32>
  // CHECK: hymo.gdn_step {{.*}} -> (tensor<1x4x16xf32>, tensor<1x4x8x16xf32>)
  %o, %h2 = hymo.gdn_step %v, %b, %b, %g, %a, %h : (tensor<1x4x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<4x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x16xf32>, tensor<1x4x8x16xf32>)
  // CHECK: hymo.cache_write {{.*}} : (tensor<1x128x32xf32>, tensor<1x32xf32>, tensor<i32>) -> tensor<1x128x32xf32>
  %c2 = hymo.cache_write %cache, %row, %pos : (tensor<1x128x32xf32>, tensor<1x32xf32>, tensor<i32>) -> tensor<1x128x32xf32>
  // CHECK: hymo.latent_attention_step {{.*}} {eps = 9.9999999999999995E-7 : f64, scale = 2.000000e-01 : f64} : {{.*}} -> tensor<1x2x16xf32>
  %att = hymo.latent_attention_step %qn, %qr, %c2, %kr, %nkv, %wkvb, %pos {eps = 1.0e-6 : f64, scale = 0.2 : f64}
      : (tensor<1x2x16xf32>, tensor<1x2x8xf32>, tensor<1x128x32xf32>, tensor<1x128x8xf32>, tensor<32xf32>, tensor<64x32xf32>, tensor<i32>) -> tensor<1x2x16xf32>
  return %att : tensor<1x2x16xf32>
}

// CHECK-LABEL: func @backward_ops
func.func @backward_ops(%ids: tensor<2x8xi32>, %dx: tensor<2x8x64xf32>, %x: tensor<4x8xf32>, %w: tensor<8xf32>,
                        %p: tensor<32x4xf32>, %q: tensor<2x16x2x24xf32>, %v: tensor<2x16x2x16xf32>,
                        %gv: tensor<2x16x4x16xf32>, %gb: tensor<2x16x4x8xf32>, %gg: tensor<2x16x4xf32>, %ga: tensor<4x8xf32>,
                        %idx: tensor<32x2xi32>, %dwt: tensor<32x2xf32>, %ye: tensor<4x24x64xf32>, %dy: tensor<32x64xf32>,
                        %logits: tensor<30x256xf32>, %t: tensor<30xi32>, %dl: tensor<f32>) {
  // CHECK: hymo.embedding_grad %{{.*}}, %{{.*}} : (tensor<2x8xi32>, tensor<2x8x64xf32>) -> tensor<256x64xf32>
  %0 = hymo.embedding_grad %ids, %dx : (tensor<2x8xi32>, tensor<2x8x64xf32>) -> tensor<256x64xf32>
  // CHECK: hymo.rms_norm_grad %{{.*}}, %{{.*}}, %{{.*}} {eps = 9.9999999999999995E-7 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
  %1:2 = hymo.rms_norm_grad %x, %w, %x {eps = 1.0e-6 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
  // CHECK: hymo.softmax_grad %{{.*}}, %{{.*}} : tensor<32x4xf32>
  %2 = hymo.softmax_grad %p, %p : tensor<32x4xf32>
  // CHECK: hymo.causal_attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {scale = 2.000000e-01 : f64}
  %3:3 = hymo.causal_attention_grad %q, %q, %v, %v {scale = 0.2 : f64} : (tensor<2x16x2x24xf32>, tensor<2x16x2x24xf32>, tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>) -> (tensor<2x16x2x24xf32>, tensor<2x16x2x24xf32>, tensor<2x16x2x16xf32>)
  // CHECK: hymo.gdn_recurrence_grad {{.*}} {chunk_size = 16 : i64}
  %4:5 = hymo.gdn_recurrence_grad %gv, %gb, %gb, %gg, %ga, %gv {chunk_size = 16 : i64} : (tensor<2x16x4x16xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4xf32>, tensor<4x8xf32>, tensor<2x16x4x16xf32>) -> (tensor<2x16x4x16xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4xf32>, tensor<4x8xf32>)
  // CHECK: hymo.moe_route_grad %{{.*}}, %{{.*}}, %{{.*}} : (tensor<32x4xf32>, tensor<32x2xi32>, tensor<32x2xf32>) -> tensor<32x4xf32>
  %5 = hymo.moe_route_grad %p, %idx, %dwt : (tensor<32x4xf32>, tensor<32x2xi32>, tensor<32x2xf32>) -> tensor<32x4xf32>
  // CHECK: hymo.moe_combine_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x24x64xf32>, tensor<32x2xi32>, tensor<32x2xf32>, tensor<32x64xf32>) -> (tensor<4x24x64xf32>, tensor<32x2xf32>)
  %6:2 = hymo.moe_combine_grad %ye, %idx, %dwt, %dy : (tensor<4x24x64xf32>, tensor<32x2xi32>, tensor<32x2xf32>, tensor<32x64xf32>) -> (tensor<4x24x64xf32>, tensor<32x2xf32>)
  // CHECK: hymo.cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} : (tensor<30x256xf32>, tensor<30xi32>, tensor<f32>) -> tensor<30x256xf32>
  %7 = hymo.cross_entropy_grad %logits, %t, %dl : (tensor<30x256xf32>, tensor<30xi32>, tensor<f32>) -> tensor<30x256xf32>
  return
}
