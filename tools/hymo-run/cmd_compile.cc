// hymo-run compile --config CFG.yaml [--set section.key=value]...
//                  [--precision fp32|fp64|bf16] -o PLAN [--overwrite]
// Compiles the training plan (forward, forward_grad, micro_step, update) by
// running hymo-opt; `hymo-run train --plan PLAN` runs it. On a build without
// the compiler this is an error saying so. PLAN may replace an existing plan;
// any other existing file only with --overwrite, and never the --config read.
#include <sys/stat.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "compile_plan.h"
#include "hymo/rt/api.h"
#include "run_files.h"

namespace hymo_run {
namespace {

// Whether `path` holds a hymo plan: one JSON object with "format": "hymo-plan"
// (read as a stream: a checkpoint or a YAML file fails at its first bytes).
bool holds_plan(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains("format") && j["format"] == "hymo-plan";
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto req = std::make_shared<CompileRequest>();
  auto* cmd = app.add_subcommand("compile", "compile a config into a training plan (runs hymo-opt)");
  cmd->add_option("--config", req->config, "model config (YAML, models/configs/*.yaml)")->required();
  cmd->add_option("--set", req->sets, "section.key=value: override a config key (repeatable)");
  cmd->add_option("--precision", req->precision, "fp32|fp64|bf16: override training.precision");
  cmd->add_option("-o,--output", req->output, "plan file to write (JSON)")->required();
  auto overwrite = std::make_shared<bool>(false);
  cmd->add_flag("--overwrite", *overwrite,
                "let -o replace an existing file that is not a plan (an existing plan is replaced without it; "
                "never the --config)");
  cmd->callback([req, overwrite] {
    // Before hymo-opt runs: never over the config it reads; over an existing
    // regular file only when that is a plan, or with --overwrite (a directory,
    // a link or a special file is compile_plan's error).
    refuse_output_is_input("-o", req->output, {{"--config", req->config}});
    struct stat st;
    if (!*overwrite && ::lstat(req->output.c_str(), &st) == 0 && S_ISREG(st.st_mode) && !holds_plan(req->output))
      throw hymo::rt::Error("-o " + req->output +
                            ": the file exists and is not a hymo plan; name another file, or pass --overwrite to "
                            "replace it");
    compile_plan(*req);
    hymo::rt::Plan plan = hymo::rt::load_plan(req->output);  // validate what was written
    std::cerr << "hymo-run compile: wrote " << req->output << " (" << plan.buffers.size() << " buffers, "
              << plan.params.size() << " params, " << plan.functions.size() << " functions, arena "
              << plan.arena_bytes << " bytes)\n";
  });
}

}  // namespace hymo_run
