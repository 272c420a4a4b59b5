// hymo-gradcheck: checks a plan's analytic gradients against central finite
// differences.
//
//   hymo-gradcheck PLAN [--samples K] [--step H] [--tol T] [--seed S]
//                       [--int-max NAME=N]... [--forward F] [--grad G]
//
// The plan needs a forward function (default `forward`) whose output
// `F:loss` is a scalar, and its differentiated twin (default `F_grad`, from
// hymo-autodiff) with outputs `G:loss` and `G:grad.<param>`. Parameters keep
// their plan init; i32 inputs are filled uniformly in [0, N) (--int-max,
// default 2), float inputs uniformly in [-1, 1). For each parameter the
// forward reads, the tool perturbs K sampled elements (always including the
// largest analytic gradient) and takes Richardson-extrapolated central
// differences, (4 D(H/2) - D(H)) / 3 with D(h) = (f(x+h) - f(x-h)) / 2h,
// whose error is O(H^4); it reports per tensor
//   err = ||fd - analytic|| / max(||fd||, ||analytic||, 1e-300)
// over the sampled elements. Exit status 1 when any err exceeds --tol.
// Use FP64 plans: FP32 finite differences cannot reach 1e-6.
#include "hymo/rt/api.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace hymo::rt;

namespace {

[[noreturn]] void usage(const std::string &why) {
  std::fprintf(stderr, "hymo-gradcheck: error: %s\n", why.c_str());
  std::fprintf(stderr,
               "usage: hymo-gradcheck PLAN [--samples K] [--step H] [--tol T] [--seed S]\n"
               "                           [--int-max NAME=N]... [--forward F] [--grad G]\n");
  std::exit(2);
}

double norm(const std::vector<double> &v) {
  double s = 0;
  for (double x : v)
    s += x * x;
  return std::sqrt(s);
}

} // namespace

int main(int argc, char **argv) {
  std::string planPath, forward = "forward", grad;
  int samples = 6;
  double step = 1e-4, tol = 1e-6;
  unsigned seed = 1;
  std::map<std::string, int64_t> intMax;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc)
        usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--samples")
      samples = std::atoi(next().c_str());
    else if (a == "--step")
      step = std::atof(next().c_str());
    else if (a == "--tol")
      tol = std::atof(next().c_str());
    else if (a == "--seed")
      seed = static_cast<unsigned>(std::atoi(next().c_str()));
    else if (a == "--forward")
      forward = next();
    else if (a == "--grad")
      grad = next();
    else if (a == "--int-max") {
      std::string kv = next();
      size_t eq = kv.find('=');
      if (eq == std::string::npos)
        usage("--int-max expects NAME=N, got '" + kv + "'");
      intMax[kv.substr(0, eq)] = std::atoll(kv.c_str() + eq + 1);
    } else if (!a.empty() && a[0] == '-')
      usage("unknown option " + a);
    else if (planPath.empty())
      planPath = a;
    else
      usage("more than one plan given");
  }
  if (planPath.empty())
    usage("no plan given");
  if (grad.empty())
    grad = forward + "_grad";
  if (samples < 1 || !(step > 0) || !(tol > 0))
    usage("--samples, --step and --tol must be positive");

  try {
    Plan plan = load_plan(planPath);
    if (!plan.find_function(forward) || !plan.find_function(grad))
      usage("the plan needs functions '" + forward + "' and '" + grad + "'");
    CpuExecutor ex(std::move(plan));
    std::mt19937_64 rng(seed);

    // Inputs: random but fixed for the whole check.
    for (const BufferDesc &b : ex.plan().buffers) {
      if (b.storage != StorageKind::kInput)
        continue;
      std::vector<double> v(static_cast<size_t>(b.numel()));
      if (b.dtype == DType::kI32) {
        int64_t n = intMax.count(b.name) ? intMax[b.name] : 2;
        std::uniform_int_distribution<int64_t> d(0, n - 1);
        for (double &x : v)
          x = double(d(rng));
      } else {
        std::uniform_real_distribution<double> d(-1, 1);
        for (double &x : v)
          x = d(rng);
      }
      ex.set_values(b.name, v);
    }

    ex.run(grad);
    double loss = ex.values(grad + ":loss").at(0);
    double loss2 = (ex.run(forward), ex.values(forward + ":loss").at(0));
    std::printf("loss %.17g (%s) %.17g (%s)\n", loss, grad.c_str(), loss2, forward.c_str());
    if (std::fabs(loss - loss2) > 1e-12 * std::max(1.0, std::fabs(loss))) {
      std::printf("FAIL: the forward and the grad function disagree on the loss\n");
      return 1;
    }

    // The parameters the forward reads (a plan may hold other functions').
    std::vector<bool> read(ex.plan().buffers.size(), false);
    for (const Call &c : ex.plan().find_function(forward)->calls)
      for (int64_t id : c.operands)
        read[static_cast<size_t>(id)] = true;

    auto lossAt = [&](std::vector<double> &values, const std::string &name, size_t k,
                      double x) {
      values[k] = x;
      ex.set_values(name, values);
      ex.run(forward);
      return ex.values(forward + ":loss").at(0);
    };

    int failures = 0, checked = 0;
    for (const ParamEntry &p : ex.plan().params) {
      const BufferDesc &b = ex.plan().buffers[p.buffer];
      if (b.storage != StorageKind::kParam || !read[static_cast<size_t>(p.buffer)])
        continue;
      std::string gname = grad + ":grad." + p.name;
      if (!ex.plan().find_buffer(gname)) {
        std::printf("FAIL %-40s no gradient output %s\n", p.name.c_str(), gname.c_str());
        ++failures;
        continue;
      }
      ex.run(grad);
      std::vector<double> analytic = ex.values(gname);
      std::vector<double> values = ex.values(p.name);
      // Sample: the largest |grad| plus random elements.
      std::vector<size_t> idx;
      size_t argmax = 0;
      for (size_t i = 1; i < analytic.size(); ++i)
        if (std::fabs(analytic[i]) > std::fabs(analytic[argmax]))
          argmax = i;
      idx.push_back(argmax);
      std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
      while (static_cast<int>(idx.size()) < std::min<int>(samples, int(values.size()))) {
        size_t k = pick(rng);
        if (std::find(idx.begin(), idx.end(), k) == idx.end())
          idx.push_back(k);
      }
      std::vector<double> fd, an;
      for (size_t k : idx) {
        double x = values[k];
        auto central = [&](double h) {
          return (lossAt(values, p.name, k, x + h) - lossAt(values, p.name, k, x - h)) / (2 * h);
        };
        double d1 = central(step), d2 = central(step / 2);
        values[k] = x;
        fd.push_back((4 * d2 - d1) / 3);
        an.push_back(analytic[k]);
      }
      ex.set_values(p.name, values);
      std::vector<double> diff(fd.size());
      for (size_t i = 0; i < fd.size(); ++i)
        diff[i] = fd[i] - an[i];
      double err = norm(diff) / std::max({norm(fd), norm(an), 1e-300});
      bool ok = err < tol && std::isfinite(err);
      ++checked;
      failures += !ok;
      std::printf("%s %-44s err %.3e  |g| %.3e  (%zu samples)\n", ok ? "ok  " : "FAIL",
                  p.name.c_str(), err, norm(an), idx.size());
    }
    std::printf("%d of %d parameter tensors within %.1e\n", checked - failures, checked, tol);
    return failures ? 1 : 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "hymo-gradcheck: error: %s\n", e.what());
    return 2;
  }
}
