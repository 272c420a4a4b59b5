// RUN: hymo-opt %s --hymo-lower-to-rt | FileCheck %s
// The plan in IR form: buffers with their storage and arena offsets (the
// second temporary reuses the first one's slot), the parameter table, and
// the entry point's calls; the hymo function is gone.
// RUN: hymo-opt %s --hymo-emit-plan=output=%t.direct.json -o /dev/null
// RUN: hymo-opt %s --hymo-lower-to-rt --hymo-emit-plan=output=%t.lowered.json -o /dev/null
// RUN: %python -c "import json,sys; sys.exit(json.load(open('%t.direct.json')) != json.load(open('%t.lowered.json')))"

// CHECK-NOT: func.func
// CHECK: hymo_rt.plan attributes {arena_bytes = 128 : i64
// CHECK: hymo_rt.buffer {dtype = "f32", id = 0 : i64, init = {zeros = true}, name = "w", shape = [4], storage = "param"}
// CHECK: hymo_rt.buffer {dtype = "f32", id = 1 : i64, name = "x", shape = [4], storage = "input"}
// CHECK: hymo_rt.buffer {dtype = "f32", id = 2 : i64, name = "f:%0", offset = 0 : i64, shape = [4], storage = "arena"}
// CHECK: hymo_rt.buffer {dtype = "f32", id = 3 : i64, name = "f:%1", offset = 64 : i64, shape = [4], storage = "arena"}
// CHECK: hymo_rt.buffer {dtype = "f32", id = 4 : i64, name = "f:out", offset = 0 : i64, shape = [4], storage = "arena"}
// CHECK: hymo_rt.param {buffer = 0 : i64, name = "w", optimizer = "adamw"}
// CHECK: hymo_rt.function attributes {inputs = [1], name = "f", outputs = [4]} {
// CHECK-NEXT: hymo_rt.call {op = "mul", operands = [0, 1], results = [2]}
// CHECK-NEXT: hymo_rt.call {op = "exp", operands = [2], results = [3]}
// CHECK-NEXT: hymo_rt.call {op = "neg", operands = [3], results = [4]}
func.func @f(%w: tensor<4xf32> {hymo.name = "w", hymo.role = "param", hymo.optimizer = "adamw", hymo.init = "zeros"},
             %x: tensor<4xf32> {hymo.name = "x", hymo.role = "input"}) -> (tensor<4xf32> {hymo.name = "out"}) {
  %0 = hymo.mul %w, %x : tensor<4xf32>
  %1 = hymo.exp %0 : tensor<4xf32>
  %2 = hymo.neg %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
