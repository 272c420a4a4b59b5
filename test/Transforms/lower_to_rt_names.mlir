// RUN: hymo-opt %s --hymo-lower-to-rt | FileCheck %s
// Names as the plan's JSON holds them: a function name or attribute name that
// is not UTF-8 is repaired (U+FFFD), as llvm::json repairs every key, and two
// names that repair to one key keep the last value. Before session 70 the
// lowering parsed its own text back and dropped a function whose name needed
// the repair (an empty plan, exit 0). (The runtime refuses attributes exp
// does not take, so this plan stops at the IR.)

// CHECK: hymo_rt.function attributes {inputs = [0], name = "g\EF\BF\BD", outputs = [1]} {
// CHECK-NEXT: hymo_rt.call {attrs = {"\EF\BF\BD" = 1 : i64}, op = "exp", operands = [0], results = [1]}
func.func @"g\FF"(%x: tensor<2x4xf32> {hymo.name = "x", hymo.role = "input"}) -> (tensor<2x4xf32> {hymo.name = "out"}) {
  %0 = hymo.exp %x {"\FF" = 1 : i64, "\FE" = 2 : i64} : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
