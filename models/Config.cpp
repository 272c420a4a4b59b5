// YAML config reading and validation (spec §1). Every field is declared once
// in the schema below; reading, `--set`, unknown-key detection, printing and
// the error messages all walk that one table.
#include "Config.h"

#include "hymo/rt/plan_format.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace hymo {
namespace {

static_assert(kMaxTensorElements == rt::kMaxBufferElements,
              "a tensor the config allows must be a buffer the runtime loads");
static_assert(kMaxMatrixDim == rt::kMaxGemmDim,
              "a matrix product the config allows must be one the runtime's plan check accepts");

enum class Kind { Int, Float, Bool, String, FloatList };

struct Field {
  const char *path;
  Kind kind;
  bool required;
  std::function<void(Config &, const YAML::Node &)> set;
  std::function<void(const Config &, YAML::Emitter &)> emit;
  std::function<std::string(const Config &)> json;
};

std::string jsonNumber(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}
std::string jsonValue(int64_t v) { return std::to_string(v); }
std::string jsonValue(double v) { return jsonNumber(v); }
std::string jsonValue(bool v) { return v ? "true" : "false"; }
std::string jsonValue(const std::string &v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}
std::string jsonValue(const std::vector<double> &v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + jsonNumber(v[i]);
  return out + "]";
}

struct ConfigError {
  std::string message;
};

[[noreturn]] void fail(const std::string &path, const std::string &what) {
  throw ConfigError{path + ": " + what};
}

std::string show(const YAML::Node &n) {
  if (n.IsScalar())
    return "'" + n.Scalar() + "'";
  if (n.IsSequence())
    return "a list";
  if (n.IsMap())
    return "a mapping";
  return "nothing";
}

int64_t asInt(const std::string &path, const YAML::Node &n) {
  if (!n.IsScalar())
    fail(path, "expected an integer, got " + show(n));
  const std::string &s = n.Scalar();
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used, 10);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != s.size())
    fail(path, "expected an integer, got " + show(n));
  return v;
}

double asFloat(const std::string &path, const YAML::Node &n) {
  if (!n.IsScalar())
    fail(path, "expected a number, got " + show(n));
  const std::string &s = n.Scalar();
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !std::isfinite(v))
    fail(path, "expected a number, got " + show(n));
  return v;
}

bool asBool(const std::string &path, const YAML::Node &n) {
  if (n.IsScalar()) {
    const std::string &s = n.Scalar();
    if (s == "true" || s == "True" || s == "yes")
      return true;
    if (s == "false" || s == "False" || s == "no")
      return false;
  }
  fail(path, "expected true or false, got " + show(n));
}

std::string asString(const std::string &path, const YAML::Node &n) {
  if (!n.IsScalar())
    fail(path, "expected a string, got " + show(n));
  return n.Scalar();
}

std::vector<double> asFloatList(const std::string &path, const YAML::Node &n) {
  if (!n.IsSequence())
    fail(path, "expected a list of numbers, got " + show(n));
  std::vector<double> out;
  for (size_t i = 0; i < n.size(); ++i)
    out.push_back(asFloat(path + "[" + std::to_string(i) + "]", n[i]));
  return out;
}

#define HYMO_INT(PATH, MEMBER, REQ)                                            \
  Field{PATH, Kind::Int, REQ,                                                  \
        [](Config &c, const YAML::Node &n) { c.MEMBER = asInt(PATH, n); },     \
        [](const Config &c, YAML::Emitter &e) { e << c.MEMBER; },             \
        [](const Config &c) { return jsonValue(c.MEMBER); }}
#define HYMO_FLOAT(PATH, MEMBER, REQ)                                          \
  Field{PATH, Kind::Float, REQ,                                                \
        [](Config &c, const YAML::Node &n) { c.MEMBER = asFloat(PATH, n); },   \
        [](const Config &c, YAML::Emitter &e) { e << c.MEMBER; },             \
        [](const Config &c) { return jsonValue(c.MEMBER); }}
#define HYMO_BOOL(PATH, MEMBER)                                                \
  Field{PATH, Kind::Bool, false,                                               \
        [](Config &c, const YAML::Node &n) { c.MEMBER = asBool(PATH, n); },    \
        [](const Config &c, YAML::Emitter &e) { e << c.MEMBER; },             \
        [](const Config &c) { return jsonValue(c.MEMBER); }}
#define HYMO_STRING(PATH, MEMBER, REQ)                                         \
  Field{PATH, Kind::String, REQ,                                               \
        [](Config &c, const YAML::Node &n) { c.MEMBER = asString(PATH, n); },  \
        [](const Config &c, YAML::Emitter &e) { e << c.MEMBER; },             \
        [](const Config &c) { return jsonValue(c.MEMBER); }}
#define HYMO_FLIST(PATH, MEMBER, REQ)                                          \
  Field{PATH, Kind::FloatList, REQ,                                            \
        [](Config &c, const YAML::Node &n) {                                   \
          c.MEMBER = asFloatList(PATH, n);                                     \
        },                                                                     \
        [](const Config &c, YAML::Emitter &e) {                                \
          e << YAML::Flow << c.MEMBER;                                         \
        },                                                                     \
        [](const Config &c) { return jsonValue(c.MEMBER); }}

const std::vector<Field> &schema() {
  static const std::vector<Field> fields = {
      HYMO_INT("model.vocab_size", model.vocab_size, true),
      HYMO_INT("model.dim", model.dim, true),
      HYMO_INT("model.n_layers", model.n_layers, true),
      HYMO_STRING("model.layer_pattern", model.layer_pattern, true),
      HYMO_FLOAT("model.norm_eps", model.norm_eps, false),
      HYMO_FLOAT("model.rope_theta", model.rope_theta, false),
      HYMO_INT("model.ffn_hidden", model.ffn_hidden, true),
      HYMO_INT("model.gdn.n_heads", model.gdn.n_heads, true),
      HYMO_INT("model.gdn.head_dim", model.gdn.head_dim, true),
      HYMO_INT("model.gdn.state_dim", model.gdn.state_dim, true),
      HYMO_INT("model.gdn.chunk_size", model.gdn.chunk_size, true),
      HYMO_INT("model.mla.n_heads", model.mla.n_heads, true),
      HYMO_INT("model.mla.q_lora_rank", model.mla.q_lora_rank, true),
      HYMO_INT("model.mla.kv_lora_rank", model.mla.kv_lora_rank, true),
      HYMO_INT("model.mla.qk_nope_head_dim", model.mla.qk_nope_head_dim, true),
      HYMO_INT("model.mla.qk_rope_head_dim", model.mla.qk_rope_head_dim, true),
      HYMO_INT("model.mla.v_head_dim", model.mla.v_head_dim, true),
      HYMO_INT("model.moe.n_routed", model.moe.n_routed, true),
      HYMO_INT("model.moe.n_shared", model.moe.n_shared, true),
      HYMO_INT("model.moe.top_k", model.moe.top_k, true),
      HYMO_INT("model.moe.expert_hidden", model.moe.expert_hidden, true),
      HYMO_FLOAT("model.moe.capacity_factor", model.moe.capacity_factor, false),
      HYMO_FLOAT("model.moe.ema_alpha", model.moe.ema_alpha, false),
      HYMO_FLOAT("model.moe.bias_speed", model.moe.bias_speed, false),
      HYMO_INT("model.mtp.depth", model.mtp.depth, true),
      HYMO_FLIST("model.mtp.weights", model.mtp.weights, true),

      HYMO_FLOAT("optimizer.muon_lr", optimizer.muon_lr, false),
      HYMO_FLOAT("optimizer.momentum", optimizer.momentum, false),
      HYMO_BOOL("optimizer.nesterov", optimizer.nesterov),
      HYMO_FLIST("optimizer.betas", optimizer.betas, false),
      HYMO_FLOAT("optimizer.eps", optimizer.eps, false),
      HYMO_FLOAT("optimizer.weight_decay", optimizer.weight_decay, false),
      HYMO_BOOL("optimizer.cautious_wd", optimizer.cautious_wd),
      HYMO_INT("optimizer.ns_iterations", optimizer.ns_iterations, false),
      HYMO_STRING("optimizer.ns_coefficients", optimizer.ns_coefficients, false),
      HYMO_STRING("optimizer.muon_scale", optimizer.muon_scale, false),
      HYMO_FLOAT("optimizer.adamw_lr", optimizer.adamw_lr, false),
      HYMO_FLIST("optimizer.adamw_betas", optimizer.adamw_betas, false),
      HYMO_FLOAT("optimizer.adamw_eps", optimizer.adamw_eps, false),
      HYMO_FLOAT("optimizer.adamw_weight_decay", optimizer.adamw_weight_decay, false),
      HYMO_FLOAT("optimizer.embed_weight_decay", optimizer.embed_weight_decay, false),

      HYMO_INT("scheduler.total_steps", scheduler.total_steps, false),
      HYMO_FLOAT("scheduler.warmup_frac", scheduler.warmup_frac, false),
      HYMO_FLOAT("scheduler.stable_frac", scheduler.stable_frac, false),
      HYMO_FLOAT("scheduler.decay_frac", scheduler.decay_frac, false),
      HYMO_FLOAT("scheduler.min_lr_ratio", scheduler.min_lr_ratio, false),
      HYMO_STRING("scheduler.decay", scheduler.decay, false),

      HYMO_INT("training.micro_batch_size", training.micro_batch_size, true),
      HYMO_INT("training.seq_len", training.seq_len, true),
      HYMO_INT("training.gradient_accumulation_steps",
               training.gradient_accumulation_steps, false),
      HYMO_FLOAT("training.grad_clip", training.grad_clip, false),
      HYMO_BOOL("training.loss_nan_skip", training.loss_nan_skip),
      HYMO_INT("training.consecutive_nan_limit", training.consecutive_nan_limit, false),
      HYMO_STRING("training.precision", training.precision, false),
      HYMO_BOOL("training.fused_gdn", training.fused_gdn),
      HYMO_BOOL("training.moe_mixed_precision", training.moe_mixed_precision),
      HYMO_BOOL("training.fsdp", training.fsdp),
      HYMO_INT("training.world_size", training.world_size, false),
      HYMO_INT("training.seed", training.seed, false),
  };
  return fields;
}

#undef HYMO_INT
#undef HYMO_FLOAT
#undef HYMO_BOOL
#undef HYMO_STRING
#undef HYMO_FLIST

std::vector<std::string> split(const std::string &path) {
  std::vector<std::string> parts;
  std::stringstream ss(path);
  std::string p;
  while (std::getline(ss, p, '.'))
    parts.push_back(p);
  return parts;
}

// True when `prefix` names a section (a mapping) of the schema.
bool isSection(const std::string &prefix) {
  for (const Field &f : schema())
    if (std::string(f.path).rfind(prefix + ".", 0) == 0)
      return true;
  return false;
}

const Field *findField(const std::string &path) {
  for (const Field &f : schema())
    if (path == f.path)
      return &f;
  return nullptr;
}

// Rejects keys the schema does not know, and sections that are not mappings.
// A key given twice in one mapping is an error too: yaml-cpp keeps both
// entries and a lookup finds the first, so the later value would be ignored
// without a word.
void checkKeys(const YAML::Node &node, const std::string &prefix) {
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar())
      fail(prefix.empty() ? "config" : prefix, "expected a key, got " + show(it->first));
    std::string key = it->first.Scalar();
    std::string path = prefix.empty() ? key : prefix + "." + key;
    if (!seen.insert(key).second)
      fail(path, "given twice (line " + std::to_string(it->first.Mark().line + 1) + " repeats it)");
    if (findField(path))
      continue;
    if (!isSection(path))
      fail(path, "unknown key");
    if (!it->second.IsMap())
      fail(path, "expected a mapping, got " + show(it->second));
    checkKeys(it->second, path);
  }
}

YAML::Node lookup(const YAML::Node &root, const std::string &path) {
  // Node::operator= writes through to the tree: walk with reset() instead.
  YAML::Node n;
  n.reset(root);
  for (const std::string &p : split(path)) {
    if (!n.IsMap())
      return YAML::Node(YAML::NodeType::Undefined);
    YAML::Node next = n[p];
    if (!next.IsDefined())
      return YAML::Node(YAML::NodeType::Undefined);
    n.reset(next);
  }
  return n;
}

void applyOverride(YAML::Node &root, const Override &o) {
  const std::string &path = o.first;
  if (!findField(path)) {
    if (isSection(path))
      fail(path, "--set needs a key, not a section");
    fail(path, "unknown key");
  }
  if (o.second.find_first_not_of(" \t") == std::string::npos)
    fail(path, "--set gives no value (expected " + path + "=VALUE)");
  YAML::Node value;
  try {
    value = YAML::Load(o.second);
  } catch (const YAML::Exception &e) {
    fail(path, "cannot parse --set value '" + o.second + "': " + e.msg);
  }
  std::vector<std::string> parts = split(path);
  YAML::Node n;
  n.reset(root);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!n[parts[i]].IsMap())
      n[parts[i]] = YAML::Node(YAML::NodeType::Map);
    YAML::Node child = n[parts[i]];
    n.reset(child);
  }
  n[parts.back()] = value;
}

std::string fmt(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

void requirePositive(const std::string &path, int64_t v) {
  if (v <= 0)
    fail(path, "expected a positive integer, got " + std::to_string(v));
}

void requireRange(const std::string &path, double v, double lo, double hi,
                  bool loOpen, bool hiOpen) {
  bool ok = (loOpen ? v > lo : v >= lo) && (hiOpen ? v < hi : v <= hi);
  if (!ok)
    fail(path, std::string("expected a value in ") + (loOpen ? "(" : "[") +
                   fmt(lo) + ", " + fmt(hi) + (hiOpen ? ")" : "]") + ", got " +
                   fmt(v));
}

void requireOneOf(const std::string &path, const std::string &v,
                  const std::vector<std::string> &allowed) {
  for (const std::string &a : allowed)
    if (v == a)
      return;
  std::string list;
  for (const std::string &a : allowed)
    list += (list.empty() ? "" : "|") + a;
  fail(path, "expected one of " + list + ", got '" + v + "'");
}

// One factor of a size product: the config key (or a derived size, spelled
// out) and its value, positive.
struct Factor {
  std::string name;
  int64_t value;
};

// Fails unless the product of `factors` is at most `limit` (`limitText`
// spells it), naming every factor, `what` the product sizes, and the values.
// Multiplies with overflow checks: a product past int64 says so.
void requireProduct(const std::vector<Factor> &factors, int64_t limit,
                    const std::string &limitText, const std::string &what) {
  int64_t p = 1;
  bool overflow = false;
  for (const Factor &f : factors)
    if (__builtin_mul_overflow(p, f.value, &p)) {
      overflow = true;
      break;
    }
  if (!overflow && p <= limit)
    return;
  std::string names, values;
  for (const Factor &f : factors) {
    names += (names.empty() ? "" : " * ") + f.name;
    values += (values.empty() ? "" : " * ") + std::to_string(f.value);
  }
  if (factors.size() > 1)
    values += overflow ? " (past int64)" : " = " + std::to_string(p);
  fail(names, "expected " + std::string(factors.size() > 1 ? "a product of " : "") + "at most " +
                  limitText + " (" + what + "), got " + values);
}

// kMaxTensorElements as the size errors spell it.
std::string maxElementsText() { return "2^40 = " + std::to_string(kMaxTensorElements); }

// a + b as one factor: one dimension of `tensor`, so at most
// kMaxTensorElements (checked without overflow, like the products).
Factor sum(const Factor &a, const Factor &b, const std::string &tensor) {
  int64_t v = 0;
  const bool overflow = __builtin_add_overflow(a.value, b.value, &v);
  if (overflow || v > kMaxTensorElements)
    fail(a.name + " + " + b.name,
         "expected a sum of at most " + maxElementsText() + " (one dimension of " +
             tensor + "), got " + std::to_string(a.value) + " + " + std::to_string(b.value) +
             (overflow ? " (past int64)" : " = " + std::to_string(v)));
  return {"(" + a.name + " + " + b.name + ")", v};
}

// The tokens one step of the model runs on, as the size checks name them:
// the training step's [micro_batch_size, seq_len] (`validate`), or the decode
// step's [batch] with its MLA cache length (`validateDecodeSizes`).
struct StepTokens {
  std::vector<Factor> dims; // their product is the step's tokens N
  std::string shape;        // the dims in a shape: "micro_batch_size, seq_len"
  std::string rows;         // their product in a shape: "micro_batch_size * seq_len"
  const Factor *cacheLen;   // the decode step's MLA cache length; null: training
};

// The factors `a` then `b`.
std::vector<Factor> cat(std::vector<Factor> a, const std::vector<Factor> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The products of sizes that shape the model's tensors and kernels
// (docs/configs.md, "Size limits"), after every size is known positive, for
// one step on `tok`. A product past int64 would wrap in the model builder and
// reach MLIR as a negative or dynamic dimension (or wrap the plan's arena
// offsets); one past 2^40 elements would be a plan the runtime refuses; a
// matrix size past 2^31 - 1 would be truncated on its way to CBLAS. Checked
// in about the order the model builds them (the tokens first), and only for
// the layer kinds the config has. The weights' sizes do not depend on `tok`:
// checked again for the decode step, they pass as they did for the config.
void validateSizes(const Config &c, const StepTokens &tok) {
  const ModelConfig &m = c.model;
  const TrainingConfig &t = c.training;
  const bool training = tok.cacheLen == nullptr;
  const std::string kElems = maxElementsText();
  const std::string kMatrix = "2^31 - 1 = " + std::to_string(kMaxMatrixDim);
  auto elements = [&](const std::vector<Factor> &f, const std::string &tensor) {
    requireProduct(f, kMaxTensorElements, kElems, "the elements of one tensor: " + tensor);
  };
  auto matrix = [&](const std::vector<Factor> &f, const std::string &size) {
    requireProduct(f, kMaxMatrixDim, kMatrix, size + ", a matrix size, which CBLAS takes as int");
  };
  // The tokens times `f`, and a shape of the tokens then `rest`.
  auto tokens = [&](const std::vector<Factor> &f) { return cat(tok.dims, f); };
  auto shape = [&](const std::string &rest) { return "[" + tok.shape + (rest.empty() ? "" : ", " + rest) + "]"; };
  const Factor D{"model.dim", m.dim}, V{"model.vocab_size", m.vocab_size};
  const bool hasM = m.layer_pattern.find('M') != std::string::npos;
  // (MTP depths are G layers)
  const bool hasG = m.layer_pattern.find('G') != std::string::npos || m.mtp.depth > 0;

  elements(tokens({}), "the tokens " + shape(""));
  matrix(tokens({}), "the rows of every linear layer");
  if (training)
    requireProduct(tokens({{"training.gradient_accumulation_steps", t.gradient_accumulation_steps}}),
                   INT64_MAX, "2^63 - 1",
                   "the tokens of one optimizer step, which train counts in int64");
  elements(tokens({D}), "the hidden states " + shape("dim"));
  matrix({D}, "the inner size of every projection from the hidden state");
  elements({V, D}, "embed.weight and head.weight [vocab_size, dim]");
  elements(tokens({V}), "the logits " + shape("vocab_size"));
  if (m.mtp.depth > 0) {
    const Factor D2{"2", 2};
    elements({D, D2, D}, "mtp.k.proj.weight [dim, 2 * dim]");
    if (training) // (the decode step does not run the MTP depths)
      elements({tok.dims[0], {"(training.seq_len - 1)", t.seq_len - 1}, D2, D},
               "the first MTP depth's input [micro_batch_size, seq_len - 1, 2 * dim]");
  }
  if (hasG) {
    const Factor F{"model.ffn_hidden", m.ffn_hidden}, H{"model.gdn.n_heads", m.gdn.n_heads},
        Dh{"model.gdn.head_dim", m.gdn.head_dim}, S{"model.gdn.state_dim", m.gdn.state_dim};
    elements({F, D}, "the dense FFN's W1 and W3 [ffn_hidden, dim]");
    elements(tokens({F}), "the dense FFN's hidden activations " + shape("ffn_hidden"));
    matrix({F}, "the dense FFN's hidden size");
    elements({H, Dh, D}, "the GDN's W_v and W_z [n_heads * head_dim, dim]");
    elements({H, S, D}, "the GDN's W_b and W_c [n_heads * state_dim, dim]");
    matrix({H, Dh}, "the GDN's value width n_heads * head_dim");
    matrix({H, S}, "the GDN's key width n_heads * state_dim");
    elements(tokens({H, Dh}), "the GDN's values " + shape("n_heads, head_dim"));
    elements(tokens({H, S}), "the GDN's keys " + shape("n_heads, state_dim"));
    elements({H, S, Dh}, "the GDN's recurrent state of one sequence [n_heads, state_dim, head_dim]");
    if (training)
      elements({tok.dims[1], S, Dh}, "the GDN backward's chunk states of one head [seq_len, state_dim, head_dim]");
    else
      elements(tokens({H, S, Dh}), "the GDN's recurrent states " + shape("n_heads, state_dim, head_dim"));
  }
  if (hasM) {
    const MlaConfig &a = m.mla;
    const Factor H{"model.mla.n_heads", a.n_heads}, Rq{"model.mla.q_lora_rank", a.q_lora_rank},
        Rkv{"model.mla.kv_lora_rank", a.kv_lora_rank}, Dn{"model.mla.qk_nope_head_dim", a.qk_nope_head_dim},
        Dr{"model.mla.qk_rope_head_dim", a.qk_rope_head_dim}, Dv{"model.mla.v_head_dim", a.v_head_dim};
    elements({Rq, D}, "the MLA's W_qa [q_lora_rank, dim]");
    elements(tokens({Rq}), "the MLA's query latents " + shape("q_lora_rank"));
    matrix({Rq}, "the MLA's q_lora_rank");
    const Factor Dqk = sum(Dn, Dr, "the MLA's queries"), Dkv = sum(Dn, Dv, "the MLA's keys and values"),
                 Rkr = sum(Rkv, Dr, "the MLA's kv latents");
    elements({H, Dqk, Rq}, "the MLA's W_qb [n_heads * (qk_nope_head_dim + qk_rope_head_dim), q_lora_rank]");
    matrix({H, Dqk}, "the MLA's query width");
    elements({Rkr, D}, "the MLA's W_kva [kv_lora_rank + qk_rope_head_dim, dim]");
    matrix({Rkr}, "the MLA's kv latent width");
    elements({H, Dkv, Rkv}, "the MLA's W_kvb [n_heads * (qk_nope_head_dim + v_head_dim), kv_lora_rank]");
    matrix({H, Dkv}, "the MLA's key-value width");
    elements({D, H, Dv}, "the MLA's W_o [dim, n_heads * v_head_dim]");
    elements(tokens({Rkr}), "the MLA's kv latents " + shape("kv_lora_rank + qk_rope_head_dim"));
    elements(tokens({H, Dqk}), "the MLA's queries " + shape("n_heads, qk_nope_head_dim + qk_rope_head_dim"));
    elements(tokens({H, Dkv}), "the MLA's keys and values " + shape("n_heads, qk_nope_head_dim + v_head_dim"));
    if (training) {
      elements({tok.dims[1], tok.dims[1]}, "the attention scores of one head [seq_len, seq_len]");
    } else {
      // The caches; the attention step's scratch is one sequence's latents
      // [max-len, kv_lora_rank] and scores [max-len] (kernels_decode.cc).
      elements(tokens({*tok.cacheLen, Rkv}), "the MLA's latent cache c_kv " + shape("max-len, kv_lora_rank"));
      elements(tokens({*tok.cacheLen, Dr}), "the MLA's k_rope cache " + shape("max-len, qk_rope_head_dim"));
    }

    const MoeConfig &e = m.moe;
    const Factor E{"model.moe.n_routed", e.n_routed}, Hd{"model.moe.expert_hidden", e.expert_hidden};
    elements({E, D}, "the MoE's gate.weight [n_routed, dim]");
    elements(tokens({E}), "the MoE's router probabilities [" + tok.rows + ", n_routed]");
    elements({E, Hd, D}, "the MoE's experts.W1 [n_routed, expert_hidden, dim]");
    matrix({Hd}, "the MoE's expert_hidden");
    if (e.n_shared > 0) {
      const Factor Ns{"model.moe.n_shared", e.n_shared};
      elements({Ns, Hd, D}, "the MoE's shared.W1 [n_shared * expert_hidden, dim]");
      matrix({Ns, Hd}, "the MoE's shared hidden size n_shared * expert_hidden");
      elements(tokens({Ns, Hd}),
               "the shared experts' hidden activations [" + tok.rows + ", n_shared * expert_hidden]");
    }
    // The expert capacity as the model builders compute it (ModelBuilder.cpp,
    // DecodeBuilder.cpp), on the step's N tokens (at most 2^40: checked above).
    int64_t N = 1;
    std::string nNames;
    for (const Factor &f : tok.dims) {
      N *= f.value;
      nNames += f.name + " * ";
    }
    const double cap = std::floor(e.capacity_factor * N * e.top_k / e.n_routed);
    const std::string capName =
        "capacity (= max(1, floor(model.moe.capacity_factor * " + nNames + "model.moe.top_k / model.moe.n_routed)))";
    const std::string slots = "the MoE's expert slots [n_routed, capacity], indexed in i32";
    if (!(cap <= double(kMaxMatrixDim)))
      fail("model.moe.n_routed * " + capName,
           "expected a product of at most " + kMatrix + " (" + slots + "), got capacity " + fmt(cap));
    const Factor C{capName, std::max<int64_t>(1, static_cast<int64_t>(cap))};
    requireProduct({E, C}, kMaxMatrixDim, kMatrix, slots);
    elements({E, C, D}, "the MoE's expert inputs [n_routed, capacity, dim]");
    elements({E, C, Hd}, "the MoE's expert activations [n_routed, capacity, expert_hidden]");
  }
}

void validate(const Config &c) {
  const ModelConfig &m = c.model;
  requirePositive("model.vocab_size", m.vocab_size);
  if (m.vocab_size > (int64_t(1) << 31) - 1)  // token ids are i32 in the plan and the data
    fail("model.vocab_size", "expected at most 2147483647 (token ids are 32-bit), got " + std::to_string(m.vocab_size));
  requirePositive("model.dim", m.dim);
  requirePositive("model.n_layers", m.n_layers);
  // Every layer (and MTP depth) is ops in every function of the step: hymo-opt
  // on tiny at 400 layers held 6.4 GB when the cap was set (1.23 GB writing
  // the plan directly without fusion after session 68; 687 MB in hymo-run
  // compile's pipeline since session 70, 3.45 GB before;
  // docs/passes/emit-plan.md), and 10^4
  // layers ended in an out-of-memory abort minutes later instead of an error
  // here.
  if (m.n_layers > kMaxLayers)
    fail("model.n_layers", "expected at most " + std::to_string(kMaxLayers) + " layers, got " +
                               std::to_string(m.n_layers));
  requirePositive("model.ffn_hidden", m.ffn_hidden);
  if (m.layer_pattern.empty())
    fail("model.layer_pattern", "expected a non-empty string of G and M, got ''");
  for (char ch : m.layer_pattern)
    if (ch != 'G' && ch != 'M')
      fail("model.layer_pattern", std::string("expected only the letters G and M, got '") +
                                      ch + "' in '" + m.layer_pattern + "'");
  requireRange("model.norm_eps", m.norm_eps, 0, 1, true, false);
  requireRange("model.rope_theta", m.rope_theta, 0, 1e300, true, false);
  requirePositive("model.gdn.n_heads", m.gdn.n_heads);
  requirePositive("model.gdn.head_dim", m.gdn.head_dim);
  requirePositive("model.gdn.state_dim", m.gdn.state_dim);
  requirePositive("model.gdn.chunk_size", m.gdn.chunk_size);
  requirePositive("model.mla.n_heads", m.mla.n_heads);
  requirePositive("model.mla.q_lora_rank", m.mla.q_lora_rank);
  requirePositive("model.mla.kv_lora_rank", m.mla.kv_lora_rank);
  requirePositive("model.mla.qk_nope_head_dim", m.mla.qk_nope_head_dim);
  requirePositive("model.mla.qk_rope_head_dim", m.mla.qk_rope_head_dim);
  requirePositive("model.mla.v_head_dim", m.mla.v_head_dim);
  if (m.mla.qk_rope_head_dim % 2 != 0)
    fail("model.mla.qk_rope_head_dim",
         "expected an even size (RoPE rotates halves), got " +
             std::to_string(m.mla.qk_rope_head_dim));
  requirePositive("model.moe.n_routed", m.moe.n_routed);
  if (m.moe.n_shared < 0)
    fail("model.moe.n_shared", "expected a non-negative integer, got " +
                                   std::to_string(m.moe.n_shared));
  requirePositive("model.moe.top_k", m.moe.top_k);
  if (m.moe.top_k > m.moe.n_routed)
    fail("model.moe.top_k", "expected top_k <= n_routed (" +
                                std::to_string(m.moe.n_routed) + "), got " +
                                std::to_string(m.moe.top_k));
  requirePositive("model.moe.expert_hidden", m.moe.expert_hidden);
  if (!(m.moe.capacity_factor > 0))
    fail("model.moe.capacity_factor",
         "expected a positive number, got " + fmt(m.moe.capacity_factor));
  requireRange("model.moe.ema_alpha", m.moe.ema_alpha, 0, 1, true, false);
  if (m.moe.bias_speed < 0)
    fail("model.moe.bias_speed", "expected a non-negative number, got " + fmt(m.moe.bias_speed));
  if (m.mtp.depth < 0)
    fail("model.mtp.depth", "expected a non-negative integer, got " + std::to_string(m.mtp.depth));
  if (m.mtp.depth > kMaxLayers)
    fail("model.mtp.depth", "expected at most " + std::to_string(kMaxLayers) + " depths, got " +
                                std::to_string(m.mtp.depth));
  for (size_t i = 0; i < m.mtp.weights.size(); ++i)
    if (!(m.mtp.weights[i] >= 0))  // (a negative weight would reward the MTP heads' loss)
      fail("model.mtp.weights", "expected weights >= 0, got " + fmt(m.mtp.weights[i]) + " at index " +
                                    std::to_string(i));
  if (static_cast<int64_t>(m.mtp.weights.size()) != m.mtp.depth)
    fail("model.mtp.weights", "expected " + std::to_string(m.mtp.depth) +
                                  " weights (one per mtp.depth), got " +
                                  std::to_string(m.mtp.weights.size()));

  const OptimizerConfig &o = c.optimizer;
  requireRange("optimizer.muon_lr", o.muon_lr, 0, 1e9, false, false);
  requireRange("optimizer.momentum", o.momentum, 0, 1, false, true);
  if (o.betas.size() != 2)
    fail("optimizer.betas", "expected 2 numbers, got " + std::to_string(o.betas.size()));
  requireRange("optimizer.betas[0]", o.betas[0], 0, 1, false, true);
  requireRange("optimizer.betas[1]", o.betas[1], 0, 1, false, true);
  requireRange("optimizer.eps", o.eps, 0, 1, true, false);
  requireRange("optimizer.weight_decay", o.weight_decay, 0, 1e9, false, false);
  requirePositive("optimizer.ns_iterations", o.ns_iterations);
  if (o.ns_iterations > kMaxNsIterations)
    fail("optimizer.ns_iterations", "expected at most " + std::to_string(kMaxNsIterations) +
                                        " iterations, got " + std::to_string(o.ns_iterations));
  requireOneOf("optimizer.ns_coefficients", o.ns_coefficients, {"quintic", "cubic"});
  requireOneOf("optimizer.muon_scale", o.muon_scale, {"shape", "rms"});
  requireRange("optimizer.adamw_lr", o.adamw_lr, 0, 1e9, false, false);
  if (o.adamw_betas.size() != 2)
    fail("optimizer.adamw_betas", "expected 2 numbers, got " + std::to_string(o.adamw_betas.size()));
  requireRange("optimizer.adamw_betas[0]", o.adamw_betas[0], 0, 1, false, true);
  requireRange("optimizer.adamw_betas[1]", o.adamw_betas[1], 0, 1, false, true);
  requireRange("optimizer.adamw_eps", o.adamw_eps, 0, 1, true, false);
  requireRange("optimizer.adamw_weight_decay", o.adamw_weight_decay, 0, 1e9, false, false);
  requireRange("optimizer.embed_weight_decay", o.embed_weight_decay, 0, 1e9, false, false);

  const SchedulerConfig &s = c.scheduler;
  requirePositive("scheduler.total_steps", s.total_steps);
  requireRange("scheduler.warmup_frac", s.warmup_frac, 0, 1, false, false);
  requireRange("scheduler.stable_frac", s.stable_frac, 0, 1, false, false);
  requireRange("scheduler.decay_frac", s.decay_frac, 0, 1, false, false);
  double sum = s.warmup_frac + s.stable_frac + s.decay_frac;
  if (std::fabs(sum - 1.0) > 1e-9)
    fail("scheduler.decay_frac", "expected warmup_frac + stable_frac + decay_frac = 1, got " + fmt(sum));
  requireRange("scheduler.min_lr_ratio", s.min_lr_ratio, 0, 1, false, false);
  requireOneOf("scheduler.decay", s.decay, {"linear", "cosine", "sqrt"});

  const TrainingConfig &t = c.training;
  requirePositive("training.micro_batch_size", t.micro_batch_size);
  requirePositive("training.seq_len", t.seq_len);
  if (t.seq_len < m.mtp.depth + 2)
    fail("training.seq_len", "expected at least mtp.depth + 2 = " +
                                 std::to_string(m.mtp.depth + 2) +
                                 " tokens (every MTP depth needs a target), got " +
                                 std::to_string(t.seq_len));
  requirePositive("training.gradient_accumulation_steps", t.gradient_accumulation_steps);
  if (!(t.grad_clip > 0))
    fail("training.grad_clip", "expected a positive number, got " + fmt(t.grad_clip));
  requirePositive("training.consecutive_nan_limit", t.consecutive_nan_limit);
  if (t.precision == "fp16")
    fail("training.precision",
         "fp16 is not supported: its 5-bit exponent overflows in the "
         "recurrence and the softmax (HyMo needs FP32 range); use bf16, fp32 or fp64");
  requireOneOf("training.precision", t.precision, {"fp32", "fp64", "bf16"});
  requirePositive("training.world_size", t.world_size);
  if (t.seed < 0)
    fail("training.seed", "expected a non-negative integer, got " + std::to_string(t.seed));
  const Factor B{"training.micro_batch_size", t.micro_batch_size}, T{"training.seq_len", t.seq_len};
  validateSizes(c, {{B, T}, "micro_batch_size, seq_len", "micro_batch_size * seq_len", nullptr});
}

Config fromYaml(const YAML::Node &root) {
  if (!root.IsMap())
    fail("config", "expected a mapping with sections model, optimizer, scheduler, training, got " + show(root));
  checkKeys(root, "");
  Config c;
  for (const Field &f : schema()) {
    YAML::Node n = lookup(root, f.path);
    if (!n.IsDefined() || n.IsNull()) {
      if (f.required)
        fail(f.path, "missing required key");
      continue;
    }
    f.set(c, n);
  }
  validate(c);
  return c;
}

} // namespace

std::optional<Config> parseConfig(const std::string &text,
                                  const std::string &source,
                                  const std::vector<Override> &overrides,
                                  std::string &error) {
  try {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception &e) {
      throw ConfigError{"invalid YAML at line " + std::to_string(e.mark.line + 1) +
                        ": " + e.msg};
    }
    if (!root.IsDefined() || root.IsNull())
      root = YAML::Node(YAML::NodeType::Map);
    for (const Override &o : overrides)
      applyOverride(root, o);
    return fromYaml(root);
  } catch (const ConfigError &e) {
    error = source + ": " + e.message;
  } catch (const std::exception &e) {
    error = source + ": " + e.what();
  }
  return std::nullopt;
}

std::optional<Config> loadConfig(const std::string &path,
                                 const std::vector<Override> &overrides,
                                 std::string &error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = path + ": is a directory, not a config file";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open config file";
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parseConfig(ss.str(), path, overrides, error);
}

std::string validateConfig(const Config &config) {
  try {
    validate(config);
  } catch (const ConfigError &e) {
    return e.message;
  }
  return "";
}

std::string validateDecodeSizes(const Config &config, int64_t batch, int64_t maxLen) {
  const Factor B{"--hymo-decode-batch", batch},
      Tmax = maxLen > 0 ? Factor{"--hymo-decode-max-len", maxLen}
                        : Factor{"training.seq_len (the default --hymo-decode-max-len)", config.training.seq_len};
  try {
    validateSizes(config, {{B}, "batch", "batch", &Tmax});
  } catch (const ConfigError &e) {
    return e.message;
  }
  return "";
}

std::string configToYaml(const Config &config) {
  // Group the flat schema back into nested mappings.
  YAML::Emitter e;
  e << YAML::BeginMap;
  std::vector<std::string> open;
  for (const Field &f : schema()) {
    std::vector<std::string> parts = split(f.path);
    std::vector<std::string> sections(parts.begin(), parts.end() - 1);
    size_t common = 0;
    while (common < open.size() && common < sections.size() &&
           open[common] == sections[common])
      ++common;
    while (open.size() > common) {
      e << YAML::EndMap;
      open.pop_back();
    }
    while (open.size() < sections.size()) {
      e << YAML::Key << sections[open.size()] << YAML::Value << YAML::BeginMap;
      open.push_back(sections[open.size()]);
    }
    e << YAML::Key << parts.back() << YAML::Value;
    f.emit(config, e);
  }
  while (!open.empty()) {
    e << YAML::EndMap;
    open.pop_back();
  }
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

std::string configToJson(const Config &config) {
  // Nest the flat schema: every field's sections open in order.
  std::string out = "{";
  std::vector<std::string> open;
  bool first = true;
  for (const Field &f : schema()) {
    std::vector<std::string> parts = split(f.path);
    std::vector<std::string> sections(parts.begin(), parts.end() - 1);
    size_t common = 0;
    while (common < open.size() && common < sections.size() &&
           open[common] == sections[common])
      ++common;
    while (open.size() > common) {
      out += "}";
      open.pop_back();
    }
    while (open.size() < sections.size()) {
      out += (first ? "" : ", ") + jsonValue(sections[open.size()]) + ": {";
      open.push_back(sections[open.size()]);
      first = true;
    }
    out += (first ? "" : ", ") + jsonValue(parts.back()) + ": " + f.json(config);
    first = false;
  }
  while (!open.empty()) {
    out += "}";
    open.pop_back();
  }
  return out + "}";
}

} // namespace hymo
