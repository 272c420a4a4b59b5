// hymo-opt as a subprocess (compile_plan.h).
#include "compile_plan.h"
#include "run_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "hymo/rt/api.h"
#include "hymo/rt/status.h"

namespace hymo_run {
namespace {

using hymo::rt::Error;

bool is_executable(const std::string& p) {
  struct stat st;
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

#ifdef HYMO_OPT_PATH
constexpr bool kCompilerBuilt = true;
const char* const kBakedHymoOpt = HYMO_OPT_PATH;
#else
constexpr bool kCompilerBuilt = false;
const char* const kBakedHymoOpt = "";
#endif

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

std::string self_dir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string p(buf);
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

bool compiler_available() {
  const char* env = std::getenv("HYMO_OPT");
  return kCompilerBuilt || (env && *env);
}

std::string find_hymo_opt() {
  if (const char* env = std::getenv("HYMO_OPT"); env && *env) {
    if (!is_executable(env)) throw Error("$HYMO_OPT is '" + std::string(env) + "', which is not an executable file");
    return env;
  }
  if (!kCompilerBuilt)
    throw Error(
        "the compiler (hymo-opt) is not built in this build (CMake HYMO_COMPILER is off: MLIR 22 was not found or "
        "HYMO_ENABLE_COMPILER=OFF); compile the plan where it is built (hymo-run compile --config CFG -o PLAN) and "
        "pass --plan PLAN, or point $HYMO_OPT at a hymo-opt");
  if (is_executable(kBakedHymoOpt)) return kBakedHymoOpt;
  std::string dir = self_dir();
  for (const std::string& c : {dir + "/hymo-opt", dir + "/../bin/hymo-opt", dir + "/../../bin/hymo-opt"})
    if (is_executable(c)) return c;
  throw Error(std::string("hymo-opt was not found (looked at ") + kBakedHymoOpt + " and next to " + dir +
              "): build it (ninja hymo-opt) or set $HYMO_OPT");
}

void check_set_syntax(const std::string& set) {
  size_t eq = set.find('=');
  size_t dot = set.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot == 0 || dot > eq || dot + 1 == eq)
    throw Error("--set '" + set + "': expected section.key=value (e.g. --set model.dim=32)");
}

void compile_plan(const CompileRequest& req) {
  const std::string opt = find_hymo_opt();
  if (is_dir(req.config)) throw Error("--config " + req.config + ": is a directory, not a config file");
  if (!is_file(req.config)) throw Error("--config " + req.config + ": no such file");
  struct stat st;
  if (::lstat(req.output.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error("plan output " + req.output + ": exists and is not a regular file (" +
                (S_ISDIR(st.st_mode) ? "a directory" : S_ISLNK(st.st_mode) ? "a symbolic link" : "a special file") +
                "); plans are written to a temporary file renamed over the output: name a regular file");
  const std::string dir = req.output.find('/') == std::string::npos ? "." : req.output.substr(0, req.output.rfind('/') + 1);
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error("plan output " + req.output + ": cannot write in " + dir + ": " + std::strerror(errno));
  // hymo-opt's emit-plan also writes under a temporary name and renames (PlanEmitter.h), but
  // $HYMO_OPT may name another hymo-opt; this name, renamed only after hymo-opt succeeded,
  // keeps an existing plan whole whichever one runs.
  std::string tmp = req.output + ".tmp." + std::to_string(::getpid());
  std::vector<std::string> args = {opt, "--hymo-model=" + req.config};
  for (const std::string& s : req.sets) {
    check_set_syntax(s);
    args.push_back("--hymo-set=" + s);
  }
  if (!req.precision.empty()) args.push_back("--hymo-set=training.precision=" + req.precision);
  if (req.pipeline.empty()) {
    args.push_back("--hymo-autodiff");
    args.push_back("--hymo-train-step");
    args.push_back("--hymo-fuse-elementwise");
  } else {
    args.insert(args.end(), req.pipeline.begin(), req.pipeline.end());
  }
  args.push_back("--hymo-lower-to-rt");  // the plan as IR, then written field for field
  args.push_back("--hymo-emit-plan=output={" + tmp + "}");
  args.push_back("-o");
  args.push_back("/dev/null");

  int err_pipe[2];
  if (::pipe(err_pipe) != 0) throw Error(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(err_pipe[0]);
    ::dup2(err_pipe[1], 2);
    int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, 1);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(opt.c_str(), argv.data());
    std::fprintf(stderr, "cannot run %s: %s\n", opt.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::close(err_pipe[1]);
  // hymo-opt's messages: whole up to kWhole bytes, past that the first kHead and the last kTail
  // (a failing pass may print the whole module after its message, hundreds of MB for a large
  // config: none of it is held beyond those bytes).
  constexpr size_t kWhole = 6000, kHead = 4000, kTail = 1000;
  std::string err, tail;
  size_t total = 0;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(err_pipe[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    total += size_t(n);
    size_t whole = std::min(size_t(n), kWhole - std::min(kWhole, err.size()));
    err.append(buf, whole);
    tail.append(buf + whole, size_t(n) - whole);
    if (tail.size() > 4 * kTail) tail.erase(0, tail.size() - kTail);
  }
  ::close(err_pipe[0]);
  if (total > kWhole) {
    std::string rest = err.substr(kHead) + tail;
    err = err.substr(0, kHead) + "\n... (" + std::to_string(total - kHead - kTail) +
          " bytes of hymo-opt's output left out) ...\n" + rest.substr(rest.size() - kTail);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok || !is_file(tmp)) {
    ::unlink(tmp.c_str());
    std::string why = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                        : "killed by signal " + std::to_string(WTERMSIG(status));
    err = trim(err);
    // A temporary config is named by what it holds.
    const std::string& name = req.config_name.empty() ? req.config : req.config_name;
    for (size_t at; !req.config_name.empty() && (at = err.find(req.config)) != std::string::npos;)
      err.replace(at, req.config.size(), name);
    throw Error("compiling " + name + " failed (" + opt + ", " + why + ")" + (err.empty() ? "" : ":\n" + err));
  }
  if (::rename(tmp.c_str(), req.output.c_str()) != 0) {
    std::string e = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw Error("cannot write plan " + req.output + ": " + e);
  }
}

std::string default_data_path() {
  std::string dir = self_dir();
  std::vector<std::string> candidates;
#ifdef HYMO_SOURCE_DIR
  candidates.push_back(std::string(HYMO_SOURCE_DIR) + "/data/default.txt");
#endif
  candidates.push_back(dir + "/../../data/default.txt");
  candidates.push_back(dir + "/../share/hymo/data/default.txt");
  candidates.push_back("data/default.txt");
  for (const std::string& c : candidates)
    if (is_file(c)) return c;
  std::string looked;
  for (const std::string& c : candidates) looked += (looked.empty() ? "" : ", ") + c;
  throw Error("--data default: the built-in dataset data/default.txt was not found (looked at " + looked +
              "); run scripts/make-default-data.sh or pass --data PATH");
}

hymo::rt::Plan compile_config_json(const std::string& config_json, const std::vector<std::string>& pipeline,
                                   const std::string& what) {
  std::string tmpl = "/tmp/hymo-" + what + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char* tmp_dir = ::mkdtemp(buf.data());
  if (!tmp_dir) throw hymo::rt::Error("cannot create a temporary directory under /tmp");
  const std::string tmp = tmp_dir, cfg = tmp + "/config.json", out = tmp + "/plan.json";
  auto cleanup = [&] {
    ::unlink(cfg.c_str());
    ::unlink(out.c_str());
    ::rmdir(tmp.c_str());
  };
  hymo::rt::Plan plan;
  try {
    if (FILE* f = std::fopen(cfg.c_str(), "wb")) {
      std::fwrite(config_json.data(), 1, config_json.size(), f);
      std::fclose(f);
    } else {
      throw hymo::rt::Error("cannot write " + cfg);
    }
    CompileRequest req{cfg, {}, "", out};
    req.pipeline = pipeline;
    req.config_name = "the checkpoint's config";
    compile_plan(req);
    hymo::rt::throw_if_error(hymo::rt::load_plan_status(out, &plan));
  } catch (...) {
    cleanup();
    throw;
  }
  cleanup();
  return plan;
}

}  // namespace hymo_run
