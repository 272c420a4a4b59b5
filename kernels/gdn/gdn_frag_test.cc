// gdn_frag.h's lane addresses against the PTX ISA's layouts, on the CPU: ldmatrix.x4 (with and
// without .trans) is emulated from the addresses the kernels compute, and the registers it would
// deliver are read as mma.m16n8k16's A and B fragments. Each of the four ways the kernels load a
// fragment must give back the logical operand it stands for, element by element. A fifth check
// loads with the wrong order's helpers and must see a mismatch (the emulation can tell them apart).
// Host code only; no GPU.
#include <cstdio>
#include <vector>

#include "gdn_frag.h"

using namespace hymo::gdn;

namespace {

int g_fail = 0;

// One tile in shared memory: element (r, c) at r * ld + c, each a distinct value.
struct Tile {
  int rows, cols, ld;
  std::vector<float> v;
  Tile(int r, int c, int l) : rows(r), cols(c), ld(l), v(size_t(r) * l, -1.0f) {
    for (int i = 0; i < r; ++i)
      for (int j = 0; j < c; ++j) v[size_t(i) * ld + j] = float(i * 1000 + j);
  }
  float at(int r, int c) const { return v[size_t(r) * ld + c]; }
};

// What lane l's register q holds after ldmatrix.x4 (element e of the pair, e = 0 at the lower
// address), the lanes' row addresses given as element offsets addr[0..31]. The lanes 8 q ..
// 8 q + 7 address the rows of quarter q. Without .trans lane l receives row l / 4 of each
// quarter, columns 2 (l % 4) + e; with .trans the quarter arrives transposed: lane l receives
// column l / 4 of rows 2 (l % 4) + e.
struct Regs {
  float r[32][4][2];
};
Regs ldsm_x4(const Tile& t, const int (&addr)[32], bool trans) {
  Regs out{};
  for (int l = 0; l < 32; ++l)
    for (int q = 0; q < 4; ++q)
      for (int e = 0; e < 2; ++e) {
        const int row = trans ? 2 * (l % 4) + e : l / 4;
        const int col = trans ? l / 4 : 2 * (l % 4) + e;
        out.r[l][q][e] = t.v[size_t(addr[8 * q + row]) + col];
      }
  return out;
}

// mma.m16n8k16 with 16-bit operands. A (16 x 16): register q of lane l holds row l / 4 + 8 (q & 1),
// columns 2 (l % 4) + e + 8 (q >> 1). B (16 x 8), registers j = 0, 1: rows (k) 2 (l % 4) + e + 8 j,
// column (n) l / 4; one x4 load gives two such fragments, registers 0-1 (n 0..7) and 2-3 (n 8..15).
// want(m, k) for A, want(k, n) for the two B fragments: the logical operand's element.
enum class Frag { A, B2 };
template <class F>
bool check(Frag f, const Regs& x, F want) {
  int bad = 0;
  for (int l = 0; l < 32; ++l)
    for (int q = 0; q < 4; ++q)
      for (int e = 0; e < 2; ++e) {
        const int g = l / 4 + 8 * (f == Frag::A ? q & 1 : q >> 1);   // A's row, B's column
        const int t = 2 * (l % 4) + e + 8 * (f == Frag::A ? q >> 1 : q & 1);  // A's column, B's row
        bad += f == Frag::A ? x.r[l][q][e] != want(g, t) : x.r[l][q][e] != want(t, g);
      }
  return bad == 0;
}

void expect(const char* what, bool ok, bool want = true) {
  std::printf("  %-4s %s\n", ok == want ? "ok" : "FAIL", what);
  g_fail += ok != want;
}

}  // namespace

int main() {
  // BF16 rows padded as the kernels pad them (32 values, 80-byte rows: ld 40), one k step in
  // (k0 = 16) and the second pair of n8 tiles (np = 1), so that the bases are exercised too
  const int ld = 40, k0 = 16, np = 1;
  int addr[32];

  // 1. A row-major (M x K = 16 x 32): ldsm_x4(a, A + ldsm_row * lda + k0 + ldsm_col)
  {
    Tile a(16, 32, ld);
    for (int l = 0; l < 32; ++l) addr[l] = ldsm_row(l) * ld + k0 + ldsm_col(l);
    expect("A fragment of a row-major tile (ldsm_row, ldsm_col; no .trans)",
           check(Frag::A, ldsm_x4(a, addr, false), [&](int m, int k) { return a.at(m, k0 + k); }));
  }
  // 2. A stored transposed (K x M = 32 x 16): ldsm_x4_t(a, A + (k0 + ldsm_row_t) * lda + ldsm_col_t)
  {
    Tile at(32, 16, ld);
    for (int l = 0; l < 32; ++l) addr[l] = (k0 + ldsm_row_t(l)) * ld + ldsm_col_t(l);
    expect("A fragment of a transposed tile (ldsm_row_t, ldsm_col_t; .trans)",
           check(Frag::A, ldsm_x4(at, addr, true), [&](int m, int k) { return at.at(k0 + k, m); }));
  }
  // 3. B row-major (K x N = 32 x 32): ldsm_x4_t(b, B + (k0 + ldsm_row) * ldb + np * 16 + ldsm_col)
  {
    Tile b(32, 32, ld);
    for (int l = 0; l < 32; ++l) addr[l] = (k0 + ldsm_row(l)) * ld + np * 16 + ldsm_col(l);
    expect("two B fragments of a row-major K x N tile (ldsm_row, ldsm_col; .trans)",
           check(Frag::B2, ldsm_x4(b, addr, true), [&](int k, int n) { return b.at(k0 + k, np * 16 + n); }));
  }
  // 4. B stored transposed (N x K = 32 x 32): ldsm_x4(b, Bt + (np * 16 + ldsm_row_t) * ldb + k0 + ldsm_col_t)
  {
    Tile bt(32, 32, ld);
    for (int l = 0; l < 32; ++l) addr[l] = (np * 16 + ldsm_row_t(l)) * ld + k0 + ldsm_col_t(l);
    expect("two B fragments of a transposed N x K tile (ldsm_row_t, ldsm_col_t; no .trans)",
           check(Frag::B2, ldsm_x4(bt, addr, false), [&](int k, int n) { return bt.at(np * 16 + n, k0 + k); }));
  }
  // 5. the row-order helpers on a row-major A tile give a wrong fragment: must be seen as one
  {
    Tile a(16, 32, ld);
    for (int l = 0; l < 32; ++l) addr[l] = ldsm_row_t(l) * ld + k0 + ldsm_col_t(l);
    expect("mismatch seen: a row-major A tile loaded with the transposed order's helpers",
           check(Frag::A, ldsm_x4(a, addr, false), [&](int m, int k) { return a.at(m, k0 + k); }), false);
  }
  std::printf("%s: %d failed\n", g_fail ? "FAIL" : "PASSED", g_fail);
  return g_fail ? 1 : 0;
}
