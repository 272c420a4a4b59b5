#include "run_files.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "hymo/rt/checkpoint.h"
#include "hymo/rt/parse.h"
#include "hymo/rt/status.h"

#include "commands.h"
#include "compile_plan.h"

namespace hymo_run {

using hymo::rt::Error;

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_utf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

void refuse_existing_unless(const std::string& option, const std::string& path, bool overwrite) {
  std::error_code ec;
  if (!overwrite && std::filesystem::exists(path, ec))
    throw Error(option + " " + path + ": the file exists; name another file, or pass --overwrite to replace it");
}

std::string data_file_of(const std::string& data) {
  if (data != "default") return data;
  try {
    return default_data_path();
  } catch (const Error&) {
    return "";
  }
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (a.empty() || b.empty() || ::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void refuse_output_is_input(const std::string& option, const std::string& path,
                            const std::vector<std::pair<std::string, std::string>>& inputs,
                            const std::string& why) {
  for (const auto& [what, input] : inputs)
    if (same_file(path, input))
      throw Error(option + " " + path + ": is the same file as " + what + " " + input + ", " + why +
                  "; name another file (--overwrite never replaces it)");
}

bool parse_step_count(const std::string& text, int64_t* out) {
  // parse_integer alone would take a leading '-'; a step count has digits only.
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  return hymo::rt::parse_integer(text, out);
}

int64_t metrics_step(const nlohmann::json& step, const std::string& path, size_t line, const std::string& hint) {
  // Compared as a double: a JSON integer past int64 (nlohmann's unsigned, or
  // a float past uint64) is then past 10^12, not a wrapped negative.
  const double v = step.is_number() ? step.get<double>() : -1.0;
  if (!(v >= 0 && v <= double(kMaxCount) && v == std::floor(v)))
    throw Error(path + ":" + std::to_string(line) + ": step " + step.dump() +
                " is not a step count (an integer from 0 to 10^12)" + hint);
  return int64_t(v);
}

void MetricsStepOrder::next(int64_t step, size_t line) {
  if (any_ && !(step > step_))
    throw Error(path_ + ":" + std::to_string(line) + ": step " + std::to_string(step) +
                (step == step_ ? " repeats" : " comes after") + " step " + std::to_string(step_) + " of line " +
                std::to_string(line_) +
                " (train logs steps once each, in increasing order: records of two runs mixed, or an edited file?)" +
                hint_);
  any_ = true;
  step_ = step;
  line_ = line;
}

std::vector<std::pair<int64_t, std::string>> step_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      const std::string pre = "step_", suf = ".safetensors";
      if (n.size() <= pre.size() + suf.size() || n.compare(0, pre.size(), pre) != 0 ||
          n.compare(n.size() - suf.size(), suf.size(), suf) != 0)
        continue;
      const std::string mid = n.substr(pre.size(), n.size() - pre.size() - suf.size());
      int64_t step = 0;
      if (!parse_step_count(mid, &step)) continue;
      found.emplace_back(step, dir + "/" + n);
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string newest_step_checkpoint(const std::string& dir) {
  const auto found = step_checkpoints(dir);
  return found.empty() ? std::string() : found.back().second;
}

std::string resolve_ckpt_arg(const std::string& arg) {
  if (arg.empty()) throw Error("--ckpt: expected a checkpoint file or a run directory");
  if (is_file(arg)) return arg;
  if (!is_dir(arg)) throw Error("--ckpt " + arg + ": no such file or directory");
  const std::string cdir = is_dir(arg + "/checkpoints") ? arg + "/checkpoints" : arg;
  std::string path = newest_step_checkpoint(cdir);
  if (path.empty()) throw Error("--ckpt " + arg + ": a directory without step_N.safetensors checkpoints");
  return path;
}

void check_checkpoint_format(const hymo::rt::SafetensorsFile& f) {
  auto fmt = f.metadata().find("format");
  if (fmt == f.metadata().end() || fmt->second != hymo::rt::kCheckpointFormat)
    throw Error("checkpoint " + f.path() + ": not a hymo checkpoint (metadata format is not " +
                hymo::rt::kCheckpointFormat + ")");
  auto ver = f.metadata().find("format_version");
  const std::string have = ver == f.metadata().end() ? std::string("(absent)") : "'" + ver->second + "'";
  if (ver == f.metadata().end() || ver->second != hymo::rt::kCheckpointFormatVersion)
    throw Error("checkpoint " + f.path() + ": format_version " + have + ", this hymo-run reads version " +
                hymo::rt::kCheckpointFormatVersion + " (a checkpoint of another hymo version, or corrupt)");
}

nlohmann::json checkpoint_config(const hymo::rt::SafetensorsFile& f) {
  check_checkpoint_format(f);
  auto it = f.metadata().find("config");
  if (it == f.metadata().end()) throw Error("checkpoint " + f.path() + ": metadata holds no config");
  nlohmann::json c = nlohmann::json::parse(it->second, nullptr, false);
  if (c.is_discarded() || !c.is_object())
    throw Error("checkpoint " + f.path() + ": metadata config is not a JSON object (corrupt?)");
  return c;
}

}  // namespace hymo_run
