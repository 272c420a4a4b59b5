// The program of a fused_elementwise call (docs/dialect.md): instructions
// `OP A [B [C]]` separated by ';', operands `%N` (a register) or a number.
// Registers 0..n_inputs-1 are the inputs; instruction i defines n_inputs + i.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hymo/rt/status.h"

namespace hymo::rt {

enum class FusedOp {
  kNeg, kExp, kLog, kSqrt, kRsqrt, kSquare, kAbs, kSigmoid, kSilu, kSoftplus, kSin, kCos,
  kIsfinite, kAdd, kSub, kMul, kDiv, kMax, kMin, kGreater, kSelect,
  kEye  // no operands: 1 on the diagonal of the results' last two dims
};

struct FusedOperand {
  bool is_register = false;
  int64_t reg = 0;     // is_register
  double value = 0.0;  // a literal
};

struct FusedInstruction {
  FusedOp op = FusedOp::kNeg;
  int arity = 1;  // 0 .. 3
  FusedOperand operand[3];
};

// Parses `program` for `n_inputs` inputs; an error names what is wrong
// (`instruction 2: expected 2 operands for mul, found 1`).
Status parse_fused_program(const std::string& program, int64_t n_inputs,
                           std::vector<FusedInstruction>* out);

}  // namespace hymo::rt
