// hymo-run sample --ckpt CKPT --prompt TEXT [--max-new-tokens N]
//                 [--temperature T] [--top-k K] [--seed S] [--max-len L]
//                 [--no-timing] [--threads K]
// Text generation with the compiled one-token decode step (docs/sampling.md):
// the checkpoint's config is compiled with `hymo-opt --hymo-decode
// --hymo-decode-only` (@decode_step: GDN recurrent states and the MLA latent
// cache as persistent state buffers), the parameters are loaded, the prompt's
// bytes are fed one by one, then tokens are sampled (temperature, top-k,
// seed; temperature 0 is greedy) and printed. Afterwards the per-token
// decode time is measured at positions 16 and 1024.
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sys/stat.h>

#include "commands.h"
#include "run_files.h"
#include "compile_plan.h"
#include "hymo/rt/api.h"
#include "hymo/rt/checkpoint.h"
#include "hymo/rt/parse.h"
#include "hymo/rt/plan_format.h"
#include "hymo/rt/safetensors.h"

namespace hymo_run {
namespace {

using hymo::rt::Error;
using hymo::rt::throw_if_error;
using json = nlohmann::json;

struct SampleOptions {
  std::string ckpt, prompt;
  int64_t max_new_tokens = 200;
  double temperature = 0.8;
  int64_t top_k = 0;
  std::string seed = "0";  // parsed strictly in run_sample (CLI11 would wrap -1 round)
  int64_t max_len = 0;
  bool no_timing = false;
  int threads = 0;
};

constexpr int64_t kTimePositions[] = {16, 1024};
constexpr int64_t kTimeWindow = 8;  // steps timed per position (median)




// Compiles the decode plan of `config` with a cache of `max_len` positions.
hymo::rt::Plan compile_decode_plan(const json& config, int64_t max_len) {
  if (!compiler_available())
    throw Error("sample compiles a decode plan and this build has no compiler (CMake HYMO_COMPILER off); set $HYMO_OPT");
  try {
    return compile_config_json(config.dump(2),
                               {"--hymo-decode", "--hymo-decode-only",
                                "--hymo-decode-max-len=" + std::to_string(max_len), "--hymo-fuse-elementwise"},
                               "sample");
  } catch (const Error& e) {
    // hymo-opt names its own option for the cache length (the config's size limits, times
    // the decode step's tensors): say which of sample's set it
    const std::string m = e.what();
    if (m.find("--hymo-decode-max-len") == std::string::npos) throw;
    throw Error(m + (m.empty() || m.back() == '\n' ? "" : "\n") + "(sample compiles its decode cache, " + std::to_string(max_len) +
                " positions, as --hymo-decode-max-len: --max-len, else prompt + --max-new-tokens and at least " +
                std::to_string(kTimePositions[1] + kTimeWindow) + " for the timing unless --no-timing)");
  }
}

class Sampler {
 public:
  Sampler(hymo::rt::CpuExecutor& ex, int64_t vocab, std::string ckpt)
      : ex_(ex), vocab_(vocab), ckpt_(std::move(ckpt)) {}

  // Text is on stdout without its final newline: an error ends the line first.
  bool line_open = false;

  // Runs one decode step: feeds `token` at `pos`, returns the logits. Logits
  // holding NaN or infinity (a diverged checkpoint whose parameters are
  // finite) would sample garbage: an error naming the position.
  const std::vector<double>& step(int32_t token, int64_t pos) {
    int32_t p = int32_t(pos);
    ex_.set_bytes("decode.token", &token, sizeof token);
    ex_.set_bytes("decode.pos", &p, sizeof p);
    ex_.run("decode_step");
    logits_ = ex_.values("decode_step:logits");
    for (size_t i = 0; i < logits_.size(); ++i)
      if (!std::isfinite(logits_[i])) {
        if (line_open) {
          std::fputc('\n', stdout);
          std::fflush(stdout);
          line_open = false;
        }
        char v[32];
        std::snprintf(v, sizeof v, "%g", logits_[i]);
        throw Error("checkpoint " + ckpt_ + ": the logits at position " + std::to_string(pos) + " (token " +
                    std::to_string(token) + " fed) are non-finite (" + v + " for token " + std::to_string(i) +
                    "): nothing can be sampled (a diverged or corrupt checkpoint?)");
      }
    return logits_;
  }

  int32_t pick(const std::vector<double>& z, double temperature, int64_t top_k, std::mt19937_64& rng) const {
    if (temperature == 0) return int32_t(std::max_element(z.begin(), z.end()) - z.begin());
    std::vector<int32_t> idx(static_cast<size_t>(vocab_));
    for (int64_t i = 0; i < vocab_; ++i) idx[size_t(i)] = int32_t(i);
    int64_t k = top_k > 0 ? std::min(top_k, vocab_) : vocab_;
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                      [&](int32_t a, int32_t b) { return z[size_t(a)] > z[size_t(b)] || (z[size_t(a)] == z[size_t(b)] && a < b); });
    const double m = z[size_t(idx[0])];
    std::vector<double> w(static_cast<size_t>(k));
    double sum = 0;
    for (int64_t i = 0; i < k; ++i) sum += (w[size_t(i)] = std::exp((z[size_t(idx[size_t(i)])] - m) / temperature));
    double u = std::uniform_real_distribution<double>(0.0, sum)(rng);
    for (int64_t i = 0; i < k; ++i) {
      u -= w[size_t(i)];
      if (u <= 0) return idx[size_t(i)];
    }
    return idx[size_t(k - 1)];
  }

 private:
  hymo::rt::CpuExecutor& ex_;
  int64_t vocab_;
  std::string ckpt_;
  std::vector<double> logits_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void run_sample(const SampleOptions& o) {
  // Arguments first: no compile for a bad call.
  if (o.prompt.empty()) throw Error("--prompt: the prompt is empty (decoding starts from at least one byte)");
  if (!std::isfinite(o.temperature) || o.temperature < 0)
    throw Error("--temperature " + std::to_string(o.temperature) + ": expected a finite number >= 0 (0 is greedy)");
  if (o.max_new_tokens < 0) throw Error("--max-new-tokens must be >= 0, got " + std::to_string(o.max_new_tokens));
  if (o.top_k < 0) throw Error("--top-k must be >= 0 (0: all tokens), got " + std::to_string(o.top_k));
  if (o.max_len < 0) throw Error("--max-len must be >= 1, got " + std::to_string(o.max_len));
  uint64_t seed = 0;
  if (!hymo::rt::parse_integer(o.seed, &seed))
    throw Error("--seed '" + o.seed + "': expected an integer from 0 to 18446744073709551615");
  const int64_t needed = int64_t(o.prompt.size()) + o.max_new_tokens;
  const int64_t timing_len = kTimePositions[1] + kTimeWindow;
  int64_t max_len = o.max_len > 0 ? o.max_len : std::max(needed, o.no_timing ? int64_t(1) : timing_len);
  if (needed > max_len)
    throw Error("prompt (" + std::to_string(o.prompt.size()) + " bytes) + --max-new-tokens " +
                std::to_string(o.max_new_tokens) + " exceed --max-len " + std::to_string(max_len));
  // (--max-len is capped by its range; the default, prompt + new tokens, here:
  // hymo-opt's refusal would name its --hymo-decode-max-len)
  if (max_len > hymo::rt::kMaxDecodeMaxLen)
    throw Error("prompt (" + std::to_string(o.prompt.size()) + " bytes) + --max-new-tokens " +
                std::to_string(o.max_new_tokens) + " = " + std::to_string(needed) +
                " exceed the longest decode cache, " + std::to_string(hymo::rt::kMaxDecodeMaxLen) +
                " positions (the most --max-len takes)");
  const std::string ckpt = resolve_ckpt_arg(o.ckpt);
  std::unique_ptr<hymo::rt::SafetensorsFile> file;
  throw_if_error(hymo::rt::SafetensorsFile::open(ckpt, &file));
  const json config = checkpoint_config(*file);
  const int64_t vocab = config.value("model", json::object()).value("vocab_size", int64_t(0));
  if (vocab < 256)
    throw Error("checkpoint " + ckpt + ": vocab_size " + std::to_string(vocab) +
                " < 256: sample feeds the prompt as bytes and needs a byte vocabulary");
  if (o.top_k > vocab) throw Error("--top-k " + std::to_string(o.top_k) + " exceeds vocab_size " + std::to_string(vocab));

  const auto t0 = std::chrono::steady_clock::now();
  hymo::rt::Plan plan = compile_decode_plan(config, max_len);
  const auto t1 = std::chrono::steady_clock::now();
  hymo::rt::ExecutorOptions eo;
  eo.num_threads = o.threads;
  hymo::rt::CpuExecutor ex(std::move(plan), eo);
  throw_if_error(hymo::rt::load_param_table(&ex, *file));
  Sampler s(ex, vocab, ckpt);

  std::mt19937_64 rng(seed);
  std::string out = o.prompt;
  int64_t pos = 0;
  const std::vector<double>* z = nullptr;
  const auto t2 = std::chrono::steady_clock::now();
  for (unsigned char c : o.prompt) z = &s.step(int32_t(c), pos++);
  const auto t3 = std::chrono::steady_clock::now();
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  s.line_open = true;
  for (int64_t i = 0; i < o.max_new_tokens; ++i) {
    int32_t tok = s.pick(*z, o.temperature, o.top_k, rng);
    std::string piece = tok < 256 ? std::string(1, char(tok)) : "<" + std::to_string(tok) + ">";
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
    if (i + 1 < o.max_new_tokens) z = &s.step(tok, pos++);
  }
  std::fputc('\n', stdout);
  std::fflush(stdout);
  s.line_open = false;
  const auto t4 = std::chrono::steady_clock::now();
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::fprintf(stderr,
               "sample: %s, Tmax %lld; compile %.0f ms; prompt %zu tokens %.3f ms/token; %lld new tokens %.3f "
               "ms/token\n",
               ckpt.c_str(), (long long)max_len, ms(t0, t1), o.prompt.size(), ms(t2, t3) / double(o.prompt.size()),
               (long long)o.max_new_tokens,
               o.max_new_tokens > 0 ? ms(t3, t4) / double(o.max_new_tokens) : 0.0);

  if (o.no_timing) return;
  if (max_len < timing_len) {
    std::fprintf(stderr, "sample: no decode timing at position %lld: --max-len %lld < %lld\n",
                 (long long)kTimePositions[1], (long long)max_len, (long long)timing_len);
    return;
  }
  // Decode time per token by position: a fresh pass over positions
  // 0..1031 feeding the prompt's bytes cyclically (the states are reset
  // first); each reported time is the median of 8 steps from there on.
  for (const auto& b : ex.plan().buffers)
    if (b.name.rfind("decode.layers.", 0) == 0) ex.set_values(b.name, std::vector<double>(size_t(b.numel()), 0.0));
  std::vector<double> times;
  std::string line = "sample: decode time per token:";
  size_t next = 0;
  for (int64_t p = 0; p < timing_len; ++p) {
    const auto a = std::chrono::steady_clock::now();
    s.step(int32_t((unsigned char)o.prompt[size_t(p) % o.prompt.size()]), p);
    const auto b = std::chrono::steady_clock::now();
    if (next < 2 && p >= kTimePositions[next]) {
      times.push_back(ms(a, b));
      if (int64_t(times.size()) == kTimeWindow) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s pos %lld: %.3f ms", next ? "," : "", (long long)kTimePositions[next],
                      median(times));
        line += buf;
        times.clear();
        ++next;
      }
    }
  }
  std::fprintf(stderr, "%s (GDN layers: O(1) state per token; MLA layers attend over the pos+1 cached latents)\n",
               line.c_str());
}

}  // namespace

void add_sample_command(CLI::App& app) {
  auto o = std::make_shared<SampleOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sample", "generate text from a checkpoint with the compiled one-token decode step (docs/sampling.md)");
  cmd->add_option("--ckpt", o->ckpt, "checkpoint (step_N.safetensors) or run directory (its latest checkpoint)")
      ->required();
  cmd->add_option("--prompt", o->prompt, "the text to continue (fed as bytes)")->required();
  cmd->add_option("--max-new-tokens", o->max_new_tokens, "tokens to generate (default 200)")
      ->check(CLI::Range(int64_t(0), kMaxCount));
  cmd->add_option("--temperature", o->temperature, "softmax temperature, >= 0; 0 is greedy (default 0.8)");
  cmd->add_option("--top-k", o->top_k, "sample among the K most likely tokens; 0: all (default 0)");
  cmd->add_option("--seed", o->seed, "random seed of the sampler (default 0)");
  cmd->add_option("--max-len", o->max_len,
                  "MLA cache length Tmax (default: prompt + new tokens, at least 1032 for the timing)")
      ->check(CLI::Range(int64_t(1), hymo::rt::kMaxDecodeMaxLen));
  cmd->add_flag("--no-timing", o->no_timing, "skip the decode-time measurement at positions 16 and 1024");
  cmd->add_option("--threads", o->threads, "CPU worker threads (default: HYMO_NUM_THREADS or all cores)")
      ->check(CLI::Range(1, hymo::rt::kMaxThreads));
  cmd->callback([o] { run_sample(*o); });
}

}  // namespace hymo_run
