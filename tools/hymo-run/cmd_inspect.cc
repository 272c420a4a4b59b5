// hymo-run inspect PLAN: validate a plan and print its summary (the
// --dump-plan view).
#include <iostream>

#include "commands.h"
#include "hymo/rt/api.h"

namespace hymo_run {

void add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "validate a plan and print a summary: buffers, params, functions, arena");
  auto path = std::make_shared<std::string>();
  cmd->add_option("plan", *path, "plan file (JSON)")->required();
  cmd->callback([path] {
    hymo::rt::Plan plan = hymo::rt::load_plan(*path);
    std::cout << hymo::rt::plan_summary(plan);
  });
}

}  // namespace hymo_run
