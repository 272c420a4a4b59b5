// hymo-emit-plan runs the runtime's plan check on what it is about to write:
// hand-written IR the runtime would refuse is an error naming the field, and
// no file is written.
// RUN: rm -f %t.json
// RUN: not hymo-opt %s -split-input-file --hymo-emit-plan=output=%t.json -o /dev/null 2>&1 | FileCheck %s
// RUN: not test -e %t.json

// CHECK: error: the runtime would refuse this plan: plan: buffers[0].init: only param and state buffers have an init, this one is input
func.func @f(%x: tensor<4xf32> {hymo.name = "x", hymo.role = "input", hymo.init = "normal:0.02"}) -> (tensor<4xf32> {hymo.name = "out"}) {
  %0 = hymo.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK: error: the runtime would refuse this plan: plan: buffers[0].shape[0]: expected a positive dim, found 0
func.func @forward(%x: tensor<0x4xf32> {hymo.name = "x", hymo.role = "input"}) -> (tensor<0x4xf32> {hymo.name = "out"}) {
  %0 = hymo.neg %x : tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}

// -----

// The pass's own checks of the argument attributes come first.
// CHECK: error: plan: argument "x" of @f has hymo.role "banana"; expected param, buffer, state or input
func.func @f(%x: tensor<4xf32> {hymo.name = "x", hymo.role = "banana"}) -> (tensor<4xf32> {hymo.name = "out"}) {
  %0 = hymo.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK: error: plan: argument "x" of @f has hymo.init "normal:abc"; expected zeros, a_log, fill:VALUE, normal:STD or uniform:BOUND
func.func @f(%x: tensor<4xf32> {hymo.name = "x", hymo.role = "param", hymo.init = "normal:abc", hymo.optimizer = "adamw"}) -> (tensor<4xf32> {hymo.name = "out"}) {
  %0 = hymo.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A plan is one file: two functions of one name, or two plans, are refused.
// CHECK: error: plan: a second hymo_rt.function named 'f'
hymo_rt.plan attributes {format = "hymo-plan", version = 1 : i64, arena_bytes = 128 : i64, config = {}} {
  hymo_rt.function attributes {name = "f"} {
  }
  hymo_rt.function attributes {name = "f"} {
  }
}

// -----

// CHECK: error: plan: the module holds more than one hymo_rt.plan
hymo_rt.plan attributes {format = "hymo-plan", version = 1 : i64, arena_bytes = 128 : i64, config = {}} {
}
hymo_rt.plan attributes {format = "hymo-plan", version = 1 : i64, arena_bytes = 128 : i64, config = {}} {
}

// -----

// The plan is written as it is built (not parsed back): a number JSON cannot
// hold is refused where it comes from.
// CHECK: error: plan: a constant holds a non-finite number (JSON has no NaN or Inf)
func.func @f(%x: tensor<4xf32> {hymo.name = "x", hymo.role = "input"}) -> (tensor<4xf32> {hymo.name = "out"}) {
  %c = hymo.constant dense<[1.0, 0x7FC00000, 2.0, 3.0]> : tensor<4xf32>
  %0 = hymo.mul %x, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK: error: plan: attribute "eps" holds a non-finite number (JSON has no NaN or Inf)
func.func @f(%x: tensor<2x4xf32> {hymo.name = "x", hymo.role = "input"}, %w: tensor<4xf32> {hymo.name = "w", hymo.role = "input"}) -> (tensor<2x4xf32> {hymo.name = "out"}) {
  %0 = hymo.rms_norm %x, %w {eps = 0x7FF0000000000000 : f64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// A config number JSON cannot hold is refused at the module (before session
// 70 the lowering's parse back failed as "a bug in the writer").
// CHECK: error: plan: the module's hymo.config holds a non-finite number (JSON has no NaN or Inf)
module attributes {hymo.config = "{\22model\22: {\22x\22: 1e400}}"} {
func.func @f(%x: tensor<4xf32> {hymo.name = "x", hymo.role = "input"}) -> (tensor<4xf32> {hymo.name = "out"}) {
  %0 = hymo.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
}
