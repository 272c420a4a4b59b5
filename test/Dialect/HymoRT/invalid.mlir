// RUN: hymo-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{plan_c1: expected attribute 'arena_bytes', found none}}
hymo_rt.plan attributes {format = "hymo-plan", version = 1 : i64} {
}

// -----

hymo_rt.plan attributes {format = "hymo-plan", version = 1 : i64, arena_bytes = 0 : i64} {
  // expected-error @+1 {{buffer_c1: expected attribute 'storage', found none}}
  hymo_rt.buffer {id = 0 : i64, name = "x", dtype = "f32", shape = [2]}
}

// -----

hymo_rt.plan attributes {format = "hymo-plan", version = 1 : i64, arena_bytes = 0 : i64} {
  // expected-error @+1 {{function_c1: expected attribute 'name', found none}}
  hymo_rt.function attributes {inputs = []} {
  }
}

// -----

hymo_rt.plan attributes {format = "hymo-plan", version = 1 : i64, arena_bytes = 0 : i64} {
  hymo_rt.function attributes {name = "f"} {
    // expected-error @+1 {{call_c1: expected a string 'op' and arrays 'operands' and 'results'}}
    hymo_rt.call {op = 3 : i64, operands = [], results = []}
  }
}
