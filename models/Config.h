// The HyMo configuration (spec §1): the model, the optimizers, the schedule
// and the training settings. Plain C++ (no MLIR, no yaml-cpp in the
// interface) so that the compiler and the runtime share it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hymo {

struct GdnConfig {
  int64_t n_heads = 0, head_dim = 0, state_dim = 0, chunk_size = 0;
};

struct MlaConfig {
  int64_t n_heads = 0, q_lora_rank = 0, kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
};

struct MoeConfig {
  int64_t n_routed = 0, n_shared = 0, top_k = 0, expert_hidden = 0;
  double capacity_factor = 1.5, ema_alpha = 0.02, bias_speed = 0.001;
};

struct MtpConfig {
  int64_t depth = 0;
  std::vector<double> weights;
};

/// The most layers (model.n_layers) and MTP depths (model.mtp.depth) a config
/// may ask for (docs/configs.md).
constexpr int64_t kMaxLayers = 1024;
/// The most Newton-Schulz iterations (optimizer.ns_iterations): each is unrolled
/// into the training step, so 10^9 of them never finished compiling (docs/configs.md).
constexpr int64_t kMaxNsIterations = 100;
/// The most elements one tensor of the model may hold: the runtime's limit on
/// a plan buffer (kMaxBufferElements, hymo/rt/plan_format.h), which keeps byte
/// sizes far from int64 overflow. Config.cpp checks every product of sizes that
/// shapes a tensor against it (docs/configs.md).
constexpr int64_t kMaxTensorElements = int64_t(1) << 40;
/// The most rows, columns or inner size of one matrix product, and the most
/// MoE expert slots: the CPU runtime passes GEMM sizes to CBLAS as int and
/// keeps expert slots in i32 (docs/configs.md).
constexpr int64_t kMaxMatrixDim = 2147483647;

struct ModelConfig {
  int64_t vocab_size = 0, dim = 0, n_layers = 0, ffn_hidden = 0;
  std::string layer_pattern;
  double norm_eps = 1e-6, rope_theta = 10000.0;
  GdnConfig gdn;
  MlaConfig mla;
  MoeConfig moe;
  MtpConfig mtp;

  /// The kind ('G' or 'M') of layer i.
  char layerKind(int64_t i) const {
    return layer_pattern[static_cast<size_t>(i) % layer_pattern.size()];
  }
};

struct OptimizerConfig {
  double muon_lr = 0.02, momentum = 0.95;
  bool nesterov = true;
  std::vector<double> betas = {0.95, 0.95};
  double eps = 1e-8, weight_decay = 0.1;
  bool cautious_wd = true;
  int64_t ns_iterations = 5;
  std::string ns_coefficients = "quintic"; // quintic | cubic
  std::string muon_scale = "shape";        // shape | rms
  double adamw_lr = 3e-4;
  std::vector<double> adamw_betas = {0.9, 0.95};
  double adamw_eps = 1e-8, adamw_weight_decay = 0.1, embed_weight_decay = 0.0;
};

struct SchedulerConfig {
  int64_t total_steps = 1000;
  double warmup_frac = 0.02, stable_frac = 0.83, decay_frac = 0.15;
  double min_lr_ratio = 0.05;
  std::string decay = "linear"; // linear | cosine | sqrt
};

struct TrainingConfig {
  int64_t micro_batch_size = 0, seq_len = 0, gradient_accumulation_steps = 1;
  double grad_clip = 1.0;
  bool loss_nan_skip = true;
  int64_t consecutive_nan_limit = 5;
  std::string precision = "fp32"; // fp32 | fp64 | bf16
  bool fused_gdn = false, moe_mixed_precision = false, fsdp = false;
  int64_t world_size = 1, seed = 0;
};

struct Config {
  ModelConfig model;
  OptimizerConfig optimizer;
  SchedulerConfig scheduler;
  TrainingConfig training;
};

/// A `--set section.key=value` override, applied after the file is read
/// (nested keys: `model.gdn.n_heads=8`).
using Override = std::pair<std::string, std::string>;

/// Reads and validates a YAML config. On failure returns nullopt and sets
/// `error` to one line naming the key (`model.gdn.state_dim: expected a
/// positive integer, got -3`). Never throws.
std::optional<Config> loadConfig(const std::string &path,
                                 const std::vector<Override> &overrides,
                                 std::string &error);

/// The same from YAML text (`source` names it in messages).
std::optional<Config> parseConfig(const std::string &text,
                                  const std::string &source,
                                  const std::vector<Override> &overrides,
                                  std::string &error);

/// Checks the cross-field rules (top_k <= n_routed, ...); "" when valid.
std::string validateConfig(const Config &config);

/// Checks the sizes of the decode step (models/DecodeBuilder.cpp) that the
/// decode options shape with the config's sizes, against the limits the
/// config's own sizes meet (docs/configs.md, "Size limits"): `batch`
/// (--hymo-decode-batch, >= 1) sequences and an MLA cache of `maxLen`
/// (--hymo-decode-max-len, >= 0; 0: training.seq_len) positions. "" when
/// they fit, else one line naming the options and keys multiplied.
std::string validateDecodeSizes(const Config &config, int64_t batch, int64_t maxLen);

/// The resolved config as YAML text (every field, defaults filled in).
std::string configToYaml(const Config &config);

/// The resolved config as one JSON object (nested like the YAML).
std::string configToJson(const Config &config);

} // namespace hymo
