// hymo-run train --config CFG.yaml [--set section.key=value]... --data PATH
//                [--init CKPT] [--save-init CKPT] [--steps N] [--device cpu|cuda]
//                [--precision fp32|fp64|bf16] --out DIR [--resume DIR] [--overwrite]
//                [--save-interval N] [--plan PLAN]
// Trains on the CPU (spec §3, §5; docs/training.md): each optimizer step runs
// the plan's micro_step G = training.gradient_accumulation_steps times on the
// fixed batch order, then update. Writes DIR/metrics.jsonl and
// DIR/checkpoints/step_N.safetensors.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "commands.h"
#include "run_files.h"
#include "compile_plan.h"
#include "eval_core.h"
#include "hymo/rt/api.h"
#include "hymo/rt/checkpoint.h"
#include "hymo/rt/data.h"
#include "hymo/rt/safetensors.h"

namespace hymo_run {
namespace {

using hymo::rt::Error;
using hymo::rt::throw_if_error;
using json = nlohmann::json;

struct TrainOptions {
  std::string config;
  std::vector<std::string> sets;
  std::string data;
  std::string init, save_init;
  int64_t steps = -1;
  std::string device = "cpu";
  std::string precision;
  std::string out;
  std::string resume;
  bool overwrite = false;  // a fresh run may replace the run already in --out
  int64_t save_interval = 1000;
  std::string plan;
  int threads = 0;
  int64_t log_every = 10;
  std::string eval_data;  // held-out loss every eval_interval steps (docs/eval.md)
  int64_t eval_interval = 0, eval_max_tokens = 0;
};

// ---------------------------------------------------------------------------
// small helpers


void make_dirs(const std::string& path) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    size_t next = path.find('/', pos + 1);
    cur = path.substr(0, next);
    if (!cur.empty() && !is_dir(cur) && ::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      throw Error("cannot create directory " + cur + ": " + std::strerror(errno));
    pos = next;
  }
  if (!is_dir(path)) throw Error("cannot create directory " + path);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_text_atomic(const std::string& path, const std::string& text) {
  throw_if_error(hymo::rt::atomic_write_file(
      path, [&](hymo::rt::FileSink& s) { return s.write(text.data(), text.size()); }));
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// A JSON number for metrics: non-finite values become null.
using ojson = nlohmann::ordered_json;
ojson num(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

std::string fmt_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  long t = long(s + 0.5);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t / 60) % 60);
  else if (t >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lds", t);
  return buf;
}

// Lists the keys where two resolved configs differ ("model.dim: 64 in the
// checkpoint, 32 now").
void diff_config(const json& a, const json& b, const std::string& prefix, std::vector<std::string>* out) {
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      std::string k = prefix.empty() ? it.key() : prefix + "." + it.key();
      if (!b.contains(it.key())) out->push_back(k + ": " + it.value().dump() + " in the checkpoint, absent now");
      else diff_config(it.value(), b[it.key()], k, out);
    }
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key()))
        out->push_back((prefix.empty() ? it.key() : prefix + "." + it.key()) + ": absent in the checkpoint, " +
                       it.value().dump() + " now");
    return;
  }
  if (a != b) out->push_back(prefix + ": " + a.dump() + " in the checkpoint, " + b.dump() + " now");
}

// The newest DIR/checkpoints/step_N.safetensors as (N, path).
std::pair<int64_t, std::string> latest_checkpoint(const std::string& dir) {
  std::string cdir = dir + "/checkpoints";
  if (!is_dir(dir)) throw Error("--resume " + dir + ": no such directory");
  if (!is_dir(cdir)) throw Error("--resume " + dir + ": no checkpoints directory (" + cdir + ")");
  const auto found = step_checkpoints(cdir);
  if (found.empty()) throw Error("--resume " + dir + ": no checkpoint (step_N.safetensors) in " + cdir);
  return found.back();
}

// Whether a and b name the same directory (b may not exist yet).
bool same_dir(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (std::filesystem::equivalent(a, b, ec)) return true;
  return std::filesystem::path(a).lexically_normal() == std::filesystem::path(b).lexically_normal();
}

// What an earlier run left in dir ("" when nothing): metrics records and
// `ckpts` (its step checkpoints), which a fresh run there would replace.
std::string earlier_run(const std::string& dir, const std::vector<std::pair<int64_t, std::string>>& ckpts) {
  std::string what;
  const std::string metrics = dir + "/metrics.jsonl";
  if (is_file(metrics)) {
    std::ifstream in(metrics);
    int64_t lines = 0;
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) ++lines;
    if (lines > 0) what = metrics + " (" + std::to_string(lines) + (lines == 1 ? " record)" : " records)");
  }
  if (!ckpts.empty()) {
    if (!what.empty()) what += " and ";
    what += std::to_string(ckpts.size()) + " checkpoint" + (ckpts.size() == 1 ? "" : "s") + " (newest " +
            ckpts.back().second + ")";
  }
  return what;
}

int64_t meta_int(const hymo::rt::SafetensorsFile& f, const std::string& key) {
  auto it = f.metadata().find(key);
  if (it == f.metadata().end())
    throw Error("checkpoint " + f.path() + ": metadata lacks '" + key + "' (not a hymo training checkpoint?)");
  const std::string& v = it->second;
  int64_t n = 0;
  if (!parse_step_count(v, &n))
    throw Error("checkpoint " + f.path() + ": metadata " + key + " = '" + v + "' is not a non-negative integer");
  return n;
}

json meta_config(const hymo::rt::SafetensorsFile& f) {
  auto it = f.metadata().find("config");
  if (it == f.metadata().end())
    throw Error("checkpoint " + f.path() + ": metadata holds no config (not a hymo checkpoint?)");
  json c = json::parse(it->second, nullptr, false);
  if (c.is_discarded() || !c.is_object())
    throw Error("checkpoint " + f.path() + ": metadata config is not a JSON object (corrupt?)");
  return c;
}

template <class T>
T cfg_get(const json& cfg, const std::string& section, const std::string& key, T fallback) {
  if (!cfg.contains(section) || !cfg[section].is_object() || !cfg[section].contains(key)) return fallback;
  try {
    return cfg[section][key].get<T>();
  } catch (const std::exception&) {
    throw Error("plan config: " + section + "." + key + " has an unexpected type: " + cfg[section][key].dump());
  }
}

// ---------------------------------------------------------------------------
// the run

class Trainer {
 public:
  explicit Trainer(const TrainOptions& o) : o_(o) {
    while (o_.out.size() > 1 && o_.out.back() == '/') o_.out.pop_back();  // (runs/x/ writes runs/x/metrics.jsonl)
  }
  ~Trainer() {
    if (out_lock_ >= 0) ::close(out_lock_);
  }
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;
  void run();

 private:
  void obtain_plan();
  void check_plan_matches_config() const;
  void setup_data();
  // A scalar buffer's value. f32/bf16 values come back as the shortest
  // decimal that rounds to the same float (metrics read 0.004, not
  // 0.004000000189989805).
  double scalar(const std::string& name) const {
    hymo::rt::HostTensor t = ex_->tensor(name);
    if (t.values.empty()) return NAN;
    double v = t.values[0];
    if (t.dtype == hymo::rt::DType::kF64 || !std::isfinite(v)) return v;
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf - 1, float(v));
    *r.ptr = '\0';
    return std::strtod(buf, nullptr);
  }
  void require_buffer(const std::string& name) const {
    if (!ex_->plan().find_buffer(name))
      throw Error("plan " + plan_path_ + " has no buffer '" + name +
                  "': not a training plan? (compile it with hymo-run compile)");
  }
  std::map<std::string, std::string> metadata(const std::string& kind) const;
  void save(int64_t step);
  // A continued run's metrics.jsonl: read and checked (read_resumed_metrics,
  // before anything is written), then rewritten with the records kept and
  // opened to append (open_metrics; a fresh run's starts empty).
  void read_resumed_metrics(int64_t resumed_step);
  void open_metrics(int64_t resumed_step);
  void progress(int64_t step, int64_t last, const ojson& rec, double elapsed, int64_t done, bool final_line);

  TrainOptions o_;
  std::string plan_path_, plan_text_;
  bool write_plan_ = false;  // plan_text_ was compiled: goes to DIR/plan.json when the run starts
  hymo::rt::Plan plan_;
  json config_;
  std::unique_ptr<hymo::rt::SafetensorsFile> resume_ckpt_;
  std::unique_ptr<hymo::rt::CpuExecutor> ex_;
  hymo::rt::TokenData data_;
  std::unique_ptr<hymo::rt::Batcher> batcher_;
  std::unique_ptr<Evaluator> eval_;
  int64_t B_ = 0, T_ = 0, G_ = 1, vocab_ = 0, nan_limit_ = 5, total_steps_ = 0;
  bool nan_skip_ = true;
  std::string precision_;
  // Training position.
  int64_t step_ = 0, micro_ = 0, consecutive_skips_ = 0;
  std::string last_checkpoint_;
  std::ofstream metrics_;
  std::string metrics_kept_;                           // the records up to the resumed step
  int64_t metrics_dropped_ = 0, metrics_torn_line_ = 0;  // the records after it; a torn last line's number
  int out_lock_ = -1;  // --out's directory, flock'ed for the run (lock_out)
  bool tty_ = false, stdout_tty_ = false;
};

void Trainer::obtain_plan() {
  // A compiled plan is held in memory and written to DIR/plan.json only once
  // the run has passed its checks (run()), so that a refused run leaves the
  // plan of the run already there; hymo-opt's input and output files are
  // hidden temporaries in DIR, removed here.
  const std::string tag = "." + std::to_string(::getpid());
  std::vector<std::string> temps;
  struct Unlink {
    std::vector<std::string>* paths;
    ~Unlink() {
      for (const std::string& p : *paths) ::unlink(p.c_str());
    }
  } unlink_temps{&temps};
  const std::string compiled = o_.out + "/.plan.json.new" + tag;
  auto temp_config = [&](const std::string& name, const std::string& text) {
    temps.push_back(o_.out + "/." + name + tag);
    write_text_atomic(temps.back(), text);
    return temps.back();
  };
  // hymo-opt's errors name its input; a temporary one is named by what it holds.
  auto compile_from = [&](const std::string& config, const std::string& what) {
    CompileRequest req{config, o_.sets, o_.precision, compiled};
    req.config_name = what;
    compile_plan(req);
  };
  temps.push_back(compiled);
  if (!o_.plan.empty()) {
    if (!is_file(o_.plan)) throw Error("--plan " + o_.plan + ": no such file");
    std::string text = read_text(o_.plan);
    bool recompile = !o_.sets.empty();
    std::string why = o_.sets.empty() ? "" : "--set " + o_.sets.front();
    if (!o_.precision.empty()) {
      hymo::rt::Plan p;
      throw_if_error(hymo::rt::parse_plan_status(text, &p));
      json c = json::parse(p.config_json, nullptr, false);
      std::string have = c.is_object() ? cfg_get<std::string>(c, "training", "precision", "") : "";
      if (have != o_.precision) {
        recompile = true;
        if (why.empty()) why = "--precision " + o_.precision;
      }
    }
    if (!recompile) {
      plan_path_ = o_.plan;
      plan_text_ = std::move(text);
      return;
    }
    if (!compiler_available())
      throw Error(why + ": changes the compiled graph of --plan " + o_.plan +
                  ", and recompiling needs the compiler, which this build lacks (CMake HYMO_COMPILER off); "
                  "compile a plan with this setting where hymo-opt is built (hymo-run compile ... --set ...) and "
                  "pass it with --plan, or set $HYMO_OPT");
    // Recompile from the plan's resolved config plus the overrides.
    hymo::rt::Plan p;
    throw_if_error(hymo::rt::parse_plan_status(text, &p));
    compile_from(temp_config("plan-base-config.json", p.config_json), "the config of --plan " + o_.plan);
  } else if (!o_.config.empty()) {
    compile_plan({o_.config, o_.sets, o_.precision, compiled});
  } else if (resume_ckpt_) {
    // The config the checkpoint was trained with (plus any --set).
    compile_from(temp_config("resume-config.json", meta_config(*resume_ckpt_).dump(2)),
                 "the config of checkpoint " + resume_ckpt_->path());
  } else {
    throw Error("train needs --config CFG.yaml (or --plan PLAN, or --resume DIR)");
  }
  plan_path_ = o_.out + "/plan.json";
  plan_text_ = read_text(compiled);
  write_plan_ = true;
}

// The plan's config goes into every checkpoint, and eval, sample and
// --resume rebuild the model from it: a plan whose config disagrees with its
// own buffers (a hand-edited plan.json) would write checkpoints nothing can
// load. Checks the sizes that shape the buffers most directly.
void Trainer::check_plan_matches_config() const {
  auto mismatch = [&](const std::string& key, int64_t want, const std::string& buffer,
                      const std::vector<int64_t>& shape) {
    std::string dims;
    for (int64_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    const std::string says = want < 0 ? "lacks " + key : "says " + key + " = " + std::to_string(want);
    throw Error("plan " + plan_path_ + ": its config " + says + ", but its buffer " + buffer + " is [" + dims +
                "]: the plan's config and graph disagree (a plan edited by hand?); compile it again with hymo-run "
                "compile");
  };
  const int64_t B = cfg_get<int64_t>(config_, "training", "micro_batch_size", -1);
  const int64_t T = cfg_get<int64_t>(config_, "training", "seq_len", -1);
  if (B != B_) mismatch("training.micro_batch_size", B, "tokens", {B_, T_});
  if (T != T_) mismatch("training.seq_len", T, "tokens", {B_, T_});
  const int64_t dim = cfg_get<int64_t>(config_, "model", "dim", -1);
  const int64_t layers = cfg_get<int64_t>(config_, "model", "n_layers", -1);
  const hymo::rt::BufferDesc* embed = plan_.find_buffer("embed.weight");
  if (!embed || embed->shape.size() != 2)
    throw Error("plan " + plan_path_ + ": no parameter embed.weight [vocab_size, dim]: not a HyMo training plan");
  if (embed->shape[0] != vocab_) mismatch("model.vocab_size", vocab_, "embed.weight", embed->shape);
  if (embed->shape[1] != dim) mismatch("model.dim", dim, "embed.weight", embed->shape);
  const std::string last = "layers." + std::to_string(layers - 1) + ".norm1.weight";
  const std::string beyond = "layers." + std::to_string(layers) + ".norm1.weight";
  if (layers < 1 || !plan_.find_buffer(last) || plan_.find_buffer(beyond))
    throw Error("plan " + plan_path_ + ": its config says model.n_layers = " + std::to_string(layers) +
                ", but its parameters hold another number of layers: the plan's config and graph disagree (a plan "
                "edited by hand?); compile it again with hymo-run compile");
}

void Trainer::setup_data() {
  std::string path = o_.data == "default" ? default_data_path() : o_.data;
  throw_if_error(hymo::rt::TokenData::load(path, &data_));
  throw_if_error(data_.check(T_, vocab_));
  int64_t world = cfg_get<int64_t>(config_, "training", "world_size", 1);
  if (world != 1)
    throw Error("training.world_size is " + std::to_string(world) +
                ": the CPU trainer runs one rank (world_size 1); sharded training is not built yet");
  batcher_ = std::make_unique<hymo::rt::Batcher>(&data_, B_, T_, 1, 0);
}

std::map<std::string, std::string> Trainer::metadata(const std::string& kind) const {
  std::map<std::string, std::string> m;
  m["kind"] = kind;
  m["producer"] = std::string("hymo-run ") + HYMO_RUN_VERSION;
  m["config"] = config_.dump();
  m["step"] = std::to_string(step_);
  m["data_position"] = std::to_string(micro_);  // the next micro-step index j
  m["consecutive_skips"] = std::to_string(consecutive_skips_);
  m["micro_batch_size"] = std::to_string(B_);
  m["seq_len"] = std::to_string(T_);
  m["gradient_accumulation_steps"] = std::to_string(G_);
  m["precision"] = precision_;
  m["plan_fnv1a64"] = hex64(fnv1a(plan_text_));
  // No random state: the data order is a function of the micro-step index
  // and the plan's init is a function of training.seed (in the config).
  m["rng"] = "none (batch order = f(data_position); init = f(training.seed))";
  return m;
}

void Trainer::save(int64_t step) {
  std::string path = o_.out + "/checkpoints/step_" + std::to_string(step) + ".safetensors";
  // (save_checkpoint refuses buffers a resume would refuse, a non-finite parameter or state: the run
  // stops there, and the checkpoints already written stay as they were)
  const hymo::rt::Status st =
      hymo::rt::save_checkpoint(*ex_, path, hymo::rt::CheckpointContent::kAll, false, metadata("train"));
  if (!st.ok())
    throw Error(st.message() + "; training stopped at step " + std::to_string(step) +
                (last_checkpoint_.empty() ? " (no checkpoint was written)"
                                          : "; the last checkpoint is " + last_checkpoint_));
  last_checkpoint_ = path;
}

void Trainer::read_resumed_metrics(int64_t resumed_step) {
  const std::string path = o_.out + "/metrics.jsonl";
  if (!is_file(path)) return;
  // Keep the records up to the checkpoint's step (a crashed run may have
  // logged steps after its last checkpoint; they are redone). A line that is
  // not a record, a step that is not a step count, or one that repeats or
  // goes back (report's checks, shared), is an
  // error before anything is written, except a torn last line without its
  // newline, which a crash mid-write leaves: dropped, with a note.
  const std::string text = read_text(path);
  const std::string fix = "; fix or remove the line, then resume again";
  MetricsStepOrder order(path, fix);
  std::istringstream in(text);
  std::string line;
  int64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    json r = json::parse(line, nullptr, false);
    const bool record = r.is_object() && r.contains("step") && r["step"].is_number();
    if (!record) {
      if (in.eof() && !text.empty() && text.back() != '\n') {
        metrics_torn_line_ = n;
        continue;
      }
      throw Error(path + ":" + std::to_string(n) + ": not a metrics record (a JSON object with a numeric 'step')" +
                  fix);
    }
    // (a negative step, or one past int64 that would wrap, was kept)
    const int64_t step = metrics_step(r["step"], path, size_t(n), fix);
    order.next(step, size_t(n));
    if (step <= resumed_step)
      metrics_kept_ += line + "\n";
    else
      ++metrics_dropped_;
  }
}

void Trainer::open_metrics(int64_t resumed_step) {
  const std::string path = o_.out + "/metrics.jsonl";
  if (metrics_torn_line_)
    std::fprintf(stderr, "hymo-run train: %s:%lld: dropped a torn last line (no newline: a write cut short)\n",
                 path.c_str(), (long long)metrics_torn_line_);
  if (metrics_dropped_)
    std::fprintf(stderr, "hymo-run train: %s: dropped %lld records after step %lld (logged after the checkpoint; "
                 "redone)\n", path.c_str(), (long long)metrics_dropped_, (long long)resumed_step);
  write_text_atomic(path, metrics_kept_);
  metrics_.open(path, std::ios::app);
  if (!metrics_) throw Error("cannot open " + path + " for writing");
}

void Trainer::progress(int64_t step, int64_t last, const ojson& rec, double elapsed, int64_t done, bool final_line) {
  auto fnum = [](const ojson& v, const char* f) {
    if (!v.is_number()) return std::string("null");
    char buf[32];
    std::snprintf(buf, sizeof buf, f, v.get<double>());
    return std::string(buf);
  };
  double eta = done > 0 ? elapsed / double(done) * double(last - step) : NAN;
  std::string loss = fnum(rec["loss"], "%.4f");
  std::string tps = fnum(rec["tokens_per_s"], "%.0f");
  if (tty_) {
    std::fprintf(stderr, "\rstep %lld/%lld  loss %s  %s tok/s  ETA %s\x1b[K", (long long)step, (long long)last,
                 loss.c_str(), tps.c_str(), fmt_duration(eta).c_str());
    if (final_line) std::fputc('\n', stderr);
    std::fflush(stderr);
  }
  if (!stdout_tty_ || !tty_) {
    bool due = final_line || step == 1 || (o_.log_every > 0 && step % o_.log_every == 0);
    if (due) {
      std::printf("step %lld/%lld loss %s loss_main %s grad_norm %s lr_muon %s skipped %lld tok/s %s ETA %s\n",
                  (long long)step, (long long)last, loss.c_str(), fnum(rec["loss_main"], "%.4f").c_str(),
                  fnum(rec["grad_norm"], "%.4g").c_str(), fnum(rec["lr_muon"], "%.4g").c_str(),
                  (long long)rec["skipped"].get<int64_t>(), tps.c_str(), fmt_duration(eta).c_str());
      std::fflush(stdout);
    }
  }
}

void Trainer::run() {
  if (o_.device != "cpu") {
    if (o_.device == "cuda") throw Error("--device cuda: the CUDA backend is not built yet; use --device cpu");
    throw Error("--device " + o_.device + ": expected cpu or cuda");
  }
  if (o_.precision == "fp16")
    if (!o_.plan.empty() && !compiler_available())
      throw Error("--precision fp16: training.precision fp16 is not supported (its 5-bit exponent overflows; HyMo "
                  "needs FP32 range); use bf16, fp32 or fp64");
  for (const std::string& s : o_.sets) check_set_syntax(s);
  if (!o_.plan.empty() && !o_.config.empty())
    throw Error("--plan and --config exclude each other (the plan carries its config)");
  if (!o_.init.empty() && !o_.resume.empty())
    throw Error("--init and --resume exclude each other (a resumed run takes everything from its checkpoint)");
  if (o_.save_interval < 1) throw Error("--save-interval must be >= 1");
  if (o_.out.empty()) throw Error("--out DIR is required");
  make_dirs(o_.out);
  // One run at a time in an --out: a second `hymo-run train` there stops here, before it reads or
  // writes anything of the first's (the lock on the directory goes with the process).
  out_lock_ = ::open(o_.out.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (out_lock_ < 0) throw Error("--out " + o_.out + ": cannot open the directory: " + std::strerror(errno));
  if (::flock(out_lock_, LOCK_EX | LOCK_NB) != 0)
    throw Error(errno == EWOULDBLOCK ? "--out " + o_.out +
                                           ": another hymo-run train is running in it (it holds the directory's "
                                           "lock); wait for it to end or choose another --out"
                                     : "--out " + o_.out + ": cannot lock the directory: " + std::strerror(errno));
  make_dirs(o_.out + "/checkpoints");

  std::string resume_path;
  int64_t resume_named_step = -1;  // the N of its name
  if (!o_.resume.empty()) {
    std::tie(resume_named_step, resume_path) = latest_checkpoint(o_.resume);
    throw_if_error(hymo::rt::SafetensorsFile::open(resume_path, &resume_ckpt_));
    check_checkpoint_format(*resume_ckpt_);
    auto kind = resume_ckpt_->metadata().find("kind");
    if (kind == resume_ckpt_->metadata().end() || kind->second != "train")
      throw Error("checkpoint " + resume_path + ": holds no training state (kind '" +
                  (kind == resume_ckpt_->metadata().end() ? std::string() : kind->second) +
                  "'); start from it with --init instead");
  }

  // A fresh run (or one resumed from elsewhere) into a directory that holds
  // another run would replace its metrics and checkpoints: refuse unless
  // asked, before anything is written there.
  std::error_code ec;
  const bool continuing = resume_ckpt_ && same_dir(o_.resume, o_.out);
  // The earlier run's checkpoints, listed once: what the checks below see is
  // what --overwrite deletes.
  const std::vector<std::pair<int64_t, std::string>> old_ckpts =
      continuing ? std::vector<std::pair<int64_t, std::string>>() : step_checkpoints(o_.out + "/checkpoints");
  const std::string earlier = continuing ? std::string() : earlier_run(o_.out, old_ckpts);
  if (!earlier.empty() && !o_.overwrite)
    throw Error("--out " + o_.out + " already holds a run: " + earlier + ". " +
                (old_ckpts.empty() ? std::string("Choose") : "Continue it with --resume " + o_.out + ", choose") +
                " another --out, or pass --overwrite to delete that run's metrics and checkpoints and start over");
  // No output is one of the run's inputs, --overwrite or not (compared by
  // filesystem identity: another spelling or a link is caught): --save-init
  // over the checkpoint it resumes from, its --init or its --plan, or the
  // metrics.jsonl / plan.json the run rewrites over its data or config.
  {
    std::vector<std::pair<std::string, std::string>> inputs = {
        {"--config", o_.config}, {"--data", data_file_of(o_.data)}, {"--eval-data", data_file_of(o_.eval_data)},
        {"--init", o_.init}};
    refuse_output_is_input("--out", o_.out + "/metrics.jsonl", inputs);
    if (o_.plan.empty()) refuse_output_is_input("--out", o_.out + "/plan.json", inputs);
    inputs.emplace_back("--plan", o_.plan);
    inputs.emplace_back("--resume's checkpoint", resume_path);
    if (!o_.save_init.empty()) refuse_output_is_input("--save-init", o_.save_init, inputs);
  }
  if (!o_.save_init.empty()) refuse_existing_unless("--save-init", o_.save_init, o_.overwrite);
  for (const auto& [n, f] : old_ckpts)
    for (const auto& [opt, path] : {std::pair<const char*, std::string>{"--init", o_.init}, {"--resume", resume_path}})
      if (!path.empty() && std::filesystem::equivalent(path, f, ec))
        throw Error("--overwrite would delete " + f + ", which this run starts from (" + opt + "); copy it out of " +
                    o_.out + " first");

  obtain_plan();
  throw_if_error(hymo::rt::parse_plan_status(plan_text_, &plan_).with_context(plan_path_));
  config_ = json::parse(plan_.config_json, nullptr, false);
  if (config_.is_discarded() || !config_.is_object()) throw Error("plan " + plan_path_ + ": config is not an object");
  for (const char* fn : {"micro_step", "update"})
    if (!plan_.find_function(fn))
      throw Error("plan " + plan_path_ + " has no function '" + fn +
                  "': not a training plan (compile it with hymo-run compile, which adds the train step)");
  const hymo::rt::BufferDesc* tokens = plan_.find_buffer("tokens");
  if (!tokens || tokens->storage != hymo::rt::StorageKind::kInput || tokens->dtype != hymo::rt::DType::kI32 ||
      tokens->shape.size() != 2)
    throw Error("plan " + plan_path_ + ": expected an input buffer 'tokens' of i32 [B, T]");
  B_ = tokens->shape[0];
  T_ = tokens->shape[1];
  G_ = cfg_get<int64_t>(config_, "training", "gradient_accumulation_steps", 1);
  if (G_ < 1) throw Error("plan config: training.gradient_accumulation_steps must be >= 1");
  nan_limit_ = cfg_get<int64_t>(config_, "training", "consecutive_nan_limit", 5);
  nan_skip_ = cfg_get<bool>(config_, "training", "loss_nan_skip", true);
  total_steps_ = cfg_get<int64_t>(config_, "scheduler", "total_steps", 0);
  vocab_ = cfg_get<int64_t>(config_, "model", "vocab_size", 0);
  precision_ = cfg_get<std::string>(config_, "training", "precision", "fp32");
  check_plan_matches_config();

  setup_data();

  hymo::rt::ExecutorOptions eo;
  eo.num_threads = o_.threads;
  ex_ = std::make_unique<hymo::rt::CpuExecutor>(plan_, eo);
  for (const char* b : {"micro_step:loss", "update:loss", "update:loss_main", "update:grad_norm", "update:lr_muon",
                        "update:lr_adamw"})
    require_buffer(b);
  if (!o_.eval_data.empty()) {
    if (o_.eval_interval < 1) throw Error("--eval-data needs --eval-interval N (N >= 1)");
    int64_t eb = 0, et = 0, ev = 0;
    eval_plan_shape(plan_, plan_path_, &eb, &et, &ev);
    eval_ = std::make_unique<Evaluator>(o_.eval_data, o_.eval_max_tokens, eb, et, ev, "--eval-max-tokens");
  } else if (o_.eval_interval != 0 || o_.eval_max_tokens != 0) {
    throw Error("--eval-interval / --eval-max-tokens need --eval-data PATH");
  }

  if (resume_ckpt_) {
    std::vector<std::string> diffs;
    diff_config(meta_config(*resume_ckpt_), config_, "", &diffs);
    if (!diffs.empty()) {
      std::string msg = "checkpoint " + resume_path + " was trained with another config:";
      for (const std::string& d : diffs) msg += "\n  " + d;
      throw Error(msg);
    }
    throw_if_error(hymo::rt::restore_all_buffers(ex_.get(), *resume_ckpt_));
    step_ = meta_int(*resume_ckpt_, "step");
    // The step three ways: the metadata, the step counter the plan carries (train.step), and the
    // file's name; a checkpoint where they differ was edited or mixed up, and resuming from it
    // would log and name steps that the schedule does not take.
    if (const hymo::rt::BufferDesc* sb = ex_->plan().find_buffer("train.step")) {
      const double counter = scalar("train.step");
      // (an F32 counter holds the step as the nearest float: exact below 2^24)
      const double expected = sb->dtype == hymo::rt::DType::kF64 ? double(step_) : double(float(step_));
      if (!(counter == expected)) {
        char held[32];
        std::snprintf(held, sizeof held, "%.9g", counter);
        throw Error("checkpoint " + resume_path + ": its metadata says step " + std::to_string(step_) +
                    " but its step counter train.step holds " + held + " (an edited or corrupt checkpoint?)");
      }
    }
    if (resume_named_step != step_)
      throw Error("checkpoint " + resume_path + ": named step " + std::to_string(resume_named_step) +
                  " but its metadata says step " + std::to_string(step_) + " (a renamed checkpoint?)");
    micro_ = meta_int(*resume_ckpt_, "data_position");
    consecutive_skips_ = meta_int(*resume_ckpt_, "consecutive_skips");
    std::fprintf(stderr, "hymo-run train: resumed from %s (step %lld, micro-step %lld)\n", resume_path.c_str(),
                 (long long)step_, (long long)micro_);
    last_checkpoint_ = resume_path;
    if (continuing) read_resumed_metrics(step_);
  } else if (!o_.init.empty()) {
    std::unique_ptr<hymo::rt::SafetensorsFile> f;
    throw_if_error(hymo::rt::SafetensorsFile::open(o_.init, &f));
    throw_if_error(hymo::rt::load_param_table(ex_.get(), *f));
    std::fprintf(stderr, "hymo-run train: parameters from %s\n", o_.init.c_str());
  }
  if (!o_.save_init.empty()) {
    throw_if_error(hymo::rt::save_checkpoint(*ex_, o_.save_init, hymo::rt::CheckpointContent::kParamTable,
                                             /*force_f32=*/true, metadata("init")));
    std::fprintf(stderr, "hymo-run train: wrote the initial parameters to %s\n", o_.save_init.c_str());
  }

  if (!earlier.empty()) {
    // --overwrite, and everything above checked: the earlier run goes, so
    // that a later --resume of this directory continues this run.
    for (const auto& [n, f] : old_ckpts)
      if (!(!o_.save_init.empty() && std::filesystem::equivalent(o_.save_init, f, ec)) &&  // (written just now)
          std::remove(f.c_str()) != 0)
        throw Error("--overwrite: cannot delete " + f + ": " + std::strerror(errno));
    std::fprintf(stderr, "hymo-run train: --overwrite: deleted the earlier run in %s: %s\n", o_.out.c_str(),
                 earlier.c_str());
  }
  if (write_plan_) write_text_atomic(plan_path_, plan_text_);
  const int64_t n_steps = o_.steps >= 0 ? o_.steps : std::max<int64_t>(0, total_steps_ - step_);
  const int64_t first = step_, last = step_ + n_steps;
  if (last > total_steps_)  // (the run goes on; the schedule does not)
    std::fprintf(stderr,
                 "hymo-run train: note: steps %lld..%lld run past scheduler.total_steps = %lld, at the schedule's "
                 "final learning rate (min_lr_ratio times the peak)\n",
                 (long long)std::max(first, total_steps_) + 1, (long long)last, (long long)total_steps_);
  open_metrics(step_);
  tty_ = ::isatty(2);
  stdout_tty_ = ::isatty(1);
  std::fprintf(stderr,
               "hymo-run train: %s, %lld tokens (%lld rows of %lld), B=%lld T=%lld G=%lld, steps %lld..%lld of "
               "schedule %lld, precision %s, out %s\n",
               data_.name().c_str(), (long long)data_.size(), (long long)batcher_->rows(), (long long)T_,
               (long long)B_, (long long)T_, (long long)G_, (long long)first, (long long)last,
               (long long)total_steps_, precision_.c_str(), o_.out.c_str());

  using clock = std::chrono::steady_clock;
  std::vector<int32_t> tokens_host(size_t(B_ * T_));
  const auto run_start = clock::now();
  bool saved_last = false;
  for (int64_t s = 0; s < n_steps; ++s) {
    const auto t0 = clock::now();
    int64_t skipped = 0;
    for (int64_t g = 0; g < G_; ++g) {
      batcher_->fill(micro_, tokens_host.data());
      ex_->set_bytes("tokens", tokens_host.data(), tokens_host.size() * sizeof(int32_t));
      ex_->run("micro_step");
      double loss = scalar("micro_step:loss");
      const int64_t j = micro_++;
      if (std::isfinite(loss)) {
        consecutive_skips_ = 0;
        continue;
      }
      if (!nan_skip_)
        throw Error("non-finite loss (" + std::to_string(loss) + ") at micro-step " + std::to_string(j) + " (in step " +
                    std::to_string(step_ + 1) + ") and training.loss_nan_skip is false; stopped" +
                    (last_checkpoint_.empty() ? "" : "; the last checkpoint is " + last_checkpoint_));
      ++skipped;
      ++consecutive_skips_;
      if (consecutive_skips_ >= nan_limit_) {
        if (tty_) std::fputc('\n', stderr);
        throw Error(std::to_string(consecutive_skips_) +
                    " consecutive micro-batches with a non-finite loss (training.consecutive_nan_limit = " +
                    std::to_string(nan_limit_) + "), the last at micro-step " + std::to_string(j) + " (in step " +
                    std::to_string(step_ + 1) + "); training stopped" +
                    (last_checkpoint_.empty() ? " (no checkpoint was written)"
                                              : "; the last checkpoint is " + last_checkpoint_));
      }
    }
    ex_->run("update");
    ++step_;
    const double dt = std::chrono::duration<double>(clock::now() - t0).count();
    const bool is_update = skipped < G_;
    ojson rec = ojson::object();
    rec["step"] = step_;
    rec["loss"] = is_update ? num(scalar("update:loss")) : ojson(nullptr);
    rec["loss_main"] = is_update ? num(scalar("update:loss_main")) : ojson(nullptr);
    rec["grad_norm"] = is_update ? num(scalar("update:grad_norm")) : ojson(nullptr);
    rec["lr_muon"] = num(scalar("update:lr_muon"));
    rec["lr_adamw"] = num(scalar("update:lr_adamw"));
    rec["is_update"] = is_update;
    rec["skipped"] = skipped;
    rec["tokens_per_s"] = num(double(B_ * T_ * G_) / dt);
    rec["step_s"] = dt;
    if (eval_ && (step_ % o_.eval_interval == 0 || s + 1 == n_steps)) {
      EvalResult er = eval_->run(*ex_);
      rec["eval_loss"] = num(er.loss_main);
      rec["eval_ppl"] = num(er.perplexity);
      if (tty_) std::fputs("\r\x1b[K", stderr);
      std::printf("eval step %lld: eval_loss %.4f eval_ppl %.3f (%s, %lld predictions, %.1fs)\n", (long long)step_,
                  er.loss_main, er.perplexity, eval_->name().c_str(), (long long)er.predictions, er.seconds);
      std::fflush(stdout);
    }
    metrics_ << rec.dump() << "\n";
    metrics_.flush();
    if (!metrics_) throw Error("writing " + o_.out + "/metrics.jsonl failed");
    const double elapsed = std::chrono::duration<double>(clock::now() - run_start).count();
    saved_last = false;
    if (step_ % o_.save_interval == 0) {
      save(step_);
      saved_last = true;
    }
    progress(step_, last, rec, elapsed, s + 1, s + 1 == n_steps);
  }
  if (n_steps > 0 && !saved_last) save(step_);
  std::fprintf(stderr, "hymo-run train: done: step %lld%s%s\n", (long long)step_,
               last_checkpoint_.empty() ? "" : ", checkpoint ", last_checkpoint_.c_str());
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  auto* cmd = app.add_subcommand("train", "train a model on the CPU (docs/training.md)");
  cmd->add_option("--config", o->config, "model config (YAML, models/configs/*.yaml)");
  cmd->add_option("--set", o->sets, "section.key=value: override a config key (repeatable)");
  cmd->add_option("--data", o->data, "training data: a text file (bytes), a token shard, or 'default'")->required();
  cmd->add_option("--init", o->init, "load the parameters from this safetensors file (spec names, F32)");
  cmd->add_option("--save-init", o->save_init, "write the initial parameters and buffers (F32) to this file");
  cmd->add_option("--steps", o->steps, "optimizer steps to run (default: scheduler.total_steps minus the step reached)")
      ->check(CLI::Range(int64_t(0), kMaxCount));
  cmd->add_option("--device", o->device, "cpu|cuda (default cpu)");
  cmd->add_option("--precision", o->precision, "fp32|fp64|bf16: override training.precision");
  cmd->add_option("--out", o->out, "output directory: metrics.jsonl, checkpoints/, plan.json")->required();
  cmd->add_option("--resume", o->resume, "continue from the latest DIR/checkpoints/step_N.safetensors");
  cmd->add_flag("--overwrite", o->overwrite,
                "start over in an --out that holds another run: delete its metrics.jsonl and checkpoints first; "
                "let --save-init replace an existing file");
  cmd->add_option("--save-interval", o->save_interval, "write a checkpoint every N steps (default 1000)")
      ->check(CLI::Range(int64_t(1), kMaxCount));
  cmd->add_option("--plan", o->plan, "run this compiled plan (hymo-run compile) instead of compiling --config");
  cmd->add_option("--threads", o->threads, "CPU worker threads (default: HYMO_NUM_THREADS or all cores)")
      ->check(CLI::Range(1, hymo::rt::kMaxThreads));
  cmd->add_option("--log-every", o->log_every, "print a plain progress line every N steps when not on a terminal (0: only the first and last)")
      ->check(CLI::Range(int64_t(0), kMaxCount));
  cmd->add_option("--eval-data", o->eval_data, "held-out data: log eval_loss/eval_ppl every --eval-interval steps");
  cmd->add_option("--eval-interval", o->eval_interval, "evaluate every N steps (and after the last)")
      ->check(CLI::Range(int64_t(1), kMaxCount));
  cmd->add_option("--eval-max-tokens", o->eval_max_tokens, "evaluate on the first N tokens of --eval-data only")
      ->check(CLI::Range(int64_t(1), kMaxCount));
  cmd->callback([o] { Trainer(*o).run(); });
}

}  // namespace hymo_run
