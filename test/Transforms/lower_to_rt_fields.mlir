// RUN: hymo-opt %s --hymo-lower-to-rt | FileCheck %s
// RUN: hymo-opt %s --hymo-emit-plan=output=%t.direct.json -o /dev/null
// RUN: hymo-opt %s --hymo-lower-to-rt --hymo-emit-plan=output=%t.lowered.json -o /dev/null
// RUN: %python -c "import json,sys; sys.exit(json.load(open('%t.direct.json')) != json.load(open('%t.lowered.json')))"
// Every kind of field the plan writer makes, as hymo-lower-to-rt builds it
// (since session 70 straight from the writer's records, no text parsed back):
// each field is the attribute its JSON text parses to, so an integral number
// is an i64 (2, the seeds, a_log's 0) and any other an f64 (0.5, 1e-6, an f32
// 1e20 beyond i64); the config's object (an empty key among them), the four init rules, a constant, a
// call's float attribute, two functions in module order. Compared against the
// plan written without the lowering.

// CHECK-NOT: func.func
// CHECK: hymo_rt.plan attributes {arena_bytes = 128 : i64, config = {"" = 5 : i64, model = {norm_eps = 9.9999999999999995E-7 : f64, weights = [5.000000e-01, 2, 3]}, training = {seed = 7 : i64}}, format = "hymo-plan", producer = "hymo-opt --hymo-emit-plan", version = 1 : i64} {
// CHECK-NEXT: hymo_rt.buffer {dtype = "f32", id = 0 : i64, init = {seed = 7000021 : i64, uniform = [-2.500000e-01, 2.500000e-01]}, name = "w", shape = [2, 4], storage = "param"}
// CHECK-NEXT: hymo_rt.buffer {dtype = "f32", id = 1 : i64, init = {normal = [0, 2.000000e-02], seed = 7000022 : i64}, name = "n", shape = [4], storage = "param"}
// CHECK-NEXT: hymo_rt.buffer {dtype = "f32", id = 2 : i64, init = {data = [0, 0.69314718055994529]}, name = "a", shape = [2, 1], storage = "param"}
// CHECK-NEXT: hymo_rt.buffer {dtype = "f32", id = 3 : i64, init = {fill = 2 : i64}, name = "s", shape = [4], storage = "state"}
// CHECK-NEXT: hymo_rt.buffer {dtype = "f32", id = 4 : i64, name = "x", shape = [2, 4], storage = "input"}
// CHECK-NEXT: hymo_rt.buffer {data = [5.000000e-01, 2, 0, 1.0000000200408773E+20], dtype = "f32", id = 5 : i64, name = "f:const0", shape = [4], storage = "constant"}
// CHECK-NEXT: hymo_rt.buffer {dtype = "f32", id = 6 : i64, name = "f:%1", offset = 0 : i64, shape = [2, 4], storage = "arena"}
// CHECK-NEXT: hymo_rt.buffer {dtype = "f32", id = 7 : i64, name = "f:out", offset = 64 : i64, shape = [2, 4], storage = "arena"}
// CHECK-NEXT: hymo_rt.buffer {dtype = "f32", id = 8 : i64, name = "f:s2", offset = 0 : i64, shape = [4], storage = "arena"}
// CHECK-NEXT: hymo_rt.buffer {dtype = "f32", id = 9 : i64, name = "g:out", offset = 0 : i64, shape = [2, 4], storage = "arena"}
// CHECK-NEXT: hymo_rt.param {buffer = 0 : i64, name = "w", optimizer = "normuon"}
// CHECK-NEXT: hymo_rt.param {buffer = 1 : i64, name = "n", optimizer = "adamw"}
// CHECK-NEXT: hymo_rt.param {buffer = 2 : i64, name = "a", optimizer = "adamw"}
// CHECK-NEXT: hymo_rt.function attributes {inputs = [4], name = "f", outputs = [7, 8]} {
// CHECK-NEXT: hymo_rt.call {op = "mul", operands = [0, 4], results = [6]}
// CHECK-NEXT: hymo_rt.call {attrs = {eps = 9.9999999999999995E-7 : f64}, op = "rms_norm", operands = [6, 1], results = [7]}
// CHECK-NEXT: hymo_rt.call {op = "mul", operands = [3, 5], results = [8]}
// CHECK-NEXT: }
// CHECK-NEXT: hymo_rt.function attributes {inputs = [4], name = "g", outputs = [9]} {
// CHECK-NEXT: hymo_rt.call {op = "exp", operands = [4], results = [9]}
// CHECK-NEXT: }

module attributes {hymo.config = "{\22\22: 5, \22training\22: {\22seed\22: 7}, \22model\22: {\22norm_eps\22: 1e-06, \22weights\22: [0.5, 2.0, 3]}}"} {
func.func @f(%w: tensor<2x4xf32> {hymo.name = "w", hymo.role = "param", hymo.optimizer = "normuon", hymo.init = "uniform:0.25"},
             %n: tensor<4xf32> {hymo.name = "n", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "normal:0.02"},
             %a: tensor<2x1xf32> {hymo.name = "a", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "a_log"},
             %s: tensor<4xf32> {hymo.name = "s", hymo.role = "state", hymo.init = "fill:2"},
             %x: tensor<2x4xf32> {hymo.name = "x", hymo.role = "input"}) -> (tensor<2x4xf32> {hymo.name = "out"}, tensor<4xf32> {hymo.name = "s2"}) {
  %c = hymo.constant dense<[0.5, 2.0, -0.0, 1.0e20]> : tensor<4xf32>
  %0 = hymo.mul %w, %x : tensor<2x4xf32>
  %1 = hymo.rms_norm %0, %n {eps = 1.0e-06 : f64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = hymo.mul %s, %c : tensor<4xf32>
  return %1, %2 : tensor<2x4xf32>, tensor<4xf32>
}
func.func @g(%x: tensor<2x4xf32> {hymo.name = "x", hymo.role = "input"}) -> (tensor<2x4xf32> {hymo.name = "out"}) {
  %0 = hymo.exp %x : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
}
