// RUN: hymo-opt %s | hymo-opt | FileCheck %s
// The hymo_rt ops round-trip.

// CHECK: hymo_rt.plan attributes {arena_bytes = 128 : i64, config = {}, format = "hymo-plan", version = 1 : i64} {
// CHECK-NEXT: hymo_rt.buffer {dtype = "f32", id = 0 : i64, name = "x", shape = [2, 4], storage = "input"}
// CHECK-NEXT: hymo_rt.buffer {dtype = "f32", id = 1 : i64, name = "w", shape = [4], storage = "param"}
// CHECK-NEXT: hymo_rt.buffer {dtype = "f32", id = 2 : i64, name = "f:y", offset = 0 : i64, shape = [2, 4], storage = "arena"}
// CHECK-NEXT: hymo_rt.param {buffer = 1 : i64, name = "w", optimizer = "adamw"}
// CHECK-NEXT: hymo_rt.function attributes {inputs = [0], name = "f", outputs = [2]} {
// CHECK-NEXT: hymo_rt.call {attrs = {eps = 9.9999999999999995E-7 : f64}, op = "rms_norm", operands = [0, 1], results = [2]}
hymo_rt.plan attributes {format = "hymo-plan", version = 1 : i64, arena_bytes = 128 : i64, config = {}} {
  hymo_rt.buffer {id = 0 : i64, name = "x", dtype = "f32", shape = [2, 4], storage = "input"}
  hymo_rt.buffer {id = 1 : i64, name = "w", dtype = "f32", shape = [4], storage = "param"}
  hymo_rt.buffer {id = 2 : i64, name = "f:y", dtype = "f32", shape = [2, 4], storage = "arena", offset = 0 : i64}
  hymo_rt.param {name = "w", buffer = 1 : i64, optimizer = "adamw"}
  hymo_rt.function attributes {name = "f", inputs = [0], outputs = [2]} {
    hymo_rt.call {op = "rms_norm", operands = [0, 1], results = [2], attrs = {eps = 1.0e-6 : f64}}
  }
}
