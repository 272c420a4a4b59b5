// A hymo_rt plan whose fields have no JSON form is refused at the field, not
// written (and not a crash): dense arrays, types, dense elements, non-finite
// numbers.
// RUN: hymo-opt %s -split-input-file -verify-diagnostics --hymo-emit-plan=output=%t.json -o /dev/null

hymo_rt.plan attributes {format = "hymo-plan", version = 1 : i64, arena_bytes = 128 : i64, config = {}} {
  // expected-error @+1 {{plan: field 'shape' holds an attribute the plan format has no JSON for: array<i64: 2, 4>}}
  hymo_rt.buffer {id = 0 : i64, name = "x", dtype = "f32", shape = array<i64: 2, 4>, storage = "input"}
  hymo_rt.function attributes {name = "f", inputs = [0], outputs = [0]} {
  }
}

// -----

hymo_rt.plan attributes {format = "hymo-plan", version = 1 : i64, arena_bytes = 128 : i64, config = {}} {
  // expected-error @+1 {{plan: field 'dtype' holds an attribute the plan format has no JSON for: f32}}
  hymo_rt.buffer {id = 0 : i64, name = "x", dtype = f32, shape = [2, 4], storage = "input"}
  hymo_rt.function attributes {name = "f", inputs = [0], outputs = [0]} {
  }
}

// -----

hymo_rt.plan attributes {format = "hymo-plan", version = 1 : i64, arena_bytes = 128 : i64, config = {}} {
  // expected-error @+1 {{plan: field 'init' holds a non-finite number (JSON has no NaN or Inf)}}
  hymo_rt.buffer {id = 0 : i64, name = "x", dtype = "f32", shape = [2, 4], storage = "input", init = {fill = 0x7FC00000 : f32}}
  hymo_rt.function attributes {name = "f", inputs = [0], outputs = [0]} {
  }
}
