// hymo-run compile --config CFG.yaml [--set section.key=value]...
//                  [--precision fp32|fp64|bf16] -o PLAN
// Compiles the training plan (forward, forward_grad, micro_step, update) by
// running hymo-opt; `hymo-run train --plan PLAN` runs it. On a build without
// the compiler this is an error saying so.
#include <iostream>

#include "commands.h"
#include "compile_plan.h"
#include "hymo/rt/api.h"

namespace hymo_run {

void add_compile_command(CLI::App& app) {
  auto req = std::make_shared<CompileRequest>();
  auto* cmd = app.add_subcommand("compile", "compile a config into a training plan (runs hymo-opt)");
  cmd->add_option("--config", req->config, "model config (YAML, models/configs/*.yaml)")->required();
  cmd->add_option("--set", req->sets, "section.key=value: override a config key (repeatable)");
  cmd->add_option("--precision", req->precision, "fp32|fp64|bf16: override training.precision");
  cmd->add_option("-o,--output", req->output, "plan file to write (JSON)")->required();
  cmd->callback([req] {
    compile_plan(*req);
    hymo::rt::Plan plan = hymo::rt::load_plan(req->output);  // validate what was written
    std::cerr << "hymo-run compile: wrote " << req->output << " (" << plan.buffers.size() << " buffers, "
              << plan.params.size() << " params, " << plan.functions.size() << " functions, arena "
              << plan.arena_bytes << " bytes)\n";
  });
}

}  // namespace hymo_run
