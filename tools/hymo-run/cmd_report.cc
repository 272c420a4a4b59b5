// hymo-run report DIR: plots and a summary of DIR/metrics.jsonl (placeholder).
#include "commands.h"
#include "hymo/rt/status.h"
namespace hymo_run {
void add_report_command(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("report", "plots (SVG) and a summary of a training run's metrics.jsonl");
  cmd->add_option("dir", *dir, "run directory (holding metrics.jsonl)")->required();
  cmd->callback([dir] { throw hymo::rt::Error("report: not implemented yet"); });
}
}  // namespace hymo_run
