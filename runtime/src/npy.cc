// Minimal .npy reader/writer (format versions 1.0, 2.0 and 3.0, C order,
// little endian). The reader treats every file as untrusted: each header
// field is checked and the data size is matched against the shape before
// anything is allocated, and every failure is a Status naming the file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

#include "cpu/bf16.h"
#include "hymo/rt/api.h"
#include "plan_internal.h"

namespace hymo::rt {
namespace {

// No real tensor comes near this; a header claiming more is corrupt or
// hostile, and refusing it keeps the element count and byte size far from
// int64 overflow (8-byte elements: at most 2^43 bytes).
constexpr int64_t kMaxElements = int64_t(1) << 40;
// numpy's own headers are a few hundred bytes (np.load refuses more than
// 10000 by default); the cap keeps a 4-byte v2/v3 length from allocating GiBs.
constexpr uint32_t kMaxHeaderBytes = 1u << 20;

// Closes the descriptor on every return path.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads until `n` bytes arrived or the file ended; returns the count read,
// or -1 with errno set. Short only at end of file (pipes deliver in pieces).
int64_t read_full(int fd, char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, buf + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) break;
    got += size_t(r);
  }
  return int64_t(got);
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

// Finds `'key': value` in the header dict and stores the raw value text: a
// quoted string with its quotes, a tuple with its parentheses, or a bare
// word (True/False). Returns "" on success, else what is wrong.
std::string header_value(const std::string& h, const std::string& key, std::string* out) {
  size_t p = h.find("'" + key + "'");
  if (p == std::string::npos) return "header lacks the '" + key + "' key";
  p = h.find_first_not_of(" ", p + key.size() + 2);
  if (p == std::string::npos || h[p] != ':') return "header key '" + key + "' is not followed by ':'";
  p = h.find_first_not_of(" ", p + 1);
  if (p == std::string::npos || h[p] == ',' || h[p] == '}') return "header key '" + key + "' has no value";
  size_t e = p;
  if (h[p] == '(') {
    e = h.find(')', p);
    if (e == std::string::npos) return "malformed header: the '" + key + "' tuple is not closed by ')'";
    ++e;
  } else if (h[p] == '\'') {
    e = h.find('\'', p + 1);
    if (e == std::string::npos) return "malformed header: the '" + key + "' string is not closed by a quote";
    ++e;
  } else {
    while (e < h.size() && h[e] != ',' && h[e] != '}') ++e;
  }
  *out = trim(h.substr(p, e - p));
  return "";
}

// Parses a shape tuple such as "()", "(6,)" or "(2, 3)" into `shape`, with
// the element count in `numel`. Returns "" on success, else what is wrong.
std::string parse_shape(const std::string& text, std::vector<int64_t>* shape, int64_t* numel) {
  const std::string bad = "malformed shape " + text + " (expected a tuple of non-negative integers such as (2, 3))";
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return bad;
  const std::string inner = text.substr(1, text.size() - 2);
  std::vector<std::string> toks;
  size_t a = 0;
  for (;;) {
    size_t c = inner.find(',', a);
    toks.push_back(trim(inner.substr(a, c == std::string::npos ? std::string::npos : c - a)));
    if (c == std::string::npos) break;
    a = c + 1;
  }
  // "()" and the trailing comma of "(6,)" leave one empty last token; an
  // empty token anywhere else ("(,)", "(2,,3)") is malformed.
  if (toks.back().empty()) toks.pop_back();
  shape->clear();
  bool has_zero = false;
  for (const std::string& t0 : toks) {
    if (t0.empty()) return bad;
    // Files written by numpy under Python 2 spell dimensions as longs (6L).
    std::string t = t0.back() == 'L' ? t0.substr(0, t0.size() - 1) : t0;
    int64_t d = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), d);
    if (ec == std::errc::result_out_of_range && !t.empty() && t[0] != '-')
      return "dimension " + t0 + " in shape " + text + " is too large";
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && end == t.data() + t.size() && d < 0))
      return "negative dimension " + t0 + " in shape " + text;
    if (ec != std::errc() || end != t.data() + t.size())
      return "dimension '" + t0 + "' in shape " + text + " is not an integer";
    if (d > kMaxElements)
      return "dimension " + t0 + " in shape " + text + " is too large (more than 2^40 elements)";
    if (d == 0) has_zero = true;
    shape->push_back(d);
  }
  // A 0 dimension makes the count 0 whatever the others say; otherwise each
  // product is checked against the limit before it is formed, so none overflows.
  int64_t n = 1;
  if (has_zero) n = 0;
  else
    for (int64_t d : *shape) {
      if (n > kMaxElements / d) return "shape " + text + " has too many elements (more than 2^40)";
      n *= d;
    }
  *numel = n;
  return "";
}

}  // namespace

Status read_npy(const std::string& path, HostTensor* out) {
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) return error_status(path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(f.fd, &st) != 0) return error_status(path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return error_status(path + ": is a directory");
  auto read_error = [&] { return error_status(path + ": read error: " + std::strerror(errno)); };

  // Preamble: 6 magic bytes, major and minor version, then the header
  // length (2 bytes little endian in 1.0, 4 bytes in 2.0 and 3.0).
  unsigned char pre[8];
  int64_t got = read_full(f.fd, reinterpret_cast<char*>(pre), 8);
  if (got < 0) return read_error();
  if (got < 6 || std::memcmp(pre, "\x93NUMPY", 6) != 0)
    return error_status(path + ": not a .npy file (expected the \\x93NUMPY magic)");
  if (got < 8) return error_status(path + ": truncated header (the file ends inside the version bytes)");
  const int major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0)
    return error_status(path + ": unsupported .npy format version " + std::to_string(major) + "." +
                        std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  const size_t len_bytes = major == 1 ? 2 : 4;
  unsigned char lb[4] = {0, 0, 0, 0};
  got = read_full(f.fd, reinterpret_cast<char*>(lb), len_bytes);
  if (got < 0) return read_error();
  if (got < int64_t(len_bytes))
    return error_status(path + ": truncated header (the file ends inside the header length)");
  const uint32_t hlen = uint32_t(lb[0]) | (uint32_t(lb[1]) << 8) | (uint32_t(lb[2]) << 16) | (uint32_t(lb[3]) << 24);
  if (hlen > kMaxHeaderBytes)
    return error_status(path + ": header length " + std::to_string(hlen) + " bytes is implausible (limit " +
                        std::to_string(kMaxHeaderBytes) + "); the file is corrupt");
  std::string h(hlen, '\0');
  got = read_full(f.fd, h.data(), hlen);
  if (got < 0) return read_error();
  if (got < int64_t(hlen))
    return error_status(path + ": truncated header (header length " + std::to_string(hlen) + " bytes, the file holds " +
                        std::to_string(got) + ")");
  const int64_t data_offset = 8 + int64_t(len_bytes) + int64_t(hlen);

  const std::string ht = trim(h);
  if (ht.empty() || ht.front() != '{' || ht.back() != '}')
    return error_status(path + ": malformed header (expected a dict such as {'descr': '<f4', 'fortran_order': False, "
                        "'shape': (2, 3), })");
  std::string descr, order, shape_text;
  for (auto [key, val] : {std::pair<const char*, std::string*>{"descr", &descr}, {"fortran_order", &order},
                          {"shape", &shape_text}}) {
    std::string e = header_value(ht, key, val);
    if (!e.empty()) return error_status(path + ": " + e);
  }
  if (order != "False") return error_status(path + ": expected C order (fortran_order False), found " + order);
  HostTensor t;
  int64_t n = 0;
  if (std::string e = parse_shape(shape_text, &t.shape, &n); !e.empty()) return error_status(path + ": " + e);
  if (descr.size() < 2 || descr.front() != '\'' || descr.back() != '\'')
    return error_status(path + ": unsupported dtype " + descr + " (expected one of '<f4' '<f8' '<i4' '<i8' '<u2' "
                        "'|u1' '|i1')");
  descr = descr.substr(1, descr.size() - 2);
  int64_t es = 0;
  if (descr == "<f4") es = 4, t.dtype = DType::kF32;
  else if (descr == "<f8") es = 8, t.dtype = DType::kF64;
  else if (descr == "<i4") es = 4, t.dtype = DType::kI32;
  else if (descr == "<i8") es = 8, t.dtype = DType::kI32;
  else if (descr == "<u2") es = 2, t.dtype = DType::kI32;
  else if (descr == "|u1" || descr == "|i1") es = 1, t.dtype = DType::kI32;
  else return error_status(path + ": unsupported dtype '" + descr + "' (expected <f4 <f8 <i4 <i8 <u2 |u1 |i1)");

  // The data must be exactly n * es bytes. A regular file's size is known,
  // so a shape the data cannot back is refused before any allocation; a pipe
  // is read in bounded chunks up to one byte past the expected size, so the
  // buffer never outgrows what actually arrived.
  const int64_t want = n * es;
  auto mismatch = [&](int64_t have, bool at_least) {
    return error_status(path + ": data size mismatch: shape " + shape_text + " of " + descr + " needs " +
                        std::to_string(want) + " bytes, the file holds " + (at_least ? "at least " : "") +
                        std::to_string(have) + " after the " + std::to_string(data_offset) +
                        "-byte header (truncated or corrupt)");
  };
  if (S_ISREG(st.st_mode) && int64_t(st.st_size) - data_offset != want)
    return mismatch(int64_t(st.st_size) - data_offset, false);
  std::vector<char> raw;
  if (S_ISREG(st.st_mode)) raw.reserve(size_t(want) + 1);
  constexpr int64_t kChunk = int64_t(1) << 24;
  for (;;) {
    const int64_t have = int64_t(raw.size());
    const int64_t next = std::min(want + 1, have + kChunk);
    raw.resize(size_t(next));
    got = read_full(f.fd, raw.data() + have, size_t(next - have));
    if (got < 0) return read_error();
    raw.resize(size_t(have + got));
    if (have + got < next || int64_t(raw.size()) > want) break;
  }
  if (int64_t(raw.size()) != want) return mismatch(int64_t(raw.size()), int64_t(raw.size()) > want);
  t.values.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    const char* p = raw.data() + i * es;
    double v = 0;
    if (descr == "<f4") { float x; std::memcpy(&x, p, 4); v = x; }
    else if (descr == "<f8") std::memcpy(&v, p, 8);
    else if (descr == "<i4") { int32_t x; std::memcpy(&x, p, 4); v = x; }
    else if (descr == "<i8") { int64_t x; std::memcpy(&x, p, 8); v = double(x); }
    else if (descr == "<u2") { uint16_t x; std::memcpy(&x, p, 2); v = x; }
    else if (descr == "|u1") v = double(uint8_t(*p));
    else v = double(int8_t(*p));
    t.values[size_t(i)] = v;
  }
  *out = std::move(t);
  return ok_status();
}

Status write_npy(const std::string& path, const HostTensor& t) {
  const char* descr = t.dtype == DType::kF64 ? "<f8" : t.dtype == DType::kI32 ? "<i4" : "<f4";
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += std::to_string(t.shape[i]) + ",";
  if (t.shape.size() > 1) shape.pop_back();
  shape += ")";
  std::string h = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + h.size() + 1;
  h += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::ofstream o(path, std::ios::binary);
  if (!o) return error_status("cannot write '" + path + "'");
  o.write("\x93NUMPY\x01\x00", 8);
  unsigned char len[2] = {uint8_t(h.size() & 0xff), uint8_t(h.size() >> 8)};
  o.write(reinterpret_cast<char*>(len), 2);
  o.write(h.data(), std::streamsize(h.size()));
  for (double v : t.values) {
    if (t.dtype == DType::kF64) o.write(reinterpret_cast<const char*>(&v), 8);
    else if (t.dtype == DType::kI32) { int32_t x = int32_t(v); o.write(reinterpret_cast<const char*>(&x), 4); }
    else { float f = float(v); o.write(reinterpret_cast<const char*>(&f), 4); }
  }
  if (!o) return error_status("error writing '" + path + "'");
  return ok_status();
}

}  // namespace hymo::rt
