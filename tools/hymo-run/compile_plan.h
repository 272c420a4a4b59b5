// Compiling a training plan by running hymo-opt as a subprocess (hymo-run
// never links LLVM/MLIR), and finding the files hymo-run ships with.
#pragma once

#include <string>

#include "hymo/rt/plan_format.h"
#include <vector>

namespace hymo_run {

// What to compile: a config file (YAML, or the JSON of a resolved config),
// --set overrides (section.key=value) and an optional precision override.
struct CompileRequest {
  std::string config;
  std::vector<std::string> sets;
  std::string precision;  // empty: the config's
  std::string output;     // the plan file to write
  // hymo-opt flags after the model's; empty: the training pipeline
  // (--hymo-autodiff --hymo-train-step --hymo-fuse-elementwise).
  std::vector<std::string> pipeline = {};
  // How errors name `config` (empty: its path), for a temporary file
  // written from a checkpoint's or a plan's config.
  std::string config_name = {};
};

// True when this hymo-run was built together with the compiler (CMake
// HYMO_COMPILER on), or $HYMO_OPT names one.
bool compiler_available();

// The hymo-opt to run: $HYMO_OPT, else the one CMake built next to this
// hymo-run, else hymo-opt in this executable's directory or ../bin. Throws
// hymo::rt::Error saying what to do when there is none.
std::string find_hymo_opt();

// Runs hymo-opt --hymo-model=CONFIG [--hymo-set=...]... --hymo-autodiff
// --hymo-train-step --hymo-fuse-elementwise --hymo-lower-to-rt --hymo-emit-plan=output={OUTPUT} -o /dev/null. The plan
// is written to a temporary name and renamed, so OUTPUT is either the old
// file or a complete new one; hymo-emit-plan has run the runtime's plan
// check on it. Throws hymo::rt::Error carrying hymo-opt's message on failure.
void compile_plan(const CompileRequest& req);

// Compiles a resolved config (a checkpoint's, JSON) with `pipeline` (as in
// CompileRequest) into a plan in a temporary directory under /tmp, loads it
// and removes the files. `what` names the caller in errors.
hymo::rt::Plan compile_config_json(const std::string& config_json, const std::vector<std::string>& pipeline,
                                   const std::string& what);

// Checks a --set argument's form (section.key=value, or
// section.sub.key=value); throws naming it otherwise.
void check_set_syntax(const std::string& set);

// The built-in dataset for `--data default`: data/default.txt of the source
// tree (found next to the build or through the path CMake baked in).
std::string default_data_path();

// The directory holding this executable.
std::string self_dir();

}  // namespace hymo_run
