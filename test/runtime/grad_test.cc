// The backward ops (docs/dialect.md "Backward ops") against central finite
// differences of the FORWARD kernels, in f64 on random non-zero inputs:
// with a random cotangent dout and L = sum(dout * forward(x)), the backward
// op's adjoint must match dL/dx to a relative error < 1e-6. Also: f32 and
// bf16 agree with f64, results do not depend on the thread count, and the
// loader rejects malformed calls of the new ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include "test_util.h"

namespace hymo_test {
namespace {

using hymo::rt::DType;

// One call of `op` in a plan, kept loaded so that finite differences can
// rerun it many times (run_op rebuilds the executor every time).
class OpRunner {
 public:
  OpRunner(const std::string& op, const std::vector<Tensor>& ins, const std::vector<std::pair<DType, Shape>>& outs,
           const std::map<std::string, Attr>& attrs = {}, int threads = 0)
      : n_in_(ins.size()), n_out_(outs.size()) {
    hymo::rt::Plan plan;
    hymo::rt::Function fn;
    fn.name = "f";
    hymo::rt::Call call;
    call.op = op;
    call.attrs = attrs;
    auto add = [&](const std::string& name, DType dt, const Shape& shape) {
      hymo::rt::BufferDesc b;
      b.id = int64_t(plan.buffers.size());
      b.name = name;
      b.dtype = dt;
      b.shape = shape;
      b.storage = hymo::rt::StorageKind::kState;
      plan.buffers.push_back(b);
      return b.id;
    };
    for (size_t i = 0; i < ins.size(); ++i) call.operands.push_back(add("in" + std::to_string(i), ins[i].dtype, ins[i].shape));
    for (size_t i = 0; i < outs.size(); ++i) call.results.push_back(add("out" + std::to_string(i), outs[i].first, outs[i].second));
    fn.calls.push_back(call);
    plan.functions.push_back(fn);
    hymo::rt::ExecutorOptions opt;
    opt.num_threads = threads;
    ex_ = std::make_unique<hymo::rt::CpuExecutor>(plan, opt);
  }

  std::vector<std::vector<double>> run(const std::vector<Tensor>& ins) {
    for (size_t i = 0; i < n_in_; ++i) ex_->set_values("in" + std::to_string(i), ins[i].v);
    ex_->run("f");
    std::vector<std::vector<double>> r;
    for (size_t i = 0; i < n_out_; ++i) r.push_back(ex_->values("out" + std::to_string(i)));
    return r;
  }

 private:
  size_t n_in_, n_out_;
  std::unique_ptr<hymo::rt::CpuExecutor> ex_;
};

// L = sum_r sum_i cot[r][i] * out[r][i] (an empty cot skips output r).
double loss_of(const std::vector<std::vector<double>>& outs, const std::vector<std::vector<double>>& cot) {
  double l = 0;
  for (size_t r = 0; r < cot.size(); ++r)
    for (size_t i = 0; i < cot[r].size(); ++i) l += cot[r][i] * outs[r][i];
  return l;
}

// Central differences of L with respect to every element of ins[which].
// `check` sees every perturbed forward's outputs (e.g. that a routing
// decision did not flip).
std::vector<double> fd_grad(OpRunner& fwd, std::vector<Tensor> ins, size_t which,
                            const std::vector<std::vector<double>>& cot,
                            const std::function<void(const std::vector<std::vector<double>>&)>& check = nullptr) {
  std::vector<double> g(ins[which].v.size());
  for (size_t i = 0; i < g.size(); ++i) {
    const double x = ins[which].v[i];
    const double h = 1e-5 * std::max(1.0, std::fabs(x));
    ins[which].v[i] = x + h;
    auto op = fwd.run(ins);
    ins[which].v[i] = x - h;
    auto om = fwd.run(ins);
    ins[which].v[i] = x;
    if (check) {
      check(op);
      check(om);
    }
    g[i] = (loss_of(op, cot) - loss_of(om, cot)) / (2 * h);
  }
  return g;
}

// max |got - want| / max |want| < tol (and want is not all zero).
void expect_rel(const std::vector<double>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0, err = 0;
  size_t worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::fabs(want[i]));
    const double e = std::fabs(got[i] - want[i]);
    if (!(e <= err)) {
      err = e;
      worst = i;
    }
  }
  ASSERT_GT(scale, 0.0) << what << ": reference is all zero";
  EXPECT_LT(err / scale, tol) << what << ": worst index " << worst << " got " << got[worst] << " want "
                              << want[worst] << " (scale " << scale << ")";
}

std::vector<double> random_values(std::mt19937_64& rng, size_t n, double lo = -1, double hi = 1) {
  return random_tensor(rng, DType::kF64, {int64_t(n)}, lo, hi).v;
}

constexpr double kFdTol = 1e-6;
const DType F64 = DType::kF64;

TEST(GradFd, EmbeddingGrad) {
  std::mt19937_64 rng(1);
  const int64_t V = 6, D = 4;
  Tensor table = random_tensor(rng, F64, {V, D});
  Tensor ids = int_tensor({2, 3}, {4, 1, 4, 0, 2, 4});  // repeats; ids 3 and 5 unused
  OpRunner fwd("embedding", {table, ids}, {{F64, {2, 3, D}}});
  Tensor dout = random_tensor(rng, F64, {2, 3, D});
  auto fd = fd_grad(fwd, {table, ids}, 0, {dout.v});
  auto r = run_op("embedding_grad", {ids, dout}, {{F64, {V, D}}});
  expect_rel(r[0].v, fd, kFdTol, "dtable");
  for (int64_t j = 0; j < D; ++j) {  // unused rows are exactly zero
    EXPECT_EQ(r[0].v[size_t(3 * D + j)], 0.0);
    EXPECT_EQ(r[0].v[size_t(5 * D + j)], 0.0);
  }
}

TEST(GradFd, RmsNormGrad) {
  std::mt19937_64 rng(2);
  const Shape xs{3, 5, 7};
  Tensor x = random_tensor(rng, F64, xs);
  Tensor w = random_tensor(rng, F64, {7});
  const std::map<std::string, Attr> attrs{{"eps", attr_f64(1e-2)}};
  OpRunner fwd("rms_norm", {x, w}, {{F64, xs}}, attrs);
  Tensor dout = random_tensor(rng, F64, xs);
  auto r = run_op("rms_norm_grad", {x, w, dout}, {{F64, xs}, {F64, {7}}}, attrs);
  expect_rel(r[0].v, fd_grad(fwd, {x, w}, 0, {dout.v}), kFdTol, "dx");
  expect_rel(r[1].v, fd_grad(fwd, {x, w}, 1, {dout.v}), kFdTol, "dw");
}

TEST(GradFd, SoftmaxGrad) {
  std::mt19937_64 rng(3);
  const Shape xs{4, 3, 6};
  Tensor x = random_tensor(rng, F64, xs, -3, 3);
  OpRunner fwd("softmax", {x}, {{F64, xs}});
  Tensor y{F64, xs, fwd.run({x})[0]};
  Tensor dout = random_tensor(rng, F64, xs);
  auto r = run_op("softmax_grad", {y, dout}, {{F64, xs}});
  expect_rel(r[0].v, fd_grad(fwd, {x}, 0, {dout.v}), kFdTol, "dx");
}

TEST(GradFd, CausalAttentionGrad) {
  std::mt19937_64 rng(4);
  const int64_t B = 2, T = 5, H = 3, Dk = 4, Dv = 3;
  Tensor q = random_tensor(rng, F64, {B, T, H, Dk}, -2, 2);
  Tensor k = random_tensor(rng, F64, {B, T, H, Dk}, -2, 2);
  Tensor v = random_tensor(rng, F64, {B, T, H, Dv});
  const std::map<std::string, Attr> attrs{{"scale", attr_f64(0.61)}};
  OpRunner fwd("causal_attention", {q, k, v}, {{F64, {B, T, H, Dv}}}, attrs);
  Tensor dout = random_tensor(rng, F64, {B, T, H, Dv});
  auto r = run_op("causal_attention_grad", {q, k, v, dout}, {{F64, q.shape}, {F64, k.shape}, {F64, v.shape}}, attrs);
  expect_rel(r[0].v, fd_grad(fwd, {q, k, v}, 0, {dout.v}), kFdTol, "dq");
  expect_rel(r[1].v, fd_grad(fwd, {q, k, v}, 1, {dout.v}), kFdTol, "dk");
  expect_rel(r[2].v, fd_grad(fwd, {q, k, v}, 2, {dout.v}), kFdTol, "dv");
}

struct GdnInputs {
  Tensor v, b, c, g, a, dout;
  std::vector<Tensor> fwd() const { return {v, b, c, g, a}; }
  std::vector<std::pair<DType, Shape>> grad_types() const {
    return {{v.dtype, v.shape}, {b.dtype, b.shape}, {c.dtype, c.shape}, {g.dtype, g.shape}, {a.dtype, a.shape}};
  }
};

GdnInputs gdn_inputs(std::mt19937_64& rng, DType dt, int64_t B, int64_t T, int64_t H, int64_t D, int64_t S) {
  GdnInputs in;
  in.v = random_tensor(rng, dt, {B, T, H, D});
  in.b = random_tensor(rng, dt, {B, T, H, S});
  in.c = random_tensor(rng, dt, {B, T, H, S});
  in.g = random_tensor(rng, dt, {B, T, H}, 0.05, 1.0);  // sigmoid-like gates
  in.a = random_tensor(rng, dt, {H, S}, -3.0, -0.1);    // A = -exp(A_log) < 0
  in.dout = random_tensor(rng, dt, {B, T, H, D});
  return in;
}

TEST(GradFd, GdnRecurrenceGrad) {
  std::mt19937_64 rng(5);
  const int64_t B = 2, T = 5, H = 2, D = 4, S = 3;
  GdnInputs in = gdn_inputs(rng, F64, B, T, H, D, S);
  const std::map<std::string, Attr> attrs{{"chunk_size", attr_int(4)}};  // T = 5: a partial last chunk
  OpRunner fwd("gdn_recurrence", in.fwd(), {{F64, in.v.shape}}, attrs);
  std::vector<Tensor> ops = in.fwd();
  ops.push_back(in.dout);
  auto r = run_op("gdn_recurrence_grad", ops, in.grad_types(), attrs);
  const char* names[] = {"dv", "db", "dc", "dg", "da"};
  for (size_t i = 0; i < 5; ++i) expect_rel(r[i].v, fd_grad(fwd, in.fwd(), i, {in.dout.v}), kFdTol, names[i]);
  // chunk_size only sets the checkpoint interval: every size gives the very
  // same bits.
  for (int64_t cs : {1, 2, 3, 5, 64}) {
    auto rc = run_op("gdn_recurrence_grad", ops, in.grad_types(), {{"chunk_size", attr_int(cs)}});
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(rc[i].v, r[i].v) << names[i] << " chunk_size " << cs;
  }
}

TEST(GradFd, MoeRouteGrad) {
  std::mt19937_64 rng(6);
  const int64_t N = 7, E = 4, K = 2;
  Tensor probs = random_tensor(rng, F64, {N, E}, 0.05, 1.0);
  Tensor bias = random_tensor(rng, F64, {E}, -0.3, 0.3);  // changes the selection, not the weights
  OpRunner fwd("moe_route", {probs, bias}, {{DType::kI32, {N, K}}, {F64, {N, K}}}, {{"top_k", attr_int(K)}});
  auto base = fwd.run({probs, bias});
  Tensor idx = int_tensor({N, K}, base[0]);
  Tensor dw = random_tensor(rng, F64, {N, K});
  auto fd = fd_grad(fwd, {probs, bias}, 0, {{}, dw.v}, [&](const std::vector<std::vector<double>>& o) {
    ASSERT_EQ(o[0], base[0]) << "a perturbation flipped the routing";
  });
  auto r = run_op("moe_route_grad", {probs, idx, dw}, {{F64, {N, E}}});
  expect_rel(r[0].v, fd, kFdTol, "dprobs");
  // And the bias has no gradient through the weights (it only selects).
  auto fdb = fd_grad(fwd, {probs, bias}, 1, {{}, dw.v});
  for (double x : fdb) EXPECT_NEAR(x, 0.0, 1e-9);
}

TEST(GradFd, MoeCombineGrad) {
  std::mt19937_64 rng(7);
  const int64_t N = 5, K = 2, E = 4, C = 2, D = 3;
  // Expert 0 is picked 4 times and expert 2 three times with capacity 2:
  // three assignments drop; expert 3 leaves a slot unused.
  Tensor idx = int_tensor({N, K}, {0, 1, 0, 2, 0, 3, 1, 2, 2, 0});
  Tensor x = random_tensor(rng, F64, {N, D});
  auto disp = run_op("moe_dispatch", {x, idx}, {{F64, {E, C, D}}, {DType::kI32, {N, K}}},
                     {{"num_experts", attr_int(E)}, {"capacity", attr_int(C)}});
  Tensor slot = int_tensor({N, K}, disp[1].v);
  int dropped = 0;
  for (double s : slot.v) dropped += s < 0;
  ASSERT_EQ(dropped, 3);  // expert 0 drops 2, expert 2 drops 1
  Tensor ye = random_tensor(rng, F64, {E, C, D});
  Tensor w = random_tensor(rng, F64, {N, K});
  OpRunner fwd("moe_combine", {ye, slot, w}, {{F64, {N, D}}});
  Tensor dout = random_tensor(rng, F64, {N, D});
  auto r = run_op("moe_combine_grad", {ye, slot, w, dout}, {{F64, ye.shape}, {F64, w.shape}});
  expect_rel(r[0].v, fd_grad(fwd, {ye, slot, w}, 0, {dout.v}), kFdTol, "dye");
  expect_rel(r[1].v, fd_grad(fwd, {ye, slot, w}, 2, {dout.v}), kFdTol, "dweights");
  for (size_t i = 0; i < slot.v.size(); ++i)
    if (slot.v[i] < 0) EXPECT_EQ(r[1].v[i], 0.0) << "dropped assignment " << i;
  for (int64_t j = 0; j < D; ++j) EXPECT_EQ(r[0].v[size_t((3 * C + 1) * D + j)], 0.0) << "unused slot";
}

TEST(GradFd, CrossEntropyGrad) {
  std::mt19937_64 rng(8);
  const int64_t N = 6, V = 5;
  Tensor logits = random_tensor(rng, F64, {N, V}, -3, 3);
  Tensor tg = int_tensor({N}, {4, 0, 2, 2, 1, 4});
  OpRunner fwd("cross_entropy", {logits, tg}, {{F64, {}}});
  Tensor dloss{F64, {}, {-1.7}};
  auto r = run_op("cross_entropy_grad", {logits, tg, dloss}, {{F64, {N, V}}});
  expect_rel(r[0].v, fd_grad(fwd, {logits, tg}, 0, {dloss.v}), kFdTol, "dlogits");
}

// The same calls in f32 (and bf16 for a few) agree with f64.
std::vector<Tensor> as_dtype(std::vector<Tensor> ts, DType dt) {
  for (Tensor& t : ts)
    if (t.dtype != DType::kI32) {
      t.dtype = dt;
      for (double& x : t.v) x = round_to(dt, x);
    }
  return ts;
}

void expect_f32_matches_f64(const std::string& op, const std::vector<Tensor>& ins,
                            const std::vector<std::pair<DType, Shape>>& outs, const std::map<std::string, Attr>& attrs,
                            DType low = DType::kF32, double tol = 1e-5) {
  std::vector<Tensor> lo = as_dtype(ins, low);
  std::vector<Tensor> hi = as_dtype(lo, DType::kF64);  // the same (rounded) values in f64
  std::vector<std::pair<DType, Shape>> lo_outs = outs, hi_outs = outs;
  for (auto& o : lo_outs)
    if (o.first != DType::kI32) o.first = low;
  for (auto& o : hi_outs)
    if (o.first != DType::kI32) o.first = DType::kF64;
  auto rl = run_op(op, lo, lo_outs, attrs);
  auto rh = run_op(op, hi, hi_outs, attrs);
  for (size_t i = 0; i < outs.size(); ++i)
    expect_rel(rl[i].v, rh[i].v, tol, op + " result " + std::to_string(i) + " in " + hymo::rt::dtype_name(low));
}

TEST(GradPrecision, F32AndBf16MatchF64) {
  std::mt19937_64 rng(9);
  const DType F = DType::kF32;
  expect_f32_matches_f64("embedding_grad", {int_tensor({4}, {1, 1, 0, 2}), random_tensor(rng, F, {4, 8})},
                         {{F, {3, 8}}}, {});
  Tensor x = random_tensor(rng, F, {70, 16});  // > one 64-row block of the dw sum
  expect_f32_matches_f64("rms_norm_grad", {x, random_tensor(rng, F, {16}), random_tensor(rng, F, {70, 16})},
                         {{F, {70, 16}}, {F, {16}}}, {{"eps", attr_f64(1e-6)}});
  expect_f32_matches_f64("softmax_grad", {random_tensor(rng, F, {5, 9}, 0.01, 0.3), random_tensor(rng, F, {5, 9})},
                         {{F, {5, 9}}}, {});
  const Shape qs{2, 9, 2, 8}, vs{2, 9, 2, 4};
  expect_f32_matches_f64("causal_attention_grad",
                         {random_tensor(rng, F, qs), random_tensor(rng, F, qs), random_tensor(rng, F, vs),
                          random_tensor(rng, F, vs)},
                         {{F, qs}, {F, qs}, {F, vs}}, {{"scale", attr_f64(0.35)}}, F, 1e-4);
  GdnInputs g = gdn_inputs(rng, F, 2, 11, 2, 5, 4);
  expect_f32_matches_f64("gdn_recurrence_grad", {g.v, g.b, g.c, g.g, g.a, g.dout}, g.grad_types(),
                         {{"chunk_size", attr_int(4)}}, F, 1e-4);
  expect_f32_matches_f64("moe_route_grad",
                         {random_tensor(rng, F, {3, 4}, 0.05, 1), int_tensor({3, 2}, {0, 3, 2, 1, 1, 0}),
                          random_tensor(rng, F, {3, 2})},
                         {{F, {3, 4}}}, {});
  expect_f32_matches_f64("moe_combine_grad",
                         {random_tensor(rng, F, {2, 2, 3}), int_tensor({3, 2}, {0, 2, -1, 1, 3, -1}),
                          random_tensor(rng, F, {3, 2}), random_tensor(rng, F, {3, 3})},
                         {{F, {2, 2, 3}}, {F, {3, 2}}}, {});
  const std::vector<Tensor> ce{random_tensor(rng, F, {4, 7}, -3, 3), int_tensor({4}, {6, 0, 3, 3}),
                               Tensor{F, {}, {0.5}}};
  expect_f32_matches_f64("cross_entropy_grad", ce, {{F, {4, 7}}}, {});
  // bf16 storage, f32 compute.
  expect_f32_matches_f64("cross_entropy_grad", ce, {{F, {4, 7}}}, {}, DType::kBF16, 1e-2);
  expect_f32_matches_f64("rms_norm_grad", {x, random_tensor(rng, F, {16}), random_tensor(rng, F, {70, 16})},
                         {{F, {70, 16}}, {F, {16}}}, {{"eps", attr_f64(1e-6)}}, DType::kBF16, 2e-2);
}

// Cross-row reductions (dw, dtable, da) are summed in a fixed order: the same
// bits on 1 thread and on 4.
TEST(GradDeterminism, SameBitsForAnyThreadCount) {
  std::mt19937_64 rng(10);
  auto both = [&](const std::string& op, const std::vector<Tensor>& ins,
                  const std::vector<std::pair<DType, Shape>>& outs, const std::map<std::string, Attr>& attrs) {
    OpRunner one(op, ins, outs, attrs, 1), four(op, ins, outs, attrs, 4);
    EXPECT_EQ(one.run(ins), four.run(ins)) << op;
  };
  const DType F = DType::kF32;
  std::vector<double> ids;
  for (int i = 0; i < 3000; ++i) ids.push_back(double((i * 7919) % 37));
  both("embedding_grad", {int_tensor({3000}, ids), random_tensor(rng, F, {3000, 16})}, {{F, {40, 16}}}, {});
  both("rms_norm_grad", {random_tensor(rng, F, {1000, 32}), random_tensor(rng, F, {32}),
                         random_tensor(rng, F, {1000, 32})},
       {{F, {1000, 32}}, {F, {32}}}, {{"eps", attr_f64(1e-6)}});
  GdnInputs g = gdn_inputs(rng, F, 4, 9, 3, 4, 5);
  both("gdn_recurrence_grad", {g.v, g.b, g.c, g.g, g.a, g.dout}, g.grad_types(), {{"chunk_size", attr_int(4)}});
}

TEST(GradRuntimeErrors, IndicesOutOfRange) {
  const DType F = DType::kF64;
  std::string err;
  run_op("embedding_grad", {int_tensor({3}, {0, 4, 1}), Tensor{F, {3, 1}, {1, 2, 3}}}, {{F, {4, 1}}}, {}, &err);
  EXPECT_NE(err.find("(embedding_grad): id 4 at index 1 out of range [0, 4)"), std::string::npos) << err;
  err.clear();
  run_op("moe_route_grad", {Tensor{F, {1, 3}, {0.2, 0.3, 0.5}}, int_tensor({1, 2}, {2, 3}), Tensor{F, {1, 2}, {1, 1}}},
         {{F, {1, 3}}}, {}, &err);
  EXPECT_NE(err.find("(moe_route_grad): expert index 3 at flat index 1 out of range [0, 3)"), std::string::npos)
      << err;
  err.clear();
  run_op("moe_combine_grad",
         {Tensor{F, {1, 2, 1}, {1, 2}}, int_tensor({1, 2}, {-2, 0}), Tensor{F, {1, 2}, {1, 1}}, Tensor{F, {1, 1}, {1}}},
         {{F, {1, 2, 1}}, {F, {1, 2}}}, {}, &err);
  EXPECT_NE(err.find("(moe_combine_grad): slot -2 at flat index 0 out of range [-1, 2)"), std::string::npos) << err;
  err.clear();
  run_op("cross_entropy_grad", {Tensor{F, {1, 2}, {1, 2}}, int_tensor({1}, {2}), Tensor{F, {}, {1}}}, {{F, {1, 2}}}, {},
         &err);
  EXPECT_NE(err.find("(cross_entropy_grad): target 2 at index 0 out of range [0, 2)"), std::string::npos) << err;
}

// Malformed calls of the new ops: the loader names the operand/result.
struct BadCall {
  const char* name;
  std::string op;
  std::vector<Tensor> ins;
  std::vector<std::pair<DType, Shape>> outs;
  std::map<std::string, Attr> attrs;
  const char* expected;
};

Tensor t64(Shape s) { return Tensor{DType::kF64, s, std::vector<double>(size_t(numel(s)), 0.5)}; }
Tensor t32(Shape s) { return Tensor{DType::kF32, s, std::vector<double>(size_t(numel(s)), 0.5)}; }
Tensor i32(Shape s) { return Tensor{DType::kI32, s, std::vector<double>(size_t(numel(s)), 0)}; }

std::vector<BadCall> bad_calls() {
  const DType F = DType::kF64;
  const std::map<std::string, Attr> eps{{"eps", attr_f64(1e-6)}}, sc{{"scale", attr_f64(0.5)}},
      ck{{"chunk_size", attr_int(4)}};
  const Shape q{1, 3, 2, 4}, v{1, 3, 2, 5}, gv{1, 3, 2, 4}, gb{1, 3, 2, 2}, gg{1, 3, 2}, ga{2, 2};
  return {
      {"embedding_grad_dout_rank", "embedding_grad", {i32({2, 3}), t64({6, 4})}, {{F, {5, 4}}}, {},
       "operands[1]: op embedding_grad expects rank 3, found f64[6,4]"},
      {"embedding_grad_dout_shape", "embedding_grad", {i32({2, 3}), t64({2, 2, 4})}, {{F, {5, 4}}}, {},
       "operands[1]: expected shape [2,3,4] (dout [..., D] with the dims of ids), found [2,2,4]"},
      {"embedding_grad_result", "embedding_grad", {i32({2, 3}), t64({2, 3, 4})}, {{F, {5, 3}}}, {},
       "results[0]: expected a f64[V,4] table adjoint (D and dtype of dout), found f64[5,3]"},
      {"embedding_grad_ids_float", "embedding_grad", {t64({2}), t64({2, 4})}, {{F, {5, 4}}}, {},
       "operands[0]: op embedding_grad expects an i32 operand, found f64[2]"},
      {"rms_norm_grad_dout", "rms_norm_grad", {t64({3, 4}), t64({4}), t64({3, 5})}, {{F, {3, 4}}, {F, {4}}}, eps,
       "operands[2]: expected shape [3,4] (dout like x), found [3,5]"},
      {"rms_norm_grad_dw", "rms_norm_grad", {t64({3, 4}), t64({4}), t64({3, 4})}, {{F, {3, 4}}, {F, {3}}}, eps,
       "results[1]: expected f64[4], found f64[3]"},
      {"rms_norm_grad_eps", "rms_norm_grad", {t64({3, 4}), t64({4}), t64({3, 4})}, {{F, {3, 4}}, {F, {4}}}, {},
       "attrs.eps: missing required attribute (a number) of op rms_norm_grad"},
      {"rms_norm_grad_dtype", "rms_norm_grad", {t64({3, 4}), t64({4}), t32({3, 4})}, {{F, {3, 4}}, {F, {4}}}, eps,
       "operands[2]: expected dtype f64 (as operand 0), found f32[3,4]"},
      {"softmax_grad_dout", "softmax_grad", {t64({3, 4}), t64({4, 3})}, {{F, {3, 4}}}, {},
       "operands[1]: expected shape [3,4] (dout like out), found [4,3]"},
      {"softmax_grad_result", "softmax_grad", {t64({3, 4}), t64({3, 4})}, {{DType::kF32, {3, 4}}}, {},
       "results[0]: expected f64[3,4], found f32[3,4]"},
      {"attention_grad_dout", "causal_attention_grad", {t64(q), t64(q), t64(v), t64({1, 3, 2, 4})},
       {{F, q}, {F, q}, {F, v}}, sc, "operands[3]: expected shape [1,3,2,5] (dout like v), found [1,3,2,4]"},
      {"attention_grad_dv", "causal_attention_grad", {t64(q), t64(q), t64(v), t64(v)}, {{F, q}, {F, q}, {F, q}}, sc,
       "results[2]: expected f64[1,3,2,5], found f64[1,3,2,4]"},
      {"attention_grad_scale", "causal_attention_grad", {t64(q), t64(q), t64(v), t64(v)}, {{F, q}, {F, q}, {F, v}},
       {{"scale", attr_bool(true)}}, "attrs.scale: expected a number, found true"},
      {"attention_grad_count", "causal_attention_grad", {t64(q), t64(q), t64(v), t64(v)}, {{F, q}, {F, q}}, sc,
       "results: op causal_attention_grad expects 3 results, found 2"},
      {"gdn_grad_dout", "gdn_recurrence_grad", {t64(gv), t64(gb), t64(gb), t64(gg), t64(ga), t64(gb)},
       {{F, gv}, {F, gb}, {F, gb}, {F, gg}, {F, ga}}, ck,
       "operands[5]: expected shape [1,3,2,4] (dout like v), found [1,3,2,2]"},
      {"gdn_grad_da", "gdn_recurrence_grad", {t64(gv), t64(gb), t64(gb), t64(gg), t64(ga), t64(gv)},
       {{F, gv}, {F, gb}, {F, gb}, {F, gg}, {F, {2, 3}}}, ck, "results[4]: expected f64[2,2], found f64[2,3]"},
      {"gdn_grad_chunk", "gdn_recurrence_grad", {t64(gv), t64(gb), t64(gb), t64(gg), t64(ga), t64(gv)},
       {{F, gv}, {F, gb}, {F, gb}, {F, gg}, {F, ga}}, {{"chunk_size", attr_int(0)}},
       "attrs.chunk_size: expected chunk_size >= 1, found 0"},
      {"gdn_grad_count", "gdn_recurrence_grad", {t64(gv), t64(gb), t64(gb), t64(gg), t64(ga)},
       {{F, gv}, {F, gb}, {F, gb}, {F, gg}, {F, ga}}, ck, "operands: op gdn_recurrence_grad expects 6 operands, found 5"},
      {"moe_route_grad_rows", "moe_route_grad", {t64({4, 3}), i32({5, 2}), t64({5, 2})}, {{F, {4, 3}}}, {},
       "operands[1]: expected indices [4,K] (N of probs), found [5,2]"},
      {"moe_route_grad_dweights", "moe_route_grad", {t64({4, 3}), i32({4, 2}), t64({4, 3})}, {{F, {4, 3}}}, {},
       "operands[2]: expected shape [4,2] (dweights [N,K] like indices), found [4,3]"},
      {"moe_route_grad_attr", "moe_route_grad", {t64({4, 3}), i32({4, 2}), t64({4, 2})}, {{F, {4, 3}}},
       {{"top_k", attr_int(2)}}, "attrs.top_k: unknown attribute for op moe_route_grad (it takes none)"},
      {"moe_combine_grad_dout", "moe_combine_grad", {t64({2, 3, 4}), i32({5, 2}), t64({5, 2}), t64({5, 3})},
       {{F, {2, 3, 4}}, {F, {5, 2}}}, {},
       "operands[3]: expected shape [5,4] (dout [N,D], N of slot, D of ye), found [5,3]"},
      {"moe_combine_grad_dye", "moe_combine_grad", {t64({2, 3, 4}), i32({5, 2}), t64({5, 2}), t64({5, 4})},
       {{F, {2, 3, 5}}, {F, {5, 2}}}, {}, "results[0]: expected f64[2,3,4], found f64[2,3,5]"},
      {"moe_combine_grad_slot_float", "moe_combine_grad", {t64({2, 3, 4}), t64({5, 2}), t64({5, 2}), t64({5, 4})},
       {{F, {2, 3, 4}}, {F, {5, 2}}}, {}, "operands[1]: op moe_combine_grad expects an i32 operand, found f64[5,2]"},
      {"cross_entropy_grad_dloss", "cross_entropy_grad", {t64({3, 5}), i32({3}), t64({1})}, {{F, {3, 5}}}, {},
       "operands[2]: expected shape [] (dloss, a scalar), found [1]"},
      {"cross_entropy_grad_targets", "cross_entropy_grad", {t64({3, 5}), i32({5}), t64({})}, {{F, {3, 5}}}, {},
       "operands[1]: expected shape [3] (targets [N], N the rows of logits), found [5]"},
      {"cross_entropy_grad_result", "cross_entropy_grad", {t64({3, 5}), i32({3}), t64({})}, {{F, {}}}, {},
       "results[0]: expected f64[3,5], found f64[]"},
      {"sin_int", "sin", {i32({3})}, {{F, {3}}}, {}, "operands[0]: op sin expects a float operand"},
      {"cos_shape", "cos", {t64({3})}, {{F, {4}}}, {}, "results[0]: expected f64[3], found f64[4]"},
  };
}

TEST(GradValidation, LoaderNamesTheField) {
  for (const BadCall& c : bad_calls()) {
    std::string err;
    run_op(c.op, c.ins, c.outs, c.attrs, &err);
    EXPECT_NE(err.find(std::string("plan: functions.f.calls[0].") + c.expected), std::string::npos)
        << c.name << "\n  got: " << err << "\n  expected: " << c.expected;
  }
}

// A result that IS an operand's buffer (the compiler's in-place updates of
// donated state) is accepted for elementwise ops and rejected for others.
TEST(InPlace, ElementwiseOpsAcceptTheirOperandAsResult) {
  std::mt19937_64 rng(11);
  for (DType dt : {DType::kF32, DType::kF64, DType::kBF16}) {
    const std::string dn = hymo::rt::dtype_name(dt);
    // Multiples of 1/64: exact in every float dtype (bf16 included).
    auto exact = [&] {
      Tensor t = random_tensor(rng, dt, {37});
      for (double& x : t.v) x = std::round(x * 64) / 64 + (x > 0 ? 1.0 / 64 : -1.0 / 64);
      return t;
    };
    Tensor a = exact(), b = exact();
    Tensor c = random_tensor(rng, dt, {37});
    for (size_t i = 0; i < c.v.size(); i += 2) c.v[i] = 0;
    for (int64_t alias : {0, 1}) {
      for (const char* op : {"add", "sub", "mul", "max"}) {
        auto want = run_op(op, {a, b}, {{dt, {37}}});
        auto got = run_op(op, {a, b}, {{dt, {37}}}, {}, nullptr, {alias});
        EXPECT_EQ(got[0].v, want[0].v) << op << " " << dn << " into operand " << alias;
      }
    }
    for (int64_t alias : {0, 1, 2}) {
      auto want = run_op("select", {c, a, b}, {{dt, {37}}});
      auto got = run_op("select", {c, a, b}, {{dt, {37}}}, {}, nullptr, {alias});
      EXPECT_EQ(got[0].v, want[0].v) << "select " << dn << " into operand " << alias;
    }
    for (const char* op : {"neg", "sin", "cos", "exp"}) {
      auto want = run_op(op, {a}, {{dt, {37}}});
      auto got = run_op(op, {a}, {{dt, {37}}}, {}, nullptr, {0});
      EXPECT_EQ(got[0].v, want[0].v) << op << " " << dn << " in place";
    }
    // reshape between two buffers of identical shape: a plain copy; and onto
    // its own operand: a no-op.
    auto copy = run_op("reshape", {a}, {{dt, {37}}});
    EXPECT_EQ(copy[0].v, a.v) << "reshape copy " << dn;
    auto self = run_op("reshape", {a}, {{dt, {37}}}, {}, nullptr, {0});
    EXPECT_EQ(self[0].v, a.v) << "reshape in place " << dn;
  }
  // softmax_grad reads a row whole before writing it: in place too.
  Tensor y = random_tensor(rng, DType::kF64, {3, 5}, 0.05, 0.4), dy = random_tensor(rng, DType::kF64, {3, 5});
  auto want = run_op("softmax_grad", {y, dy}, {{DType::kF64, {3, 5}}});
  for (int64_t alias : {0, 1})
    EXPECT_EQ(run_op("softmax_grad", {y, dy}, {{DType::kF64, {3, 5}}}, {}, nullptr, {alias})[0].v, want[0].v);
  // Not for ops that read across elements after writing.
  std::string err;
  run_op("rms_norm_grad", {t64({3, 4}), t64({4}), t64({3, 4})}, {{DType::kF64, {3, 4}}, {DType::kF64, {4}}},
         {{"eps", attr_f64(1e-6)}}, &err, {2});
  EXPECT_NE(err.find("overlaps operands[2] buffer 2 'in2' (op rms_norm_grad cannot run in place)"), std::string::npos)
      << err;
}

}  // namespace
}  // namespace hymo_test
