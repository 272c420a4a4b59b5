// Files of a training run shared by the subcommands: paths, the newest
// DIR/checkpoints/step_N.safetensors, and the config in a checkpoint.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hymo/rt/safetensors.h"

namespace hymo_run {

bool is_dir(const std::string& path);
bool is_file(const std::string& path);

// Whether `text` is valid UTF-8 (nlohmann's dump throws on a string that is
// not: paths are bytes).
bool is_utf8(const std::string& text);

// An output file OPTION names: an existing one is an error naming the option,
// unless `overwrite` (the command's --overwrite).
void refuse_existing_unless(const std::string& option, const std::string& path, bool overwrite);

// The file a --data / --eval-data value reads, for comparing it with an
// output: the built-in default text's path for "default" ("" where that is
// not found: reading the data says so), else the value itself.
std::string data_file_of(const std::string& data);

// Whether `a` and `b` are the same existing file by filesystem identity
// (device and inode, links followed: another spelling of the path or a link
// to the file is the same file); false when either does not exist.
bool same_file(const std::string& a, const std::string& b);

// An output file OPTION names must not be one of the command's inputs: throws
// "OPTION PATH: is the same file as WHAT INPUT, which this command reads; ..."
// for the first of `inputs` (what reads it, e.g. "--config", and its path;
// empty paths skipped) that is the same file (same_file) as `path`; `why`
// replaces "which this command reads" for files protected for another
// reason. Not lifted by --overwrite. An output that does not exist yet is
// no input.
void refuse_output_is_input(const std::string& option, const std::string& path,
                            const std::vector<std::pair<std::string, std::string>>& inputs,
                            const std::string& why = "which this command reads");

// Parses `text` as a step count: base-10 digits only (no sign, no spaces),
// at most INT64_MAX. False, *out untouched, for anything else.
bool parse_step_count(const std::string& text, int64_t* out);

// A metrics.jsonl record's "step" (`step`, a JSON number) as a step count:
// an integral value from 0 to kMaxCount (10^12, the most --steps takes). Else
// throws naming `path` and `line`, then `hint`: a negative or fractional step,
// or one past 10^12 (a JSON integer past int64 would wrap if read as int64),
// is no step train logs. report and train --resume share the check.
int64_t metrics_step(const nlohmann::json& step, const std::string& path, size_t line,
                     const std::string& hint = "");

// The order of a metrics.jsonl's records: train logs each step once, in
// increasing order (a resume first drops the records after its checkpoint),
// so a step that repeats or goes back means records of two runs mixed or an
// edited file. Fed the records in file order, next() throws at such a one,
// naming `path`, its line and the earlier record's line, then `hint` (report
// and train --resume share the check and its wording).
class MetricsStepOrder {
 public:
  MetricsStepOrder(std::string path, std::string hint = "") : path_(std::move(path)), hint_(std::move(hint)) {}
  void next(int64_t step, size_t line);

 private:
  std::string path_, hint_;
  bool any_ = false;
  int64_t step_ = 0;
  size_t line_ = 0;
};

// The step_N.safetensors files in `dir` as (N, path), by N (names whose N is
// not a step count are not checkpoints of a run and are skipped).
std::vector<std::pair<int64_t, std::string>> step_checkpoints(const std::string& dir);

// The step_N.safetensors with the largest N in `dir` ("" when there is none).
std::string newest_step_checkpoint(const std::string& dir);

// --ckpt: a checkpoint file, or a run directory (RUN or RUN/checkpoints),
// whose newest checkpoint it names; errors name the option and the path.
std::string resolve_ckpt_arg(const std::string& arg);

// Checks a checkpoint's metadata "format" and "format_version" (this
// hymo-run's); errors name the file.
void check_checkpoint_format(const hymo::rt::SafetensorsFile& f);

// The resolved config a checkpoint carries in its metadata ("config", JSON);
// errors name the file.
nlohmann::json checkpoint_config(const hymo::rt::SafetensorsFile& f);

}  // namespace hymo_run
