#include "fused_program.h"

#include <cstdlib>
#include <sstream>

namespace hymo::rt {
namespace {

struct OpName {
  const char* name;
  FusedOp op;
  int arity;
};

constexpr OpName kOps[] = {
    {"neg", FusedOp::kNeg, 1},         {"exp", FusedOp::kExp, 1},
    {"log", FusedOp::kLog, 1},         {"sqrt", FusedOp::kSqrt, 1},
    {"rsqrt", FusedOp::kRsqrt, 1},     {"square", FusedOp::kSquare, 1},
    {"abs", FusedOp::kAbs, 1},         {"sigmoid", FusedOp::kSigmoid, 1},
    {"silu", FusedOp::kSilu, 1},       {"softplus", FusedOp::kSoftplus, 1},
    {"sin", FusedOp::kSin, 1},         {"cos", FusedOp::kCos, 1},
    {"isfinite", FusedOp::kIsfinite, 1}, {"add", FusedOp::kAdd, 2},
    {"sub", FusedOp::kSub, 2},         {"mul", FusedOp::kMul, 2},
    {"div", FusedOp::kDiv, 2},         {"max", FusedOp::kMax, 2},
    {"min", FusedOp::kMin, 2},         {"greater", FusedOp::kGreater, 2},
    {"select", FusedOp::kSelect, 3},   {"eye", FusedOp::kEye, 0},
};

}  // namespace

Status parse_fused_program(const std::string& program, int64_t n_inputs,
                           std::vector<FusedInstruction>* out) {
  out->clear();
  std::stringstream all(program);
  std::string text;
  int64_t defined = n_inputs;
  while (std::getline(all, text, ';')) {
    std::stringstream ss(text);
    std::vector<std::string> tok;
    for (std::string t; ss >> t;) tok.push_back(t);
    std::string where = "instruction " + std::to_string(out->size());
    if (tok.empty()) return error_status(where + ": empty");
    const OpName* found = nullptr;
    for (const OpName& o : kOps)
      if (tok[0] == o.name) found = &o;
    if (!found) return error_status(where + ": unknown op '" + tok[0] + "'");
    if (int(tok.size()) - 1 != found->arity)
      return error_status(where + ": expected " + std::to_string(found->arity) + " operands for " + tok[0] +
                          ", found " + std::to_string(tok.size() - 1));
    FusedInstruction inst;
    inst.op = found->op;
    inst.arity = found->arity;
    for (int k = 0; k < found->arity; ++k) {
      const std::string& s = tok[size_t(k) + 1];
      char* end = nullptr;
      if (s[0] == '%') {
        long long r = std::strtoll(s.c_str() + 1, &end, 10);
        if (end == s.c_str() + 1 || *end || r < 0 || r >= defined)
          return error_status(where + ": operand '" + s + "' is not a register below %" + std::to_string(defined));
        inst.operand[k].is_register = true;
        inst.operand[k].reg = r;
      } else {
        double v = std::strtod(s.c_str(), &end);
        if (end == s.c_str() || *end) return error_status(where + ": operand '" + s + "' is not a number");
        inst.operand[k].value = v;
      }
    }
    out->push_back(inst);
    ++defined;
  }
  if (out->empty()) return error_status("the program has no instruction");
  return ok_status();
}

}  // namespace hymo::rt
