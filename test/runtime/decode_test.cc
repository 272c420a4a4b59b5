// The decode ops (kernels_decode.cc) against the forward kernels and plain
// reference loops, and the compiled @decode_step against the full forward's
// @logits (docs/sampling.md): token by token, the decode step's logits equal
// the forward's at every position.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "hymo/rt/api.h"
#include "test_util.h"

namespace {

using namespace hymo_test;
using hymo::rt::DType;

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << "at " << i;
}

Tensor scalar_pos(int64_t p) { return int_tensor({}, {double(p)}); }

class Decode : public ::testing::TestWithParam<DType> {
 protected:
  DType dt() const { return GetParam(); }
  double tol() const { return dt() == DType::kF64 ? 1e-12 : 1e-5; }
  std::mt19937_64 rng{42};
};

TEST_P(Decode, RopeAtMatchesRopeRowByRow) {
  const int64_t T = 9, H = 2, R = 8;
  Tensor x = random_tensor(rng, dt(), {1, T, H, R});
  auto full = run_op("rope", {x}, {{dt(), {1, T, H, R}}}, {{"theta", attr_f64(10000)}});
  for (int64_t t = 0; t < T; ++t) {
    Tensor row{dt(), {1, H, R}, std::vector<double>(x.v.begin() + t * H * R, x.v.begin() + (t + 1) * H * R)};
    auto r = run_op("rope_at", {row, scalar_pos(t)}, {{dt(), {1, H, R}}}, {{"theta", attr_f64(10000)}});
    expect_close(r[0].v, std::vector<double>(full[0].v.begin() + t * H * R, full[0].v.begin() + (t + 1) * H * R), 0);
  }
}

TEST_P(Decode, GdnStepIteratedMatchesRecurrence) {
  const int64_t B = 2, T = 7, H = 3, D = 5, S = 4;
  Tensor v = random_tensor(rng, dt(), {B, T, H, D});
  Tensor b = random_tensor(rng, dt(), {B, T, H, S});
  Tensor c = random_tensor(rng, dt(), {B, T, H, S});
  Tensor g = random_tensor(rng, dt(), {B, T, H}, 0.05, 1.0);
  Tensor a = random_tensor(rng, dt(), {H, S}, -3.0, -0.1);
  auto full = run_op("gdn_recurrence", {v, b, c, g, a}, {{dt(), {B, T, H, D}}}, {{"chunk_size", attr_int(4)}});
  Tensor state{dt(), {B, H, S, D}, std::vector<double>(size_t(B * H * S * D), 0.0)};
  auto step_of = [&](const Tensor& t, int64_t step, int64_t inner) {
    Tensor r{dt(), {}, {}};
    r.shape = t.shape;
    r.shape.erase(r.shape.begin() + 1);
    for (int64_t bb = 0; bb < B; ++bb)
      for (int64_t i = 0; i < inner; ++i) r.v.push_back(t.v[size_t((bb * T + step) * inner + i)]);
    return r;
  };
  for (int64_t t = 0; t < T; ++t) {
    auto r = run_op("gdn_step", {step_of(v, t, H * D), step_of(b, t, H * S), step_of(c, t, H * S), step_of(g, t, H), a, state},
                    {{dt(), {B, H, D}}, {dt(), {B, H, S, D}}});
    std::vector<double> want = step_of(full[0], t, H * D).v;
    expect_close(r[0].v, want, tol());
    state.v = r[1].v;
  }
}

TEST_P(Decode, CacheWrite) {
  Tensor cache = random_tensor(rng, dt(), {2, 4, 3});
  Tensor x = random_tensor(rng, dt(), {2, 3});
  auto r = run_op("cache_write", {cache, x, scalar_pos(2)}, {{dt(), {2, 4, 3}}});
  std::vector<double> want = cache.v;
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 3; ++j) want[size_t((b * 4 + 2) * 3 + j)] = x.v[size_t(b * 3 + j)];
  expect_close(r[0].v, want, 0);
  std::string err;
  run_op("cache_write", {cache, x, scalar_pos(4)}, {{dt(), {2, 4, 3}}}, {}, &err);
  EXPECT_NE(err.find("(cache_write): position 4 out of range [0, 4)"), std::string::npos) << err;
  err.clear();
  run_op("cache_write", {cache, x, scalar_pos(-1)}, {{dt(), {2, 4, 3}}}, {}, &err);
  EXPECT_NE(err.find("position -1 out of range"), std::string::npos) << err;
}

// Reference: materialize k_nope and v per position (no absorption).
TEST_P(Decode, LatentAttentionStepMatchesReference) {
  const int64_t B = 2, H = 2, dn = 3, dr = 4, dv = 5, L = 6, r = 7, pos = 3;
  const double scale = 0.3, eps = 1e-6;
  Tensor qn = random_tensor(rng, dt(), {B, H, dn});
  Tensor qr = random_tensor(rng, dt(), {B, H, dr});
  Tensor ckv = random_tensor(rng, dt(), {B, L, r});
  Tensor kr = random_tensor(rng, dt(), {B, L, dr});
  Tensor nkv = random_tensor(rng, dt(), {r}, 0.5, 1.5);
  Tensor w = random_tensor(rng, dt(), {H * (dn + dv), r});
  auto got = run_op("latent_attention_step", {qn, qr, ckv, kr, nkv, w, scalar_pos(pos)}, {{dt(), {B, H, dv}}},
                    {{"scale", attr_f64(scale)}, {"eps", attr_f64(eps)}});
  std::vector<double> want;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      std::vector<double> s, vs;
      for (int64_t t = 0; t <= pos; ++t) {
        double ss = 0;
        for (int64_t j = 0; j < r; ++j) ss += ckv.v[size_t((b * L + t) * r + j)] * ckv.v[size_t((b * L + t) * r + j)];
        double inv = 1 / std::sqrt(ss / r + eps);
        std::vector<double> n(static_cast<size_t>(r));
        for (int64_t j = 0; j < r; ++j) n[size_t(j)] = ckv.v[size_t((b * L + t) * r + j)] * inv * nkv.v[size_t(j)];
        double sc = 0;
        for (int64_t i = 0; i < dn + dv; ++i) {
          double kvi = 0;
          for (int64_t j = 0; j < r; ++j) kvi += w.v[size_t((h * (dn + dv) + i) * r + j)] * n[size_t(j)];
          if (i < dn) sc += qn.v[size_t((b * H + h) * dn + i)] * kvi;
          else vs.push_back(kvi);
        }
        for (int64_t j = 0; j < dr; ++j) sc += qr.v[size_t((b * H + h) * dr + j)] * kr.v[size_t((b * L + t) * dr + j)];
        s.push_back(sc * scale);
      }
      double m = *std::max_element(s.begin(), s.end()), sum = 0;
      for (double& x : s) sum += (x = std::exp(x - m));
      for (int64_t i = 0; i < dv; ++i) {
        double o = 0;
        for (int64_t t = 0; t <= pos; ++t) o += s[size_t(t)] / sum * vs[size_t(t * dv + i)];
        want.push_back(o);
      }
    }
  expect_close(got[0].v, want, tol());
  std::string err;
  run_op("latent_attention_step", {qn, qr, ckv, kr, nkv, w, scalar_pos(L)}, {{dt(), {B, H, dv}}},
         {{"scale", attr_f64(scale)}, {"eps", attr_f64(eps)}}, &err);
  EXPECT_NE(err.find("position 6 out of range [0, 6)"), std::string::npos) << err;
}

TEST(DecodeValidation, BadShapesAreRejectedByTheLoader) {
  std::mt19937_64 rng(1);
  std::string err;
  run_op("gdn_step",
         {random_tensor(rng, DType::kF32, {1, 2, 4}), random_tensor(rng, DType::kF32, {1, 2, 3}),
          random_tensor(rng, DType::kF32, {1, 2, 3}), random_tensor(rng, DType::kF32, {1, 2}),
          random_tensor(rng, DType::kF32, {2, 3}), random_tensor(rng, DType::kF32, {1, 2, 4, 3})},
         {{DType::kF32, {1, 2, 4}}, {DType::kF32, {1, 2, 4, 3}}}, {}, &err);
  EXPECT_NE(err.find("operands[5]: expected shape [1,2,3,4] (state [B,H,S,D])"), std::string::npos) << err;
  err.clear();
  run_op("cache_write", {random_tensor(rng, DType::kF32, {1, 4, 3}), random_tensor(rng, DType::kF32, {1, 3}),
                         int_tensor({1}, {0})},
         {{DType::kF32, {1, 4, 3}}}, {}, &err);
  EXPECT_NE(err.find("operands[2]: expected shape [] (pos, a scalar)"), std::string::npos) << err;
  err.clear();
  run_op("rope_at", {random_tensor(rng, DType::kF32, {1, 2, 4}), int_tensor({}, {0})}, {{DType::kF32, {1, 2, 4}}},
         {}, &err);
  EXPECT_NE(err.find("attrs.theta: missing required attribute"), std::string::npos) << err;
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Decode, ::testing::Values(DType::kF32, DType::kF64),
                         [](const auto& info) { return info.param == DType::kF32 ? "f32" : "f64"; });

// ---------------------------------------------------------------------------
// The compiled decode step against the full forward (needs hymo-opt).

#ifdef HYMO_OPT_PATH
struct Agreement {
  double max_rel = 0, max_abs = 0;
};

Agreement decode_vs_forward(const std::string& precision, int64_t max_len) {
  const std::string plan_path = ::testing::TempDir() + "/decode_agree_" + precision + "_" +
                                std::to_string(::getpid()) + ".json";
  // capacity_factor 8 >= E/top_k: no expert ever drops an assignment, in the
  // forward (N = 128 tokens) or the decode step (N = B = 2).
  std::string cmd = std::string(HYMO_OPT_PATH) + " --hymo-model=" + HYMO_CONFIGS_DIR +
                    "/tiny.yaml --hymo-set=model.moe.capacity_factor=8 --hymo-set=training.precision=" + precision +
                    " --hymo-decode --hymo-decode-batch=2 --hymo-decode-max-len=" + std::to_string(max_len) +
                    " --hymo-fuse-elementwise --hymo-emit-plan=output={" + plan_path + "} -o /dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  hymo::rt::CpuExecutor ex(hymo::rt::load_plan(plan_path));
  std::remove(plan_path.c_str());
  const int64_t B = 2, T = 64, V = 256;
  std::mt19937_64 rng(7);
  std::vector<double> tokens(size_t(B * T));
  for (double& t : tokens) t = double(rng() % V);
  ex.set_values("tokens", tokens);
  ex.run("logits");
  const std::vector<double> full = ex.values("logits:logits");
  EXPECT_EQ(full.size(), size_t(B * T * V));
  Agreement ag;
  for (int64_t t = 0; t < T; ++t) {
    ex.set_values("decode.token", {tokens[size_t(t)], tokens[size_t(T + t)]});
    ex.set_values("decode.pos", {double(t)});
    ex.run("decode_step");
    const std::vector<double> step = ex.values("decode_step:logits");
    for (int64_t b = 0; b < B; ++b) {
      double row_max = 0;
      for (int64_t v = 0; v < V; ++v) row_max = std::max(row_max, std::abs(full[size_t((b * T + t) * V + v)]));
      for (int64_t v = 0; v < V; ++v) {
        double want = full[size_t((b * T + t) * V + v)], got = step[size_t(b * V + v)];
        ag.max_abs = std::max(ag.max_abs, std::abs(got - want));
        ag.max_rel = std::max(ag.max_rel, std::abs(got - want) / std::max(row_max, 1e-30));
      }
    }
  }
  return ag;
}

TEST(DecodeAgreement, Fp32DecodeStepEqualsForwardLogits) {
  Agreement ag = decode_vs_forward("fp32", 64);
  std::printf("fp32: max |decode - forward| = %.3g, relative to the row's max |logit| %.3g\n", ag.max_abs, ag.max_rel);
  EXPECT_LT(ag.max_rel, 1e-4);
}

TEST(DecodeAgreement, Fp64DecodeStepEqualsForwardLogits) {
  // A cache longer than the sequence: positions after pos are never read.
  Agreement ag = decode_vs_forward("fp64", 100);
  std::printf("fp64: max |decode - forward| = %.3g, relative %.3g\n", ag.max_abs, ag.max_rel);
  EXPECT_LT(ag.max_rel, 1e-10);
}
#endif

}  // namespace
