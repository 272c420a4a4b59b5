#include "eval_core.h"

#include <chrono>
#include <cmath>
#include <vector>

#include "compile_plan.h"

namespace hymo_run {

using hymo::rt::Error;

void eval_plan_shape(const hymo::rt::Plan& plan, const std::string& plan_name, int64_t* B, int64_t* T, int64_t* V) {
  if (!plan.find_function("logits"))
    throw Error("plan " + plan_name +
                " has no function 'logits' (compiled before eval existed?): recompile it with hymo-run compile");
  const hymo::rt::BufferDesc* tokens = plan.find_buffer("tokens");
  if (!tokens || tokens->storage != hymo::rt::StorageKind::kInput || tokens->dtype != hymo::rt::DType::kI32 ||
      tokens->shape.size() != 2)
    throw Error("plan " + plan_name + ": expected an input buffer 'tokens' of i32 [B, T]");
  const hymo::rt::BufferDesc* lg = plan.find_buffer("logits:logits");
  if (!lg || lg->shape.size() != 3 || lg->shape[0] != tokens->shape[0] || lg->shape[1] != tokens->shape[1])
    throw Error("plan " + plan_name + ": expected an output 'logits:logits' of shape [B, T, V]");
  *B = tokens->shape[0];
  *T = tokens->shape[1];
  *V = lg->shape[2];
}

Evaluator::Evaluator(const std::string& path, int64_t max_tokens, int64_t B, int64_t T, int64_t vocab,
                     const std::string& max_tokens_option)
    : B_(B), T_(T), V_(vocab) {
  if (max_tokens < 0) throw Error(max_tokens_option + " must be positive, got " + std::to_string(max_tokens));
  if (max_tokens > 0 && max_tokens < T)
    throw Error(max_tokens_option + " " + std::to_string(max_tokens) + " is less than one row (seq_len " +
                std::to_string(T) + " tokens)");
  const std::string file = path == "default" ? default_data_path() : path;
  hymo::rt::throw_if_error(hymo::rt::TokenData::load(file, &data_));
  hymo::rt::throw_if_error(data_.check(T, vocab));
  if (T < 2) throw Error("seq_len " + std::to_string(T) + ": evaluation needs rows of at least 2 tokens");
  const int64_t n = max_tokens > 0 ? std::min(max_tokens, data_.size()) : data_.size();
  rows_ = n / T;
}

EvalResult Evaluator::run(hymo::rt::CpuExecutor& ex, hymo::rt::HostTensor* first_logits) const {
  const auto t0 = std::chrono::steady_clock::now();
  EvalResult r;
  r.rows = rows_;
  r.tokens_used = rows_ * T_;
  std::vector<int32_t> tok(size_t(B_ * T_));
  double sum = 0;  // summed in double over the f32 (or f64) logits
  for (int64_t first = 0; first < rows_; first += B_) {
    const int64_t real = std::min(B_, rows_ - first);
    for (int64_t i = 0; i < B_; ++i) {
      const int64_t row = (first + i) % rows_;
      for (int64_t t = 0; t < T_; ++t) tok[size_t(i * T_ + t)] = data_.token(row * T_ + t);
    }
    ex.set_bytes("tokens", tok.data(), tok.size() * sizeof(int32_t));
    ex.run("logits");
    hymo::rt::HostTensor lg = ex.tensor("logits:logits");
    if (first == 0 && first_logits) *first_logits = lg;
    for (int64_t i = 0; i < real; ++i)
      for (int64_t t = 0; t + 1 < T_; ++t) {
        const double* z = lg.values.data() + (i * T_ + t) * V_;
        double m = z[0];
        for (int64_t v = 1; v < V_; ++v) m = std::max(m, z[v]);
        double s = 0;
        for (int64_t v = 0; v < V_; ++v) s += std::exp(z[v] - m);
        const double term = m + std::log(s) - z[tok[size_t(i * T_ + t + 1)]];
        if (!std::isfinite(term) && r.nonfinite_row < 0) r.nonfinite_row = first + i, r.nonfinite_pos = t;
        sum += term;
      }
    r.padded_rows += B_ - real;
    ++r.batches;
  }
  r.predictions = rows_ * (T_ - 1);
  r.loss_main = sum / double(r.predictions);
  r.perplexity = std::exp(r.loss_main);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace hymo_run
