// hymo-run report DIR: plots and a summary of a training run (docs/eval.md).
// Reads DIR/metrics.jsonl (docs/training.md) and writes DIR/report/:
//   loss.svg         train loss (raw and a moving mean), loss_main, eval loss
//   lr.svg           lr_muon and lr_adamw (log scale)
//   grad_norm.svg    the gradient norm before clipping
//   tokens_per_s.svg throughput
//   summary.txt      steps, first/last/min loss, eval, mean tokens/s, skips
// The SVG is written here (no plotting library, no Python).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "run_files.h"
#include "hymo/rt/safetensors.h"
#include "hymo/rt/status.h"

namespace hymo_run {
namespace {

using hymo::rt::Error;
using json = nlohmann::json;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Record {
  double step = kNaN, loss = kNaN, loss_main = kNaN, grad_norm = kNaN, lr_muon = kNaN, lr_adamw = kNaN;
  double tokens_per_s = kNaN, step_s = kNaN, eval_loss = kNaN, eval_ppl = kNaN;
  int64_t skipped = 0;
  bool is_update = true;
};

double field(const json& r, const char* k, size_t line, const std::string& path) {
  if (!r.contains(k) || r[k].is_null()) return kNaN;
  if (!r[k].is_number())
    throw Error(path + ":" + std::to_string(line) + ": field '" + k + "' is not a number: " + r[k].dump());
  return r[k].get<double>();
}

std::vector<Record> read_metrics(const std::string& dir) {
  if (!is_dir(dir)) throw Error("report: " + dir + ": no such directory");
  const std::string path = dir + "/metrics.jsonl";
  if (is_dir(path)) throw Error("report: " + path + " is a directory, not a metrics file");
  std::ifstream in(path);
  if (!in) throw Error("report: " + dir + " holds no metrics.jsonl (not a hymo-run train --out directory?)");
  std::vector<Record> out;
  std::string line;
  size_t n = 0;
  MetricsStepOrder order(path);
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json r = json::parse(line, nullptr, false);
    if (r.is_discarded() || !r.is_object())
      throw Error(path + ":" + std::to_string(n) + ": not a JSON object (corrupt line: " + line.substr(0, 60) +
                  (line.size() > 60 ? "..." : "") + ")");
    Record rec;
    rec.step = field(r, "step", n, path);
    if (!std::isfinite(rec.step)) throw Error(path + ":" + std::to_string(n) + ": a record without 'step'");
    // (steps out of order would draw lines that double back and a summary of
    // the wrong steps)
    order.next(metrics_step(r["step"], path, n), n);
    rec.loss = field(r, "loss", n, path);
    rec.loss_main = field(r, "loss_main", n, path);
    rec.grad_norm = field(r, "grad_norm", n, path);
    rec.lr_muon = field(r, "lr_muon", n, path);
    rec.lr_adamw = field(r, "lr_adamw", n, path);
    rec.tokens_per_s = field(r, "tokens_per_s", n, path);
    rec.step_s = field(r, "step_s", n, path);
    rec.eval_loss = field(r, "eval_loss", n, path);
    rec.eval_ppl = field(r, "eval_ppl", n, path);
    double sk = field(r, "skipped", n, path);
    if (!std::isnan(sk) && !(sk >= 0 && sk <= double(kMaxCount) && sk == std::floor(sk)))
      throw Error(path + ":" + std::to_string(n) +
                  ": field 'skipped' is not a count of micro-batches (an integer from 0 to 10^12): " +
                  r["skipped"].dump());
    rec.skipped = std::isnan(sk) ? 0 : int64_t(sk);
    if (r.contains("is_update") && !r["is_update"].is_null()) {
      if (!r["is_update"].is_boolean())
        throw Error(path + ":" + std::to_string(n) + ": field 'is_update' is not a boolean: " + r["is_update"].dump());
      rec.is_update = r["is_update"].get<bool>();
    }
    out.push_back(rec);
  }
  if (out.empty()) throw Error("report: " + path + " is empty (no steps logged yet)");
  return out;
}

// ---------------------------------------------------------------------------
// SVG line charts

struct Series {
  std::string label, color;
  std::vector<std::pair<double, double>> pts;  // NaN y breaks the line
  double width = 2;
  double opacity = 1;
  bool markers = false;
};

struct Chart {
  std::string title, xlabel, ylabel;
  bool logy = false;
  std::vector<Series> series;
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else o += c;
  }
  return o;
}

// "Nice" tick positions covering [lo, hi] (about `target` of them, at most
// kMaxTicks + 1). A (near-)constant range, one narrower than 1e-12 of its
// magnitude (a constant loss whose moving mean is 1 ULP off) or than 1e-300
// (denormals), is widened around its values first: a step below the spacing
// of doubles at lo would not advance, and a denormal one is not a number to
// divide by.
constexpr int kMaxTicks = 40;
std::vector<double> nice_ticks(double* lo, double* hi, int target) {
  const double mag = std::max(std::fabs(*lo), std::fabs(*hi));
  if (!(*hi - *lo >= std::max(mag * 1e-12, 1e-300))) {
    double d = mag > 0 ? std::max(mag * 0.1, 1e-300) : 1;
    *lo -= d;
    *hi += d;
  }
  double raw = (*hi - *lo) / target;
  double p = std::pow(10, std::floor(std::log10(raw)));
  double step = p;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  *lo = std::floor(*lo / step + 1e-9) * step;
  *hi = std::ceil(*hi / step - 1e-9) * step;
  if (!(*hi > *lo)) *hi = *lo + step;
  // ticks by index, not by adding up steps (a sum drifts, or stalls)
  const double n = std::min<double>(kMaxTicks, std::max(1.0, std::round((*hi - *lo) / step)));
  std::vector<double> t;
  for (int i = 0; i <= int(n); ++i) {
    double v = *lo + i * step;
    t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  }
  return t;
}

// The shortest label that tells v from its neighbours `step` away.
std::string tick_label(double v, double step) {
  double a = std::fabs(v);
  const bool sci = a != 0 && (a >= 1e6 || a < 1e-3);
  std::string s;
  for (int prec = sci ? 0 : 6; prec <= 17; ++prec) {
    char f[16];
    std::snprintf(f, sizeof f, sci ? "%%.%de" : "%%.%dg", prec);
    s = fmt(f, v);
    if (std::fabs(std::strtod(s.c_str(), nullptr) - v) <= step * 1e-3) break;
  }
  return s;
}

std::string render(const Chart& c) {
  const double W = 760, H = 420, L = 78, R = 24, T = 44, B = 56;
  const double pw = W - L - R, ph = H - T - B;
  // A point is drawn when its axis can place it: finite, positive on a log
  // axis, and within +-1e100 on a linear one (a diverged run's 1e300 would
  // overflow the axis span and put NaN coordinates into the file).
  auto drawable = [&](double y) { return std::isfinite(y) && (c.logy ? y > 0 : std::fabs(y) < 1e100); };
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const Series& s : c.series)
    for (auto [x, y] : s.pts) {
      if (!std::isfinite(x) || !drawable(y)) continue;
      xmin = std::min(xmin, x), xmax = std::max(xmax, x);
      double yy = c.logy ? std::log10(y) : y;
      ymin = std::min(ymin, yy), ymax = std::max(ymax, yy);
    }
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W
    << " " << H << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << W / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">"
    << esc(c.title) << "</text>\n";
  if (!std::isfinite(xmin)) {
    o << "<text x=\"" << W / 2 << "\" y=\"" << H / 2 << "\" text-anchor=\"middle\" fill=\"#888\">no data</text>\n</svg>\n";
    return o.str();
  }
  std::vector<double> xt = nice_ticks(&xmin, &xmax, 8);
  std::vector<double> yt;
  double ydec = 1;  // log axis: decades between ticks (1; past 12 decades 2, 5, 10, ...)
  if (c.logy) {
    ymin = std::floor(ymin), ymax = std::ceil(ymax);
    if (ymax <= ymin) ymax = ymin + 1;
    for (double m = 1; (ymax - ymin) / ydec > 12; m *= 10)
      for (double k : {1.0, 2.0, 5.0, 10.0})
        if ((ymax - ymin) / (ydec = k * m) <= 8) break;
    ymin = std::floor(ymin / ydec) * ydec, ymax = std::ceil(ymax / ydec) * ydec;
    for (double e = ymin; e <= ymax + 1e-9; e += ydec) yt.push_back(e);
  } else {
    double pad = (ymax - ymin) * 0.04;
    ymin -= pad, ymax += pad;
    yt = nice_ticks(&ymin, &ymax, 6);
  }
  auto X = [&](double x) { return L + (x - xmin) / (xmax - xmin) * pw; };
  auto Y = [&](double y) {
    double v = c.logy ? std::log10(y) : y;
    return T + ph - (v - ymin) / (ymax - ymin) * ph;
  };
  auto Yraw = [&](double v) { return T + ph - (v - ymin) / (ymax - ymin) * ph; };
  // grid and ticks
  o << "<g stroke=\"#e3e3e3\" stroke-width=\"1\">\n";
  for (double v : xt) o << "<line x1=\"" << fmt("%.1f", X(v)) << "\" y1=\"" << T << "\" x2=\"" << fmt("%.1f", X(v))
                        << "\" y2=\"" << T + ph << "\"/>\n";
  for (double v : yt) o << "<line x1=\"" << L << "\" y1=\"" << fmt("%.1f", Yraw(v)) << "\" x2=\"" << L + pw
                        << "\" y2=\"" << fmt("%.1f", Yraw(v)) << "\"/>\n";
  if (c.logy && ydec == 1)  // minor grid at 2..9 x 10^e
    for (double e = ymin; e < ymax; e += 1)
      for (int m = 2; m <= 9; ++m) {
        double yy = Yraw(e + std::log10(m));
        o << "<line x1=\"" << L << "\" y1=\"" << fmt("%.1f", yy) << "\" x2=\"" << L + pw << "\" y2=\""
          << fmt("%.1f", yy) << "\" stroke=\"#f3f3f3\"/>\n";
      }
  o << "</g>\n";
  o << "<rect x=\"" << L << "\" y=\"" << T << "\" width=\"" << pw << "\" height=\"" << ph
    << "\" fill=\"none\" stroke=\"#444\" stroke-width=\"1\"/>\n";
  o << "<g fill=\"#333\">\n";
  for (double v : xt) {
    o << "<line x1=\"" << fmt("%.1f", X(v)) << "\" y1=\"" << T + ph << "\" x2=\"" << fmt("%.1f", X(v)) << "\" y2=\""
      << T + ph + 5 << "\" stroke=\"#444\"/>\n";
    o << "<text x=\"" << fmt("%.1f", X(v)) << "\" y=\"" << T + ph + 19 << "\" text-anchor=\"middle\">"
      << tick_label(v, xt[1] - xt[0]) << "</text>\n";
  }
  for (double v : yt) {
    o << "<line x1=\"" << L - 5 << "\" y1=\"" << fmt("%.1f", Yraw(v)) << "\" x2=\"" << L << "\" y2=\""
      << fmt("%.1f", Yraw(v)) << "\" stroke=\"#444\"/>\n";
    std::string lab = c.logy ? fmt("1e%.0f", v) : tick_label(v, yt[1] - yt[0]);
    o << "<text x=\"" << L - 8 << "\" y=\"" << fmt("%.1f", Yraw(v) + 4) << "\" text-anchor=\"end\">" << lab
      << "</text>\n";
  }
  o << "<text x=\"" << L + pw / 2 << "\" y=\"" << H - 14 << "\" text-anchor=\"middle\">" << esc(c.xlabel)
    << "</text>\n";
  o << "<text transform=\"translate(18," << T + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\">" << esc(c.ylabel)
    << "</text>\n</g>\n";
  // data, clipped to the plot area
  o << "<defs><clipPath id=\"plot\"><rect x=\"" << L << "\" y=\"" << T << "\" width=\"" << pw << "\" height=\"" << ph
    << "\"/></clipPath></defs>\n<g clip-path=\"url(#plot)\" fill=\"none\" stroke-linejoin=\"round\">\n";
  for (const Series& s : c.series) {
    std::string cur;
    auto flush = [&] {
      if (!cur.empty())
        o << "<polyline stroke=\"" << s.color << "\" stroke-width=\"" << s.width << "\" stroke-opacity=\""
          << s.opacity << "\" points=\"" << cur << "\"/>\n";
      cur.clear();
    };
    // (the axes hold every drawable point; the check on the coordinates keeps
    // a NaN or inf out of the file whatever goes wrong there)
    auto placed = [&](double x, double y) {
      return drawable(y) && std::isfinite(X(x)) && std::isfinite(Y(y));
    };
    for (auto [x, y] : s.pts) {
      if (!placed(x, y)) {
        flush();
        continue;
      }
      cur += fmt("%.1f", X(x)) + "," + fmt("%.1f", Y(y)) + " ";
    }
    flush();
    if (s.markers)
      for (auto [x, y] : s.pts)
        if (placed(x, y))
          o << "<circle cx=\"" << fmt("%.1f", X(x)) << "\" cy=\"" << fmt("%.1f", Y(y)) << "\" r=\"3.2\" fill=\""
            << s.color << "\" stroke=\"white\" stroke-width=\"1\"/>\n";
  }
  o << "</g>\n";
  // legend (top right)
  double lw = 0;
  for (const Series& s : c.series) lw = std::max(lw, 7.0 * double(s.label.size()));
  lw += 44;
  const double lx = L + pw - lw - 8, ly = T + 8, lh = 18.0 * double(c.series.size()) + 8;
  o << "<g>\n<rect x=\"" << lx << "\" y=\"" << ly << "\" width=\"" << lw << "\" height=\"" << lh
    << "\" fill=\"white\" fill-opacity=\"0.9\" stroke=\"#bbb\"/>\n";
  for (size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    double yy = ly + 15 + 18.0 * double(i);
    o << "<line x1=\"" << lx + 8 << "\" y1=\"" << yy - 4 << "\" x2=\"" << lx + 30 << "\" y2=\"" << yy - 4
      << "\" stroke=\"" << s.color << "\" stroke-width=\"" << std::max(2.0, s.width) << "\" stroke-opacity=\""
      << std::max(0.6, s.opacity) << "\"/>\n";
    if (s.markers)
      o << "<circle cx=\"" << lx + 19 << "\" cy=\"" << yy - 4 << "\" r=\"3.2\" fill=\"" << s.color << "\"/>\n";
    o << "<text x=\"" << lx + 36 << "\" y=\"" << yy << "\" fill=\"#222\">" << esc(s.label) << "</text>\n";
  }
  o << "</g>\n</svg>\n";
  return o.str();
}

// Mean of the finite values in a trailing window of `w` records.
std::vector<std::pair<double, double>> moving_mean(const std::vector<Record>& rs, double Record::*f, size_t w) {
  std::vector<std::pair<double, double>> out;
  for (size_t i = 0; i < rs.size(); ++i) {
    double s = 0;
    int n = 0;
    for (size_t j = i + 1 > w ? i + 1 - w : 0; j <= i; ++j)
      if (std::isfinite(rs[j].*f)) s += rs[j].*f, ++n;
    out.push_back({rs[i].step, n ? s / n : kNaN});
  }
  return out;
}
std::vector<std::pair<double, double>> column(const std::vector<Record>& rs, double Record::*f, bool only_finite) {
  std::vector<std::pair<double, double>> out;
  for (const Record& r : rs)
    if (!only_finite || std::isfinite(r.*f)) out.push_back({r.step, r.*f});
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  hymo::rt::throw_if_error(hymo::rt::atomic_write_file(
      path, [&](hymo::rt::FileSink& s) { return s.write(text.data(), text.size()); }));
}

void run_report(const std::string& dir_arg) {
  std::string dir = dir_arg;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::vector<Record> rs = read_metrics(dir);
  const std::string out = dir + "/report";
  if (::mkdir(out.c_str(), 0755) != 0 && errno != EEXIST)
    throw Error("report: cannot create " + out + ": " + std::strerror(errno));
  const size_t w = std::max<size_t>(1, std::min<size_t>(20, rs.size() / 15 + 1));
  const std::string ww = std::to_string(w);
  bool has_eval = false;
  for (const Record& r : rs) has_eval |= std::isfinite(r.eval_loss);

  Chart loss{"Loss", "step", "cross-entropy (nats)", false, {}};
  loss.series.push_back({"train loss (raw)", "#1f77b4", column(rs, &Record::loss, false), 1, 0.3, false});
  loss.series.push_back({"train loss (mean of " + ww + ")", "#1f77b4", moving_mean(rs, &Record::loss, w), 2.2, 1, false});
  loss.series.push_back(
      {"train loss_main (mean of " + ww + ")", "#2ca02c", moving_mean(rs, &Record::loss_main, w), 2.2, 1, false});
  if (has_eval) loss.series.push_back({"eval loss_main", "#d62728", column(rs, &Record::eval_loss, true), 2.2, 1, true});
  write_file(out + "/loss.svg", render(loss));

  Chart lr{"Learning rate", "step", "learning rate (log scale)", true, {}};
  lr.series.push_back({"lr_muon (NorMuon)", "#9467bd", column(rs, &Record::lr_muon, false), 2.2, 1, false});
  lr.series.push_back({"lr_adamw (AdamW)", "#ff7f0e", column(rs, &Record::lr_adamw, false), 2.2, 1, false});
  write_file(out + "/lr.svg", render(lr));

  Chart gn{"Gradient norm (before clipping)", "step", "global L2 norm", false, {}};
  gn.series.push_back({"grad_norm", "#8c564b", column(rs, &Record::grad_norm, false), 1, 0.35, false});
  gn.series.push_back({"grad_norm (mean of " + ww + ")", "#8c564b", moving_mean(rs, &Record::grad_norm, w), 2.2, 1, false});
  write_file(out + "/grad_norm.svg", render(gn));

  Chart tp{"Throughput", "step", "tokens / s", false, {}};
  tp.series.push_back({"tokens_per_s", "#17becf", column(rs, &Record::tokens_per_s, false), 1, 0.4, false});
  tp.series.push_back(
      {"tokens_per_s (mean of " + ww + ")", "#0e6f7a", moving_mean(rs, &Record::tokens_per_s, w), 2.2, 1, false});
  write_file(out + "/tokens_per_s.svg", render(tp));

  // summary
  auto first_finite = [&](double Record::*f) {
    for (const Record& r : rs)
      if (std::isfinite(r.*f)) return std::make_pair(r.step, r.*f);
    return std::make_pair(kNaN, kNaN);
  };
  auto last_finite = [&](double Record::*f) {
    for (size_t i = rs.size(); i-- > 0;)
      if (std::isfinite(rs[i].*f)) return std::make_pair(rs[i].step, rs[i].*f);
    return std::make_pair(kNaN, kNaN);
  };
  auto min_finite = [&](double Record::*f) {
    std::pair<double, double> m{kNaN, kNaN};
    for (const Record& r : rs)
      if (std::isfinite(r.*f) && !(m.second <= r.*f)) m = {r.step, r.*f};
    return m;
  };
  auto mean = [&](double Record::*f, size_t from) {  // NaN when no record has a value
    double m = kNaN;
    int n = 0;
    for (size_t i = from; i < rs.size(); ++i)
      if (std::isfinite(rs[i].*f)) m = n++ ? m + (rs[i].*f - m) / n : rs[i].*f;  // (a sum could overflow)
    return m;
  };
  int64_t skipped = 0, no_update = 0;
  double wall = 0;
  bool any_step_s = false;
  for (const Record& r : rs) {
    skipped += r.skipped;
    no_update += !r.is_update;
    if (std::isfinite(r.step_s)) wall += r.step_s, any_step_s = true;
  }
  const size_t tail = rs.size() > 10 ? rs.size() - 10 : 0;
  std::ostringstream s;
  // A quantity no record holds a finite value of (every step skipped, or a
  // field never logged) reads "- (no values)", never "nan".
  const std::string none = "- (no values)";
  auto at = [&](std::pair<double, double> p, const char* f) {
    return std::isfinite(p.second) ? fmt(f, p.second) + " (step " + fmt("%.0f", p.first) + ")" : none;
  };
  auto val = [&](double v, const char* f) { return std::isnan(v) ? none : fmt(f, v); };
  s << "run:               " << dir << "\n";
  s << "steps:             " << rs.size() << " records, steps " << fmt("%.0f", rs.front().step) << ".."
    << fmt("%.0f", rs.back().step) << "\n";
  s << "loss first:        " << at(first_finite(&Record::loss), "%.4f") << "\n";
  s << "loss last:         " << at(last_finite(&Record::loss), "%.4f") << "\n";
  s << "loss min:          " << at(min_finite(&Record::loss), "%.4f") << "\n";
  s << "loss last 10 mean: " << val(mean(&Record::loss, tail), "%.4f") << "\n";
  s << "loss_main first:   " << at(first_finite(&Record::loss_main), "%.4f") << "\n";
  s << "loss_main last:    " << at(last_finite(&Record::loss_main), "%.4f") << "\n";
  s << "loss_main min:     " << at(min_finite(&Record::loss_main), "%.4f") << "\n";
  if (has_eval) {
    auto lastev = last_finite(&Record::eval_loss);
    s << "eval loss first:   " << at(first_finite(&Record::eval_loss), "%.4f") << "\n";
    s << "eval loss last:    " << at(lastev, "%.4f") << ", perplexity " << val(std::exp(lastev.second), "%.3f")
      << "\n";
    s << "eval loss min:     " << at(min_finite(&Record::eval_loss), "%.4f") << "\n";
  } else {
    s << "eval:              none (train --eval-data PATH --eval-interval N logs it)\n";
  }
  s << "grad_norm last:    " << at(last_finite(&Record::grad_norm), "%.4g") << "\n";
  s << "lr_muon last:      " << at(last_finite(&Record::lr_muon), "%.4g") << "\n";
  s << "lr_adamw last:     " << at(last_finite(&Record::lr_adamw), "%.4g") << "\n";
  s << "tokens/s mean:     " << val(mean(&Record::tokens_per_s, 0), "%.0f") << "\n";
  s << "wall time (steps): " << (any_step_s ? val(wall, "%.1f") + " s" : none) << "\n";
  s << "skipped micro-batches: " << skipped << " (steps without an update: " << no_update << ")\n";
  s << "plots: loss.svg lr.svg grad_norm.svg tokens_per_s.svg\n";
  write_file(out + "/summary.txt", s.str());
  std::fputs(s.str().c_str(), stdout);
  std::fprintf(stderr, "hymo-run report: wrote %s/{loss,lr,grad_norm,tokens_per_s}.svg and summary.txt\n",
               out.c_str());
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "report", "plots (SVG) and a text summary of a run's metrics.jsonl into DIR/report/ (docs/eval.md)");
  cmd->add_option("dir", *dir, "run directory (train --out DIR, holding metrics.jsonl)")->required();
  cmd->callback([dir] { run_report(*dir); });
}

}  // namespace hymo_run
