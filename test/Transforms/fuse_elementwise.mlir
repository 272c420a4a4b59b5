// RUN: hymo-opt %s -split-input-file -hymo-fuse-elementwise | FileCheck %s

// A chain over one type becomes one kernel; the scalar broadcast becomes a
// scalar input and the splat constant a literal.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x8xf32>, %[[G:[^:]*]]: tensor<4x8xf32>, %[[LR:[^:]*]]: tensor<f32>
// CHECK-NOT: hymo.broadcast_in_dim
// CHECK: %[[R:.*]] = hymo.fused_elementwise %[[W]], %[[G]], %[[LR]] {outputs = array<i64: 6>, program = "mul %0 0.10000000149011612; add %1 %3; mul %4 %2; sub %0 %5"}
// CHECK-NEXT: return %[[R]]
func.func @chain(%w: tensor<4x8xf32>, %g: tensor<4x8xf32>, %lr: tensor<f32>) -> tensor<4x8xf32> {
  %wd = hymo.constant dense<0.1> : tensor<4x8xf32>
  %d = hymo.mul %w, %wd : tensor<4x8xf32>
  %u = hymo.add %g, %d : tensor<4x8xf32>
  %lrb = hymo.broadcast_in_dim %lr {dims = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %s = hymo.mul %u, %lrb : tensor<4x8xf32>
  %r = hymo.sub %w, %s : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Values used outside the group are results of the fused op; an op of
// another kind that reads the group ends it.
// CHECK-LABEL: func.func @exported(
// CHECK: %[[F:.*]]:2 = hymo.fused_elementwise %{{.*}} {outputs = array<i64: 1, 2>, program = "exp %0; neg %1"}
// CHECK: hymo.reduce_max %[[F]]#0
// CHECK: return %[[F]]#1
func.func @exported(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %e = hymo.exp %x : tensor<4xf32>
  %n = hymo.neg %e : tensor<4xf32>
  %s = hymo.reduce_max %e {dims = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %n, %s : tensor<4xf32>, tensor<f32>
}

// -----

// A sum over the trailing dims joins the kernel (`sums`): the summed value
// is never written when nothing else reads it. A mean is the sum times
// 1/count, on the small result.
// CHECK-LABEL: func.func @sums(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK-NOT: hymo.square
// CHECK: %[[F:.*]]:3 = hymo.fused_elementwise %[[X]] {outputs = array<i64: 2>, program = "square %0; exp %1", sums = array<i64: 1, 1>} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<f32>, tensor<4xf32>)
// CHECK-NOT: hymo.reduce
// CHECK: %[[C:.*]] = hymo.constant dense<1.250000e-01> : tensor<4xf32>
// CHECK: %[[M:.*]] = hymo.mul %[[F]]#2, %[[C]] : tensor<4xf32>
// CHECK: return %[[F]]#0, %[[F]]#1, %[[M]]
func.func @sums(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<f32>, tensor<4xf32>) {
  %q = hymo.square %x : tensor<4x8xf32>
  %e = hymo.exp %q : tensor<4x8xf32>
  %s = hymo.reduce_sum %q {dims = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  %m = hymo.reduce_mean %q {dims = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %e, %s, %m : tensor<4x8xf32>, tensor<f32>, tensor<4xf32>
}

// -----

// A single op whose only reader is a sum is worth a kernel (no outputs);
// a reduction over leading dims, or with keep_dims, stays a reduce.
// CHECK-LABEL: func.func @sum_only(
// CHECK: %[[F:.*]] = hymo.fused_elementwise %{{.*}} {outputs = array<i64>, program = "square %0", sums = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<f32>
// CHECK-NOT: hymo.square
// CHECK: hymo.neg
// CHECK: hymo.reduce_sum %{{.*}} {dims = array<i64: 0>}
// CHECK: hymo.reduce_sum %{{.*}} {dims = array<i64: 1>, keep_dims = true}
// CHECK: return %[[F]]
func.func @sum_only(%x: tensor<4x8xf32>) -> (tensor<f32>, tensor<8xf32>, tensor<4x1xf32>) {
  %q = hymo.square %x : tensor<4x8xf32>
  %s = hymo.reduce_sum %q {dims = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  %n = hymo.neg %x : tensor<4x8xf32>
  %c = hymo.reduce_sum %n {dims = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32>
  %k = hymo.reduce_sum %n {dims = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %s, %c, %k : tensor<f32>, tensor<8xf32>, tensor<4x1xf32>
}

// -----

// An unrelated op between members does not split the group; types do, and a
// single op is left alone. Scalar (rank-0) arithmetic is not fused.
// CHECK-LABEL: func.func @interleaved(
// CHECK: hymo.mul %{{.*}}, %{{.*}} : tensor<f32>
// CHECK: hymo.fused_elementwise {{.*}} program = "exp %0; sqrt %1"{{.*}} -> tensor<4xf32>
// CHECK: hymo.neg %{{.*}} : tensor<8xf32>
// CHECK-NOT: hymo.fused_elementwise
func.func @interleaved(%x: tensor<4xf32>, %y: tensor<8xf32>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<8xf32>, tensor<f32>) {
  %e = hymo.exp %x : tensor<4xf32>
  %t = hymo.mul %s, %s : tensor<f32>
  %q = hymo.sqrt %e : tensor<4xf32>
  %n = hymo.neg %y : tensor<8xf32>
  return %q, %n, %t : tensor<4xf32>, tensor<8xf32>, tensor<f32>
}

// -----

// A chain from a broadcast scalar whose only reader is a sum has no
// full-shape input to iterate over: the chain is fused and the sum stays.
// CHECK-LABEL: func.func @sum_of_broadcast(
// CHECK: %[[F:.*]] = hymo.fused_elementwise %{{.*}} {outputs = array<i64: 2>, program = "exp %0; neg %1"} : (tensor<f32>) -> tensor<4x8xf32>
// CHECK: hymo.reduce_sum %[[F]] {dims = array<i64: 0, 1>}
func.func @sum_of_broadcast(%s: tensor<f32>) -> tensor<f32> {
  %b = hymo.broadcast_in_dim %s {dims = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %e = hymo.exp %b : tensor<4x8xf32>
  %n = hymo.neg %e : tensor<4x8xf32>
  %r = hymo.reduce_sum %n {dims = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
