// Finite-difference check of every differentiable op's VJP (FP64): each
// function is a small loss around one op; hymo-autodiff builds its
// gradient and hymo-gradcheck compares it with central differences.
//
// RUN: hymo-opt %s --pass-pipeline='builtin.module(hymo-autodiff{function=u_neg},hymo-autodiff{function=u_exp},hymo-autodiff{function=u_sqrt},hymo-autodiff{function=u_rsqrt},hymo-autodiff{function=u_square},hymo-autodiff{function=u_abs},hymo-autodiff{function=u_sigmoid},hymo-autodiff{function=u_silu},hymo-autodiff{function=u_softplus},hymo-autodiff{function=u_sin},hymo-autodiff{function=u_cos},hymo-autodiff{function=u_log},hymo-autodiff{function=b_add},hymo-autodiff{function=b_sub},hymo-autodiff{function=b_mul},hymo-autodiff{function=b_max},hymo-autodiff{function=b_min},hymo-autodiff{function=b_div},hymo-autodiff{function=select},hymo-autodiff{function=linear},hymo-autodiff{function=matmul_00},hymo-autodiff{function=matmul_01},hymo-autodiff{function=matmul_10},hymo-autodiff{function=matmul_11},hymo-autodiff{function=grouped_linear},hymo-autodiff{function=embedding},hymo-autodiff{function=reduce_sum},hymo-autodiff{function=reduce_mean},hymo-autodiff{function=reduce_max},hymo-autodiff{function=reduce_keep},hymo-autodiff{function=reshape},hymo-autodiff{function=transpose},hymo-autodiff{function=slice},hymo-autodiff{function=pad},hymo-autodiff{function=concat},hymo-autodiff{function=broadcast},hymo-autodiff{function=rms_norm},hymo-autodiff{function=softmax},hymo-autodiff{function=rope},hymo-autodiff{function=rope_inverse},hymo-autodiff{function=causal_attention},hymo-autodiff{function=gdn_recurrence},hymo-autodiff{function=moe},hymo-autodiff{function=cross_entropy},hymo-emit-plan{output=%t.json})' -o /dev/null
// RUN: hymo-gradcheck %t.json --forward u_neg --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward u_exp --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward u_sqrt --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward u_rsqrt --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward u_square --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward u_abs --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward u_sigmoid --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward u_silu --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward u_softplus --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward u_sin --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward u_cos --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward u_log --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward b_add --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward b_sub --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward b_mul --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward b_max --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward b_min --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward b_div --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward select --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward linear --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward matmul_00 --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward matmul_01 --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward matmul_10 --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward matmul_11 --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward grouped_linear --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward embedding --samples 8 --int-max embedding.ids=7 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward reduce_sum --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward reduce_mean --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward reduce_max --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward reduce_keep --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward reshape --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward transpose --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward slice --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward pad --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward concat --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward broadcast --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward rms_norm --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward softmax --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward rope --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward rope_inverse --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward causal_attention --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward gdn_recurrence --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward moe --samples 8 | FileCheck %s --check-prefix=CHECK
// RUN: hymo-gradcheck %t.json --forward cross_entropy --samples 8 --int-max cross_entropy.t=5 | FileCheck %s --check-prefix=CHECK
// CHECK-NOT: FAIL
// CHECK: parameter tensors within 1.0e-06

func.func @u_neg(%x: tensor<3x4xf64> {hymo.name = "u_neg.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "u_neg.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.neg %x : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @u_exp(%x: tensor<3x4xf64> {hymo.name = "u_exp.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "u_exp.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.exp %x : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @u_sqrt(%x: tensor<3x4xf64> {hymo.name = "u_sqrt.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "u_sqrt.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %e = hymo.exp %x : tensor<3x4xf64>
  %y = hymo.sqrt %e : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @u_rsqrt(%x: tensor<3x4xf64> {hymo.name = "u_rsqrt.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "u_rsqrt.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %e = hymo.exp %x : tensor<3x4xf64>
  %y = hymo.rsqrt %e : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @u_square(%x: tensor<3x4xf64> {hymo.name = "u_square.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "u_square.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.square %x : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @u_abs(%x: tensor<3x4xf64> {hymo.name = "u_abs.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "u_abs.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.abs %x : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @u_sigmoid(%x: tensor<3x4xf64> {hymo.name = "u_sigmoid.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "u_sigmoid.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.sigmoid %x : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @u_silu(%x: tensor<3x4xf64> {hymo.name = "u_silu.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "u_silu.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.silu %x : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @u_softplus(%x: tensor<3x4xf64> {hymo.name = "u_softplus.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "u_softplus.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.softplus %x : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @u_sin(%x: tensor<3x4xf64> {hymo.name = "u_sin.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "u_sin.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.sin %x : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @u_cos(%x: tensor<3x4xf64> {hymo.name = "u_cos.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "u_cos.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.cos %x : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @u_log(%x: tensor<3x4xf64> {hymo.name = "u_log.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "u_log.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %e = hymo.exp %x : tensor<3x4xf64>
  %y = hymo.log %e : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @b_add(%x: tensor<3x4xf64> {hymo.name = "b_add.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %z: tensor<3x4xf64> {hymo.name = "b_add.z", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "b_add.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.add %x, %z : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @b_sub(%x: tensor<3x4xf64> {hymo.name = "b_sub.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %z: tensor<3x4xf64> {hymo.name = "b_sub.z", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "b_sub.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.sub %x, %z : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @b_mul(%x: tensor<3x4xf64> {hymo.name = "b_mul.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %z: tensor<3x4xf64> {hymo.name = "b_mul.z", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "b_mul.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.mul %x, %z : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @b_max(%x: tensor<3x4xf64> {hymo.name = "b_max.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %z: tensor<3x4xf64> {hymo.name = "b_max.z", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "b_max.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.max %x, %z : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @b_min(%x: tensor<3x4xf64> {hymo.name = "b_min.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %z: tensor<3x4xf64> {hymo.name = "b_min.z", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "b_min.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.min %x, %z : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @b_div(%x: tensor<3x4xf64> {hymo.name = "b_div.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %z: tensor<3x4xf64> {hymo.name = "b_div.z", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "b_div.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %e = hymo.exp %z : tensor<3x4xf64>
  %y = hymo.div %x, %e : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @select(%x: tensor<3x4xf64> {hymo.name = "select.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %z: tensor<3x4xf64> {hymo.name = "select.z", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %c: tensor<3x4xf64> {hymo.name = "select.c", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4xf64> {hymo.name = "select.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %zero = hymo.constant dense<0.0> : tensor<3x4xf64>
  %m = hymo.greater %c, %zero : tensor<3x4xf64>
  %y = hymo.select %m, %x, %z : tensor<3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @linear(%x: tensor<2x3x4xf64> {hymo.name = "linear.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %w: tensor<5x4xf64> {hymo.name = "linear.w", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x3x5xf64> {hymo.name = "linear.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.linear %x, %w : (tensor<2x3x4xf64>, tensor<5x4xf64>) -> tensor<2x3x5xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x3x5xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2>} : (tensor<2x3x5xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @matmul_00(%a: tensor<2x3x4xf64> {hymo.name = "matmul_00.a", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %b: tensor<2x4x5xf64> {hymo.name = "matmul_00.b", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x3x5xf64> {hymo.name = "matmul_00.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.matmul %a, %b : (tensor<2x3x4xf64>, tensor<2x4x5xf64>) -> tensor<2x3x5xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x3x5xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2>} : (tensor<2x3x5xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @matmul_01(%a: tensor<2x3x4xf64> {hymo.name = "matmul_01.a", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %b: tensor<2x5x4xf64> {hymo.name = "matmul_01.b", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x3x5xf64> {hymo.name = "matmul_01.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.matmul %a, %b {transpose_b = true} : (tensor<2x3x4xf64>, tensor<2x5x4xf64>) -> tensor<2x3x5xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x3x5xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2>} : (tensor<2x3x5xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @matmul_10(%a: tensor<2x4x3xf64> {hymo.name = "matmul_10.a", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %b: tensor<2x4x5xf64> {hymo.name = "matmul_10.b", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x3x5xf64> {hymo.name = "matmul_10.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.matmul %a, %b {transpose_a = true} : (tensor<2x4x3xf64>, tensor<2x4x5xf64>) -> tensor<2x3x5xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x3x5xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2>} : (tensor<2x3x5xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @matmul_11(%a: tensor<2x4x3xf64> {hymo.name = "matmul_11.a", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %b: tensor<2x5x4xf64> {hymo.name = "matmul_11.b", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x3x5xf64> {hymo.name = "matmul_11.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.matmul %a, %b {transpose_a = true, transpose_b = true} : (tensor<2x4x3xf64>, tensor<2x5x4xf64>) -> tensor<2x3x5xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x3x5xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2>} : (tensor<2x3x5xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @grouped_linear(%x: tensor<3x4x5xf64> {hymo.name = "grouped_linear.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %w: tensor<3x2x5xf64> {hymo.name = "grouped_linear.w", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x4x2xf64> {hymo.name = "grouped_linear.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.grouped_linear %x, %w : (tensor<3x4x5xf64>, tensor<3x2x5xf64>) -> tensor<3x4x2xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x4x2xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2>} : (tensor<3x4x2xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @embedding(%table: tensor<7x4xf64> {hymo.name = "embedding.table", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x3x4xf64> {hymo.name = "embedding.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %ids: tensor<2x3xi32> {hymo.name = "embedding.ids", hymo.role = "input"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.embedding %table, %ids : (tensor<7x4xf64>, tensor<2x3xi32>) -> tensor<2x3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2>} : (tensor<2x3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @reduce_sum(%x: tensor<3x4x5xf64> {hymo.name = "reduce_sum.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x5xf64> {hymo.name = "reduce_sum.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.reduce_sum %x {dims = array<i64: 1>} : (tensor<3x4x5xf64>) -> tensor<3x5xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x5xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x5xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @reduce_mean(%x: tensor<3x4x5xf64> {hymo.name = "reduce_mean.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x5xf64> {hymo.name = "reduce_mean.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.reduce_mean %x {dims = array<i64: 1>} : (tensor<3x4x5xf64>) -> tensor<3x5xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x5xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x5xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @reduce_max(%x: tensor<3x4x5xf64> {hymo.name = "reduce_max.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x5xf64> {hymo.name = "reduce_max.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.reduce_max %x {dims = array<i64: 1>} : (tensor<3x4x5xf64>) -> tensor<3x5xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x5xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x5xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @reduce_keep(%x: tensor<3x4x5xf64> {hymo.name = "reduce_keep.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x1x1xf64> {hymo.name = "reduce_keep.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.reduce_sum %x {dims = array<i64: 1, 2>, keep_dims = true} : (tensor<3x4x5xf64>) -> tensor<3x1x1xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x1x1xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2>} : (tensor<3x1x1xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @reshape(%x: tensor<3x4xf64> {hymo.name = "reshape.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x6xf64> {hymo.name = "reshape.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.reshape %x : (tensor<3x4xf64>) -> tensor<2x6xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x6xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<2x6xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @transpose(%x: tensor<2x3x4xf64> {hymo.name = "transpose.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<4x2x3xf64> {hymo.name = "transpose.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.transpose %x {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf64>) -> tensor<4x2x3xf64>
  %loss_w = hymo.mul %y, %rw : tensor<4x2x3xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2>} : (tensor<4x2x3xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @slice(%x: tensor<3x4xf64> {hymo.name = "slice.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x2xf64> {hymo.name = "slice.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.slice %x {start = array<i64: 1, 1>, limit = array<i64: 3, 3>} : (tensor<3x4xf64>) -> tensor<2x2xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x2xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<2x2xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @pad(%x: tensor<2x2xf64> {hymo.name = "pad.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x5xf64> {hymo.name = "pad.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.pad %x {low = array<i64: 1, 2>, high = array<i64: 0, 1>} : (tensor<2x2xf64>) -> tensor<3x5xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x5xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x5xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @concat(%x: tensor<2x3xf64> {hymo.name = "concat.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %z: tensor<2x2xf64> {hymo.name = "concat.z", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x5xf64> {hymo.name = "concat.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.concat %x, %z {dim = 1 : i64} : (tensor<2x3xf64>, tensor<2x2xf64>) -> tensor<2x5xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x5xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<2x5xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @broadcast(%x: tensor<3x1xf64> {hymo.name = "broadcast.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x3x4xf64> {hymo.name = "broadcast.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.broadcast_in_dim %x {dims = array<i64: 1, 2>} : (tensor<3x1xf64>) -> tensor<2x3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2>} : (tensor<2x3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @rms_norm(%x: tensor<3x6xf64> {hymo.name = "rms_norm.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %w: tensor<6xf64> {hymo.name = "rms_norm.w", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x6xf64> {hymo.name = "rms_norm.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.rms_norm %x, %w {eps = 1.0e-6 : f64} : (tensor<3x6xf64>, tensor<6xf64>) -> tensor<3x6xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x6xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x6xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @softmax(%x: tensor<3x5xf64> {hymo.name = "softmax.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<3x5xf64> {hymo.name = "softmax.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.softmax %x : tensor<3x5xf64>
  %loss_w = hymo.mul %y, %rw : tensor<3x5xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<3x5xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @rope(%x: tensor<2x5x2x6xf64> {hymo.name = "rope.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x5x2x6xf64> {hymo.name = "rope.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.rope %x {theta = 10000.0 : f64} : tensor<2x5x2x6xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x5x2x6xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2, 3>} : (tensor<2x5x2x6xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @rope_inverse(%x: tensor<2x5x2x6xf64> {hymo.name = "rope_inverse.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x5x2x6xf64> {hymo.name = "rope_inverse.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.rope %x {theta = 100.0 : f64, inverse = true} : tensor<2x5x2x6xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x5x2x6xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2, 3>} : (tensor<2x5x2x6xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @causal_attention(%q: tensor<2x5x2x6xf64> {hymo.name = "causal_attention.q", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %k: tensor<2x5x2x6xf64> {hymo.name = "causal_attention.k", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %v: tensor<2x5x2x4xf64> {hymo.name = "causal_attention.v", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x5x2x4xf64> {hymo.name = "causal_attention.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.causal_attention %q, %k, %v {scale = 0.4 : f64} : (tensor<2x5x2x6xf64>, tensor<2x5x2x6xf64>, tensor<2x5x2x4xf64>) -> tensor<2x5x2x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x5x2x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2, 3>} : (tensor<2x5x2x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @gdn_recurrence(%v: tensor<2x7x3x4xf64> {hymo.name = "gdn_recurrence.v", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %b: tensor<2x7x3x5xf64> {hymo.name = "gdn_recurrence.b", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %c: tensor<2x7x3x5xf64> {hymo.name = "gdn_recurrence.c", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %g: tensor<2x7x3xf64> {hymo.name = "gdn_recurrence.g", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %a: tensor<3x5xf64> {hymo.name = "gdn_recurrence.a", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<2x7x3x4xf64> {hymo.name = "gdn_recurrence.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.gdn_recurrence %v, %b, %c, %g, %a {chunk_size = 3 : i64} : (tensor<2x7x3x4xf64>, tensor<2x7x3x5xf64>, tensor<2x7x3x5xf64>, tensor<2x7x3xf64>, tensor<3x5xf64>) -> tensor<2x7x3x4xf64>
  %loss_w = hymo.mul %y, %rw : tensor<2x7x3x4xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1, 2, 3>} : (tensor<2x7x3x4xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @moe(%x: tensor<8x3xf64> {hymo.name = "moe.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %gate: tensor<4x3xf64> {hymo.name = "moe.gate", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %bias: tensor<4xf64> {hymo.name = "moe.bias", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:0.1"}, %we: tensor<4x2x3xf64> {hymo.name = "moe.we", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<8x2xf64> {hymo.name = "moe.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %lg = hymo.linear %x, %gate : (tensor<8x3xf64>, tensor<4x3xf64>) -> tensor<8x4xf64>
  %p = hymo.softmax %lg : tensor<8x4xf64>
  %idx, %wt = hymo.moe_route %p, %bias {top_k = 2 : i64} : (tensor<8x4xf64>, tensor<4xf64>) -> (tensor<8x2xi32>, tensor<8x2xf64>)
  %xe, %slot = hymo.moe_dispatch %x, %idx {num_experts = 4 : i64, capacity = 3 : i64} : (tensor<8x3xf64>, tensor<8x2xi32>) -> (tensor<4x3x3xf64>, tensor<8x2xi32>)
  %ye = hymo.grouped_linear %xe, %we : (tensor<4x3x3xf64>, tensor<4x2x3xf64>) -> tensor<4x3x2xf64>
  %y = hymo.moe_combine %ye, %slot, %wt : (tensor<4x3x2xf64>, tensor<8x2xi32>, tensor<8x2xf64>) -> tensor<8x2xf64>
  %loss_w = hymo.mul %y, %rw : tensor<8x2xf64>
  %loss = hymo.reduce_sum %loss_w {dims = array<i64: 0, 1>} : (tensor<8x2xf64>) -> tensor<f64>
  return %loss : tensor<f64>
}
func.func @cross_entropy(%x: tensor<6x5xf64> {hymo.name = "cross_entropy.x", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %rw: tensor<f64> {hymo.name = "cross_entropy.rw", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "uniform:1"}, %t: tensor<6xi32> {hymo.name = "cross_entropy.t", hymo.role = "input"}) -> (tensor<f64> {hymo.name = "loss"}) {
  %y = hymo.cross_entropy %x, %t : (tensor<6x5xf64>, tensor<6xi32>) -> tensor<f64>
  %loss = hymo.mul %y, %rw : tensor<f64>
  return %loss : tensor<f64>
}
