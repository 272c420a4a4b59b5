// RUN: hymo-opt %s -split-input-file -hymo-autodiff -verify-diagnostics | FileCheck %s

// The linear's VJP is two matmuls on the flattened operands; CE's is its op.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3x4xf32> {hymo.name = "x", hymo.role = "input"}
// CHECK-SAME: %[[W:[^:]*]]: tensor<5x4xf32> {hymo.name = "w", hymo.optimizer = "adamw", hymo.role = "param"}
// CHECK-SAME: -> (tensor<f32> {hymo.name = "loss"}, tensor<5x4xf32> {hymo.name = "grad.w"})
// CHECK: %[[Y:.*]] = hymo.linear %[[X]], %[[W]]
// CHECK: %[[L:.*]] = hymo.cross_entropy
// CHECK: %[[ONE:.*]] = hymo.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DL:.*]] = hymo.cross_entropy_grad %{{.*}}, %{{.*}}, %[[ONE]]
// CHECK: %[[DY:.*]] = hymo.reshape %[[DL]] : (tensor<6x5xf32>) -> tensor<2x3x5xf32>
// CHECK: %[[DY2:.*]] = hymo.reshape %[[DY]] : (tensor<2x3x5xf32>) -> tensor<6x5xf32>
// CHECK: %[[X2:.*]] = hymo.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK: %[[DW:.*]] = hymo.matmul %[[DY2]], %[[X2]] {transpose_a = true} : (tensor<6x5xf32>, tensor<6x4xf32>) -> tensor<5x4xf32>
// CHECK: return %[[L]], %[[DW]]
func.func @forward(%x: tensor<2x3x4xf32> {hymo.name = "x", hymo.role = "input"},
                   %w: tensor<5x4xf32> {hymo.name = "w", hymo.role = "param", hymo.optimizer = "adamw"},
                   %t: tensor<6xi32> {hymo.name = "t", hymo.role = "input"})
    -> (tensor<f32> {hymo.name = "loss"}) {
  %y = hymo.linear %x, %w : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
  %y2 = hymo.reshape %y : (tensor<2x3x5xf32>) -> tensor<6x5xf32>
  %l = hymo.cross_entropy %y2, %t : (tensor<6x5xf32>, tensor<6xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A value used twice gets the sum of its adjoints; an unreached parameter
// gets zeros; a buffer gets no gradient.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: -> (tensor<f32> {hymo.name = "loss"}, tensor<4xf32> {hymo.name = "grad.p"}, tensor<4xf32> {hymo.name = "grad.unused"})
// CHECK: %[[M:.*]] = hymo.mul %[[P:.*]], %[[P]]
// CHECK: %[[D1:.*]] = hymo.mul %{{.*}}, %[[P]]
// CHECK: %[[D2:.*]] = hymo.mul %{{.*}}, %[[P]]
// CHECK: %[[SUM:.*]] = hymo.add %[[D1]], %[[D2]]
// CHECK: %[[Z:.*]] = hymo.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: return %{{.*}}, %[[SUM]], %[[Z]]
func.func @forward(%p: tensor<4xf32> {hymo.name = "p", hymo.role = "param", hymo.optimizer = "adamw"},
                   %unused: tensor<4xf32> {hymo.name = "unused", hymo.role = "param", hymo.optimizer = "adamw"},
                   %buf: tensor<4xf32> {hymo.name = "buf", hymo.role = "buffer", hymo.optimizer = "none"})
    -> (tensor<f32> {hymo.name = "loss"}) {
  %m = hymo.mul %p, %p : tensor<4xf32>
  %n = hymo.add %m, %buf : tensor<4xf32>
  %s = hymo.reduce_sum %n {dims = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Masks stop the adjoint: the greater op is NonDifferentiable.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-NOT: hymo.greater {{.*}}grad
// CHECK: return
func.func @forward(%p: tensor<4xf32> {hymo.name = "p", hymo.role = "param", hymo.optimizer = "adamw"})
    -> (tensor<f32> {hymo.name = "loss"}) {
  %z = hymo.constant dense<0.0> : tensor<4xf32>
  %mask = hymo.greater %p, %z : tensor<4xf32>
  %m = hymo.mul %mask, %p : tensor<4xf32>
  %s = hymo.reduce_sum %m {dims = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// expected-error @+1 {{expected a result named "loss" (hymo.name), found none}}
func.func @forward(%p: tensor<4xf32>) -> tensor<4xf32> {
  return %p : tensor<4xf32>
}

// -----

// expected-error @+1 {{expected a function @forward to differentiate, found none}}
module {
  func.func @other(%p: tensor<4xf32>) -> tensor<4xf32> {
    return %p : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{expected the loss to be a float scalar tensor, got 'tensor<4xf32>'}}
func.func @forward(%p: tensor<4xf32>) -> (tensor<4xf32> {hymo.name = "loss"}) {
  return %p : tensor<4xf32>
}
