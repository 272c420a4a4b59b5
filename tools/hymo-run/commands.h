// hymo-run subcommands: one file each; main.cc wires them up.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>

namespace hymo_run {

// The largest count an option takes (steps, intervals, tokens): 10^12, far
// beyond any run, so that a typo such as 1e20 is an error, not a run that
// never ends or a value clamped without a word.
inline constexpr int64_t kMaxCount = 1000000000000;

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
