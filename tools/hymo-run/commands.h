// hymo-run subcommands: one file each; main.cc wires them up.
#pragma once

#include <CLI/CLI.hpp>

namespace hymo_run {

// Each adds its subcommand to `app`; the work runs from the subcommand's
// callback and reports failures by throwing hymo::rt::Error.
void add_inspect_command(CLI::App& app);
void add_exec_command(CLI::App& app);
void add_compile_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_sample_command(CLI::App& app);

// The --version text (build features).
std::string version_text();

}  // namespace hymo_run
