// Minimal .npy reader/writer (format version 1.0/2.0, C order, little endian).
#include <cstring>
#include <fstream>
#include <sstream>

#include "cpu/bf16.h"
#include "hymo/rt/api.h"
#include "plan_internal.h"

namespace hymo::rt {
namespace {

// Finds `'key': value` in the header dict and returns the raw value text.
bool header_value(const std::string& h, const std::string& key, std::string* out) {
  size_t p = h.find("'" + key + "'");
  if (p == std::string::npos) return false;
  p = h.find(':', p);
  if (p == std::string::npos) return false;
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  size_t e = p;
  if (h[p] == '(') e = h.find(')', p) + 1;
  else if (h[p] == '\'') e = h.find('\'', p + 1) + 1;
  else
    while (e < h.size() && h[e] != ',' && h[e] != '}') ++e;
  *out = h.substr(p, e - p);
  return true;
}

}  // namespace

Status read_npy(const std::string& path, HostTensor* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error_status("cannot open '" + path + "'");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return error_status(path + ": not a .npy file (expected the \\x93NUMPY magic)");
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) return error_status(path + ": truncated header");
    hlen = uint32_t(b[0]) | (uint32_t(b[1]) << 8);
  } else {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) return error_status(path + ": truncated header");
    hlen = uint32_t(b[0]) | (uint32_t(b[1]) << 8) | (uint32_t(b[2]) << 16) | (uint32_t(b[3]) << 24);
  }
  std::string h(hlen, '\0');
  if (!in.read(&h[0], hlen)) return error_status(path + ": truncated header");
  std::string descr, order, shape;
  if (!header_value(h, "descr", &descr) || !header_value(h, "fortran_order", &order) ||
      !header_value(h, "shape", &shape))
    return error_status(path + ": header lacks descr, fortran_order or shape");
  if (order != "False") return error_status(path + ": expected C order (fortran_order False), found " + order);
  out->shape.clear();
  {
    std::string s = shape.substr(1, shape.size() - 2);
    std::stringstream ss(s);
    std::string tok;
    while (std::getline(ss, tok, ',')) {
      size_t a = tok.find_first_not_of(' ');
      if (a == std::string::npos) continue;
      out->shape.push_back(std::stoll(tok.substr(a)));
    }
  }
  int64_t n = 1;
  for (int64_t d : out->shape) n *= d;
  descr = descr.substr(1, descr.size() - 2);
  int64_t es = 0;
  if (descr == "<f4") es = 4, out->dtype = DType::kF32;
  else if (descr == "<f8") es = 8, out->dtype = DType::kF64;
  else if (descr == "<i4") es = 4, out->dtype = DType::kI32;
  else if (descr == "<i8") es = 8, out->dtype = DType::kI32;
  else if (descr == "<u2") es = 2, out->dtype = DType::kI32;
  else if (descr == "|u1" || descr == "|i1") es = 1, out->dtype = DType::kI32;
  else return error_status(path + ": unsupported dtype '" + descr + "' (expected <f4 <f8 <i4 <i8 <u2 |u1 |i1)");
  std::vector<char> raw(static_cast<size_t>(n * es));
  if (!in.read(raw.data(), std::streamsize(raw.size())))
    return error_status(path + ": truncated data (expected " + std::to_string(n * es) + " bytes)");
  out->values.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    const char* p = raw.data() + i * es;
    double v = 0;
    if (descr == "<f4") { float f; std::memcpy(&f, p, 4); v = f; }
    else if (descr == "<f8") std::memcpy(&v, p, 8);
    else if (descr == "<i4") { int32_t x; std::memcpy(&x, p, 4); v = x; }
    else if (descr == "<i8") { int64_t x; std::memcpy(&x, p, 8); v = double(x); }
    else if (descr == "<u2") { uint16_t x; std::memcpy(&x, p, 2); v = x; }
    else if (descr == "|u1") v = double(uint8_t(*p));
    else v = double(int8_t(*p));
    out->values[size_t(i)] = v;
  }
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
