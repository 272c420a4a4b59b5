// Held-out evaluation (hymo-run eval, and train --eval-data): the next-token
// loss of the plan's `logits` function over a token file, computed on the
// host so that padding rows of a last partial batch can be masked.
//
// Batch order (docs/eval.md): the first N tokens (all, or --max-tokens) are
// cut into R = floor(N / T) rows of T tokens; batch k holds rows kB ... kB+B-1.
// A last partial batch is filled up to B rows with rows taken from the start
// (row i mod R, so the plan's fixed shape [B, T] is kept) and only the real
// rows count. Each row contributes its T-1 next-token predictions; the loss
// is the token-weighted mean over all R*(T-1) predictions.
#pragma once

#include <cstdint>
#include <string>

#include "hymo/rt/api.h"
#include "hymo/rt/data.h"

namespace hymo_run {

struct EvalResult {
  double loss_main = 0;    // mean next-token cross-entropy (nats)
  double perplexity = 0;   // exp(loss_main)
  int64_t predictions = 0; // R * (T - 1)
  int64_t tokens_used = 0; // R * T
  int64_t rows = 0, batches = 0, padded_rows = 0;
  double seconds = 0;
  // The first prediction whose loss term is not finite (row of the data,
  // position in it), or -1: the logits there hold NaN or infinity.
  int64_t nonfinite_row = -1, nonfinite_pos = -1;
};

class Evaluator {
 public:
  // Loads `path` ("default" = data/default.txt) and checks it against the
  // plan's shape: at least one row of T tokens (after --max-tokens) and every
  // token < vocab. `max_tokens` 0 = the whole file; otherwise it must be >= T.
  // Throws hymo::rt::Error naming the file / option.
  // max_tokens_option: the option that gave max_tokens, for the messages (eval's
  // --max-tokens, train's --eval-max-tokens).
  Evaluator(const std::string& path, int64_t max_tokens, int64_t B, int64_t T, int64_t vocab,
            const std::string& max_tokens_option = "--max-tokens");

  // Runs `logits` on every batch. If `first_logits` is given, it receives the
  // first batch's logits [B, T, V]. The executor's params and state are
  // untouched (only `tokens` and arena buffers are written).
  EvalResult run(hymo::rt::CpuExecutor& ex, hymo::rt::HostTensor* first_logits = nullptr) const;

  int64_t rows() const { return rows_; }
  int64_t file_tokens() const { return data_.size(); }
  const std::string& name() const { return data_.name(); }

 private:
  hymo::rt::TokenData data_;
  int64_t B_, T_, V_, rows_;
};

// The shape the evaluator needs from a plan: B, T (from the `tokens` input)
// and V (from `logits:logits`); throws naming the plan if it has no `logits`
// function (a plan compiled before it existed: recompile).
void eval_plan_shape(const hymo::rt::Plan& plan, const std::string& plan_name, int64_t* B, int64_t* T, int64_t* V);

}  // namespace hymo_run
