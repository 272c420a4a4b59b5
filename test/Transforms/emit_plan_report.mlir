// RUN: hymo-opt %s --hymo-emit-plan="output=%t.json report=true" -o /dev/null 2>&1 | FileCheck %s
// report=true prints each function's planned peak beside the most bytes its
// values hold live at once. Here first-fit leaves a 64-byte hole (%a's slot,
// freed after %c reads it) that %d's 128 bytes do not fit: peak 384 bytes,
// while at most 320 (%b, %c, %d) are live at once.

// In @g, %a's and %b's slots, freed together, merge into one 128-byte gap
// that %d takes: peak 192, the bound (kept separate, the gaps would not hold
// %d and the peak would be 320).

// CHECK: hymo plan: 8 calls, arena 384 bytes planned (peak), 704 bytes without reuse
// CHECK: hymo plan:   @f peak 384 bytes (at most 320 bytes live at once)
// CHECK: hymo plan:   @g peak 192 bytes (at most 192 bytes live at once)
func.func @f(%x: tensor<16xf32> {hymo.name = "x", hymo.role = "input"},
             %y: tensor<32xf32> {hymo.name = "y", hymo.role = "input"})
    -> (tensor<32xf32> {hymo.name = "b"}, tensor<16xf32> {hymo.name = "c"},
        tensor<32xf32> {hymo.name = "d"}) {
  %a = hymo.exp %x : tensor<16xf32>
  %b = hymo.exp %y : tensor<32xf32>
  %c = hymo.neg %a : tensor<16xf32>
  %d = hymo.neg %y : tensor<32xf32>
  return %b, %c, %d : tensor<32xf32>, tensor<16xf32>, tensor<32xf32>
}

func.func @g(%x: tensor<16xf32> {hymo.name = "x", hymo.role = "input"},
             %y: tensor<32xf32> {hymo.name = "y", hymo.role = "input"})
    -> (tensor<16xf32> {hymo.name = "c"}, tensor<32xf32> {hymo.name = "d"}) {
  %a = hymo.exp %x : tensor<16xf32>
  %b = hymo.neg %x : tensor<16xf32>
  %c = hymo.add %a, %b : tensor<16xf32>
  %d = hymo.neg %y : tensor<32xf32>
  return %c, %d : tensor<16xf32>, tensor<32xf32>
}
