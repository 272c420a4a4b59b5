// hymo-run exec PLAN --function NAME: run one function of a plan on the CPU.
//   --input name=FILE   set a buffer from a .npy file (shape must match) or
//                       from a raw file of exactly the buffer's bytes
//   --value name=v,...  set a buffer from literal values
//   --print name        print a buffer after the run (default: the
//                       function's outputs)
//   --save name=FILE.npy  write a buffer after the run; never over the plan
//                       or an --input file; over an existing file that is
//                       not a .npy (NPY magic) only with --overwrite
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "commands.h"
#include "run_files.h"
#include "hymo/rt/api.h"

namespace hymo_run {
namespace {

using hymo::rt::Error;

struct ExecOptions {
  std::string plan;
  std::vector<std::string> functions;
  std::vector<std::string> inputs, values, prints, saves;
  int threads = 0;
  int repeat = 1;
  bool overwrite = false;  // --save may replace an existing file that is not a .npy
};

std::pair<std::string, std::string> split_assign(const std::string& s, const char* flag) {
  size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
    throw Error(std::string(flag) + ": expected name=VALUE, found '" + s + "'");
  return {s.substr(0, eq), s.substr(eq + 1)};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string format_values(const hymo::rt::HostTensor& t, size_t limit) {
  std::ostringstream os;
  const char* fmt = t.dtype == hymo::rt::DType::kF64 ? "%.17g" : t.dtype == hymo::rt::DType::kI32 ? "%.0f" : "%.9g";
  auto one = [&](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return std::string(buf);
  };
  if (t.shape.empty()) return one(t.values[0]);
  os << "[";
  for (size_t i = 0; i < t.values.size() && i < limit; ++i) os << (i ? ", " : "") << one(t.values[i]);
  if (t.values.size() > limit) os << ", ... (" << t.values.size() << " values)";
  os << "]";
  return os.str();
}

std::string type_text(const hymo::rt::HostTensor& t) {
  std::string s = hymo::rt::dtype_name(t.dtype);
  s += "[";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? "," : "") + std::to_string(t.shape[i]);
  return s + "]";
}

// Whether `path` starts with the NPY magic (\x93NUMPY).
bool holds_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[6] = {};
  return in.read(magic, 6) && std::string(magic, 6) == "\x93NUMPY";
}

// --save outputs, checked before anything runs: none is the plan or an
// --input file (even with --overwrite), nor another --save's file; an
// existing file that is not a .npy is replaced only with --overwrite.
void check_saves(const ExecOptions& o) {
  std::vector<std::pair<std::string, std::string>> inputs = {{"the plan", o.plan}};
  for (const std::string& in : o.inputs) {
    size_t eq = in.find('=');
    if (eq != std::string::npos) inputs.emplace_back("--input " + in.substr(0, eq), in.substr(eq + 1));
  }
  std::vector<std::string> seen;
  for (const std::string& s : o.saves) {
    auto [name, file] = split_assign(s, "--save");
    for (const auto& [what, input] : inputs)
      if (same_file(file, input))
        throw Error("--save " + name + "=" + file + ": is the same file as " + what + " " + input +
                    ", which this command reads; name another file (--overwrite never replaces it)");
    for (const std::string& other : seen)
      if (same_file(file, other) ||
          std::filesystem::path(file).lexically_normal() == std::filesystem::path(other).lexically_normal())
        throw Error("--save " + name + "=" + file + ": the same file as an earlier --save (" + other +
                    "); name one file per buffer");
    seen.push_back(file);
    struct stat st;
    if (!o.overwrite && ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && !holds_npy(file))
      throw Error("--save " + name + "=" + file +
                  ": the file exists and is not a .npy; name another file, or pass --overwrite to replace it");
  }
}

void run_exec(const ExecOptions& o) {
  check_saves(o);
  hymo::rt::Plan plan = hymo::rt::load_plan(o.plan);
  std::vector<int64_t> outputs;
  for (const std::string& name : o.functions) {
    const hymo::rt::Function* fn = plan.find_function(name);
    if (!fn) {
      std::string have;
      for (const auto& f : plan.functions) have += (have.empty() ? "" : ", ") + f.name;
      throw Error("--function: no function '" + name + "' in " + o.plan + " (have: " + have + ")");
    }
    outputs = fn->outputs;  // the last function's outputs are printed by default
  }
  hymo::rt::ExecutorOptions eo;
  eo.num_threads = o.threads;
  hymo::rt::CpuExecutor ex(std::move(plan), eo);

  for (const std::string& in : o.inputs) {
    auto [name, file] = split_assign(in, "--input");
    const hymo::rt::BufferDesc* b = ex.plan().find_buffer(name);
    if (!b) throw Error("--input: no buffer named '" + name + "' in the plan");
    if (ends_with(file, ".npy")) {
      hymo::rt::HostTensor t;
      hymo::rt::throw_if_error(hymo::rt::read_npy(file, &t));
      if (t.shape != b->shape)
        throw Error("--input " + name + ": " + file + " has shape " + type_text(t) + ", expected " +
                    hymo::rt::dtype_name(b->dtype) + " shape of buffer " + name);
      ex.set_values(name, t.values);
    } else {
      if (is_dir(file)) throw Error("--input " + name + ": '" + file + "' is a directory");
      std::ifstream f(file, std::ios::binary);
      if (!f) throw Error("--input " + name + ": cannot open '" + file + "'");
      // Read at most one byte past the buffer's size: a device (/dev/zero) or an endless pipe
      // would be read without end.
      const size_t want = size_t(b->bytes());
      std::vector<char> bytes(want + 1);
      f.read(bytes.data(), std::streamsize(bytes.size()));
      if (f.bad()) throw Error("--input " + name + ": read error in '" + file + "'");
      bytes.resize(size_t(f.gcount()));
      if (bytes.size() > want)
        throw Error("--input " + name + "=" + file + ": holds more than " + std::to_string(want) +
                    " bytes, the size of buffer " + name + " (" + hymo::rt::dtype_name(b->dtype) +
                    " " + std::to_string(b->numel()) + " values); a raw input holds exactly the buffer's bytes");
      ex.set_bytes(name, bytes.data(), bytes.size());
    }
  }
  for (const std::string& v : o.values) {
    auto [name, list] = split_assign(v, "--value");
    std::vector<double> vals;
    std::stringstream ss(list);
    std::string tok;
    while (std::getline(ss, tok, ',')) {
      try {
        size_t used = 0;
        vals.push_back(std::stod(tok, &used));
        if (used != tok.size()) throw std::invalid_argument(tok);
      } catch (const std::exception&) {
        throw Error("--value " + name + ": expected a number, found '" + tok + "'");
      }
    }
    ex.set_values(name, vals);
  }
  for (int r = 0; r < o.repeat; ++r)
    for (const std::string& name : o.functions) ex.run(name);

  std::vector<std::string> prints = o.prints;
  if (prints.empty())
    for (int64_t id : outputs) prints.push_back(ex.plan().buffers[size_t(id)].name);
  for (const std::string& name : prints) {
    hymo::rt::HostTensor t = ex.tensor(name);
    std::cout << name << " " << type_text(t) << " = " << format_values(t, 64) << "\n";
  }
  for (const std::string& s : o.saves) {
    auto [name, file] = split_assign(s, "--save");
    hymo::rt::throw_if_error(hymo::rt::write_npy(file, ex.tensor(name)));
  }
}

}  // namespace

void add_exec_command(CLI::App& app) {
  auto o = std::make_shared<ExecOptions>();
  auto* cmd = app.add_subcommand("exec", "run one function of a plan on the CPU and print buffers");
  cmd->add_option("plan", o->plan, "plan file (JSON)")->required();
  cmd->add_option("-f,--function", o->functions,
                  "function to run (e.g. micro_step); repeat to run several in order (micro_step, update)")
      ->required();
  cmd->add_option("--input", o->inputs, "name=FILE: set a buffer from FILE.npy or a raw file of its bytes");
  cmd->add_option("--value", o->values, "name=v1,v2,...: set a buffer from literal values");
  cmd->add_option("--print", o->prints, "buffer to print after the run (default: the function's outputs)");
  cmd->add_option("--save", o->saves, "name=FILE.npy: write a buffer after the run (never over the plan or an --input)");
  cmd->add_flag("--overwrite", o->overwrite, "let --save replace an existing file that is not a .npy");
  cmd->add_option("--threads", o->threads, "worker threads (default: HYMO_NUM_THREADS or all cores)")
      ->check(CLI::Range(1, hymo::rt::kMaxThreads));
  cmd->add_option("--repeat", o->repeat, "run the function this many times")->check(CLI::PositiveNumber);
  cmd->callback([o] { run_exec(*o); });
}

}  // namespace hymo_run
