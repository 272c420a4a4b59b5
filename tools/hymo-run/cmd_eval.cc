// hymo-run eval --ckpt CKPT --data PATH [--max-tokens N] [--device cpu|cuda]
//               [--json] [--plan PLAN] [--save-logits FILE.npy [--overwrite]] [--threads K]
// The next-token loss and perplexity of a checkpoint on held-out data
// (docs/eval.md). The config comes from the checkpoint's metadata: the plan
// next to the checkpoint (RUN/plan.json) is reused when its config is the
// checkpoint's, otherwise the config is compiled again (as `train` does).
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "run_files.h"
#include "compile_plan.h"
#include "eval_core.h"
#include "hymo/rt/api.h"
#include "hymo/rt/checkpoint.h"
#include "hymo/rt/safetensors.h"

namespace hymo_run {
namespace {

using hymo::rt::Error;
using hymo::rt::throw_if_error;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

struct EvalOptions {
  std::string ckpt, data, device = "cpu", plan, save_logits;
  int64_t max_tokens = 0;
  bool json_only = false, overwrite = false;
  int threads = 0;
};

std::string dir_of(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? "." : s == 0 ? "/" : p.substr(0, s);
}



// The plan for the checkpoint's config: --plan, else RUN/plan.json next to
// RUN/checkpoints/ when its config equals the checkpoint's and it has
// `logits`, else compiled from the config into a temporary directory.
// `how` says which.
hymo::rt::Plan obtain_plan(const EvalOptions& o, const std::string& ckpt, const json& config, std::string* how) {
  hymo::rt::Plan plan;
  auto config_of = [](const hymo::rt::Plan& p) { return json::parse(p.config_json, nullptr, false); };
  if (!o.plan.empty()) {
    if (!is_file(o.plan)) throw Error("--plan " + o.plan + ": no such file");
    throw_if_error(hymo::rt::load_plan_status(o.plan, &plan).with_context(o.plan));
    if (config_of(plan) != config)
      throw Error("--plan " + o.plan + " was compiled from another config than checkpoint " + ckpt +
                  "'s; drop --plan to compile the checkpoint's config");
    *how = o.plan;
    return plan;
  }
  const std::string next = dir_of(dir_of(ckpt)) + "/plan.json";
  if (is_file(next) && hymo::rt::load_plan_status(next, &plan).ok() && config_of(plan) == config &&
      plan.find_function("logits")) {
    *how = next + " (next to the checkpoint)";
    return plan;
  }
  if (!compiler_available())
    throw Error("checkpoint " + ckpt +
                ": no matching plan next to it and this build has no compiler (CMake HYMO_COMPILER off); compile "
                "one where hymo-opt is built and pass it with --plan, or set $HYMO_OPT");
  plan = compile_config_json(config.dump(2), {}, "eval");
  *how = "compiled from the checkpoint's config";
  return plan;
}

void run_eval(const EvalOptions& o) {
  if (o.device != "cpu") {
    if (o.device == "cuda") throw Error("--device cuda: the CUDA backend is not built yet; use --device cpu");
    throw Error("--device " + o.device + ": expected cpu or cuda");
  }
  if (o.max_tokens < 0) throw Error("--max-tokens must be positive, got " + std::to_string(o.max_tokens));
  const std::string ckpt = resolve_ckpt_arg(o.ckpt);
  if (!o.save_logits.empty()) {  // (before the work: nothing saved is written over unasked)
    std::error_code ec;
    if (is_dir(o.save_logits)) throw Error("--save-logits " + o.save_logits + ": is a directory; name a file");
    if (std::filesystem::equivalent(o.save_logits, ckpt, ec))
      throw Error("--save-logits " + o.save_logits + ": is the checkpoint being evaluated; name another file");
    // Never over an input (the data, the plan) nor a file of the run that eval
    // does not own (its checkpoints, plan.json, metrics.jsonl), --overwrite or
    // not; compared by filesystem identity (another spelling, a link).
    refuse_output_is_input("--save-logits", o.save_logits, {{"--plan", o.plan}, {"--data", data_file_of(o.data)}});
    const std::string run_dir = dir_of(dir_of(ckpt));
    std::vector<std::pair<std::string, std::string>> run_files;
    for (const auto& [n, f] : step_checkpoints(dir_of(ckpt))) run_files.emplace_back("checkpoint", f);
    run_files.emplace_back("the run's plan", run_dir + "/plan.json");
    run_files.emplace_back("the run's metrics", run_dir + "/metrics.jsonl");
    refuse_output_is_input("--save-logits", o.save_logits, run_files,
                           "a file of the checkpoint's run, which eval does not own");
    refuse_existing_unless("--save-logits", o.save_logits, o.overwrite);
  }
  std::unique_ptr<hymo::rt::SafetensorsFile> f;
  throw_if_error(hymo::rt::SafetensorsFile::open(ckpt, &f));
  const json config = checkpoint_config(*f);
  // The step goes into the result line; a checkpoint `train` did not write may
  // lack it ("step": null), but a malformed one is refused before the work.
  std::optional<int64_t> step;
  if (auto it = f->metadata().find("step"); it != f->metadata().end()) {
    int64_t n = 0;
    if (!parse_step_count(it->second, &n))
      throw Error("checkpoint " + ckpt + ": metadata step = '" + it->second + "' is not a non-negative integer");
    step = n;
  }
  std::string how;
  hymo::rt::Plan plan = obtain_plan(o, ckpt, config, &how);
  int64_t B = 0, T = 0, V = 0;
  eval_plan_shape(plan, how, &B, &T, &V);
  Evaluator ev(o.data, o.max_tokens, B, T, V);

  hymo::rt::ExecutorOptions eo;
  eo.num_threads = o.threads;
  hymo::rt::CpuExecutor ex(std::move(plan), eo);
  throw_if_error(hymo::rt::load_param_table(&ex, *f));
  if (!o.json_only) std::fprintf(stderr, "hymo-run eval: %s, plan %s\n", ckpt.c_str(), how.c_str());

  hymo::rt::HostTensor first;
  EvalResult r = ev.run(ex, o.save_logits.empty() ? nullptr : &first);
  // A non-finite loss is no result (a diverged checkpoint whose parameters are finite but whose
  // logits overflow): an error, before any result line or --save-logits file is written.
  if (!std::isfinite(r.loss_main)) {
    char loss[32];
    std::snprintf(loss, sizeof loss, "%g", r.loss_main);
    throw Error("checkpoint " + ckpt + ": the loss on " + ev.name() + " is non-finite (" + loss + ")" +
                (r.nonfinite_row >= 0 ? ", first at row " + std::to_string(r.nonfinite_row) + " position " +
                                            std::to_string(r.nonfinite_pos) + ", where the logits hold NaN or infinity"
                                      : std::string()) +
                " (a diverged or corrupt checkpoint?)");
  }
  if (!o.save_logits.empty()) throw_if_error(hymo::rt::write_npy(o.save_logits, first));

  ojson j = ojson::object();
  j["ckpt"] = ckpt;
  j["step"] = step ? ojson(*step) : ojson(nullptr);
  j["data"] = ev.name();
  j["loss_main"] = std::isfinite(r.loss_main) ? ojson(r.loss_main) : ojson(nullptr);
  j["perplexity"] = std::isfinite(r.perplexity) ? ojson(r.perplexity) : ojson(nullptr);
  j["predictions"] = r.predictions;
  j["tokens"] = r.tokens_used;
  j["file_tokens"] = ev.file_tokens();
  j["rows"] = r.rows;
  j["seq_len"] = T;
  j["batch"] = B;
  j["batches"] = r.batches;
  j["padded_rows"] = r.padded_rows;
  j["seconds"] = r.seconds;
  j["tokens_per_s"] = r.seconds > 0 ? ojson(double(r.tokens_used) / r.seconds) : ojson(nullptr);
  if (!o.json_only)
    std::printf("eval %s: loss_main %.4f  perplexity %.3f  (%lld predictions in %lld rows of %lld, %lld batches, "
                "%.1fs)\n",
                ev.name().c_str(), r.loss_main, r.perplexity, (long long)r.predictions, (long long)r.rows,
                (long long)T, (long long)r.batches, r.seconds);
  // JSON text is UTF-8 and paths are bytes: a path that is not UTF-8 (a name
  // with byte 0xff) is written with U+FFFD for each invalid byte, said on
  // stderr (the JSON line stays valid; before, dumping it threw after the work).
  for (const char* key : {"ckpt", "data"})
    if (!is_utf8(j[key].get_ref<const std::string&>()))
      std::fprintf(stderr, "hymo-run eval: note: the %s path is not valid UTF-8; the JSON line writes each invalid "
                   "byte of it as U+FFFD\n", key);
  std::printf("%s\n", j.dump(-1, ' ', false, ojson::error_handler_t::replace).c_str());
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  auto* cmd = app.add_subcommand("eval", "loss and perplexity of a checkpoint on held-out data (docs/eval.md)");
  cmd->add_option("--ckpt", o->ckpt, "checkpoint (step_N.safetensors), or a run directory (its latest)")->required();
  cmd->add_option("--data", o->data, "held-out data: a text file (bytes), a token shard, or 'default'")->required();
  cmd->add_option("--max-tokens", o->max_tokens, "use only the first N tokens of --data (N >= seq_len)")
      ->check(CLI::Range(int64_t(1), kMaxCount));
  cmd->add_option("--device", o->device, "cpu|cuda (default cpu)");
  cmd->add_flag("--json", o->json_only, "print only the JSON line (no progress or text line)");
  cmd->add_option("--plan", o->plan, "run this plan (compiled from the checkpoint's config) instead of compiling");
  cmd->add_option("--save-logits", o->save_logits, "write the first batch's logits [B,T,V] to FILE.npy");
  cmd->add_flag("--overwrite", o->overwrite, "let --save-logits replace an existing file (never the checkpoint)");
  cmd->add_option("--threads", o->threads, "CPU worker threads (default: HYMO_NUM_THREADS or all cores)")
      ->check(CLI::Range(1, hymo::rt::kMaxThreads));
  cmd->callback([o] { run_eval(*o); });
}

}  // namespace hymo_run
