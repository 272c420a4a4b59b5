#!/usr/bin/env python3
"""The diagonal blocks' fast paths (kernels/gdn: HYMO_GDN_DIAGMM, HYMO_GDN_DIAG8), checked on
the host: the share of blocks that pass each test at the benchmark's inputs, and an
emulation of the fast paths' arithmetic at the test's limit against FP64.

  /usr/bin/python3 bench/gdn/diag_numerics.py [--limit 96] [--blocks 3000] [--seed 0]

Needs numpy (Debian: python3-numpy). Prints:
- shares: the benchmark's first input set in distribution (B = 4, T = 4096, H = 28,
  A = -(h + 1), gate raw U(-sqrt 3, sqrt 3), dt_bias 0; gdn_bench.cc), per test and limit. The
  benchmark's JSON reports the same shares from its own inputs (diag_fast_share,
  diag8_fast_share);
- plain: the DIAG8 block of the plain output pass (queries and keys referenced to row 3 of
  their half, BF16 operands; the square from the operands rescaled to row 7 in two steps),
  FP32 with an ex2 that flushes below 2^-126 as ex2.approx.ftz does; the worst error over
  the passing blocks as a share of max|c| max|b| S;
- backward: dc and db of DIAG8_BWD (halves, then the square scaled by its column factor and
  then its row factor), FP32 operands as the kernels' high + low split gives; the worst error
  as a share of the largest entry.
docs/kernels/gdn.md ("What session 17 did") quotes a run of this script.
"""
import argparse

import numpy as np

F32 = np.float32


def ex2(x):
    r = np.exp2(np.asarray(x, F32)).astype(F32)
    r[np.abs(r) < 2.0 ** -126] = 0  # ex2.approx.ftz
    return r


def bf16(x):
    x = np.asarray(x, F32).copy()
    u = x.view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return u.view(F32)


def shares(limits, seed):
    rng = np.random.default_rng(seed)
    B, T, H = 4, 4096, 28
    u = rng.uniform(-np.sqrt(3), np.sqrt(3), size=(B, T, H))
    G = (1 / (1 + np.exp(-u))).reshape(B, T // 64, 64, H).cumsum(2)
    G = np.concatenate([np.zeros((B, T // 64, 1, H)), G], 2)  # G[..., r + 1, :]: inclusive at row r
    for limit in limits:
        out = []
        for span, name in ((8, "16-row (DIAGMM)"), (4, "4-row (DIAG8)")):
            passed = total = 0
            for h in range(H):
                amax2 = (h + 1) * np.log2(np.e)
                for r0 in range(0, 64, 16):
                    pts = list(range(r0 - 1, r0 + 16, span))
                    widest = np.max(np.stack([G[:, :, pts[i + 1] + 1, h] - G[:, :, pts[i] + 1, h]
                                              for i in range(len(pts) - 1)]), 0)
                    passed += int((widest * amax2 <= limit).sum())
                    total += widest.size
            out.append(f"{name} {100 * passed / total:.1f}%")
        print(f"shares at limit {limit}: " + ", ".join(out))


def random_block(rng, limit, S):
    """A block that passes the 4-row test: (A2 = A log2 e, the gates G_0..G_15, c, b, the exact
    pair decays E[t, tau, s] = 2^((G_t - G_tau) A2_s) in FP64, each row's half reference
    G_3'), or None (the draws are made either way up to the test, so a seed gives one sequence)."""
    amax = rng.uniform(1, 60)
    A2 = -(rng.uniform(0.05, 1, S) * amax).astype(F32)
    A2[0] = -amax
    g = rng.uniform(0, 1, 16) * rng.choice([0.2, 1, 3, 6])
    Gx = np.concatenate([[0.0], np.cumsum(g)]).astype(F32)  # Gx[r + 1]: row r, Gx[0]: row -1
    spans = [Gx[4] - Gx[0], Gx[8] - Gx[4], Gx[12] - Gx[8], Gx[16] - Gx[12]]
    if max(spans) * amax > limit:
        return None
    c = rng.normal(0, 1, (16, S)).astype(F32)
    b = rng.normal(0, 1, (16, S)).astype(F32)
    Gt = Gx[1:]
    E = np.exp2((Gt[:, None, None] - Gt[None, :, None]).astype(np.float64) * A2.astype(np.float64))
    g3 = np.array([Gt[(t & ~7) + 3] for t in range(16)], F32)
    return A2, Gt, c, b, E, g3


def passing_blocks(rng, limit, blocks, S):
    """The blocks of `blocks` draws that pass the 4-row test (random_block)."""
    for _ in range(blocks):
        blk = random_block(rng, limit, S)
        if blk is not None:
            yield blk


def plain(limit, blocks, seed, S=32):
    rng = np.random.default_rng(seed)
    worst, npass = 0.0, 0
    for A2, Gt, c, b, E, g3 in passing_blocks(rng, limit, blocks, S):
        npass += 1
        ref = np.einsum("ts,tus,us->tu", c.astype(np.float64), E, b.astype(np.float64)) * np.tril(np.ones((16, 16)))
        Q = bf16(c * ex2((Gt - g3)[:, None] * A2))
        K = bf16(b * ex2((g3 - Gt)[:, None] * A2))
        with np.errstate(all="ignore"):
            P = Q.astype(np.float64) @ K.T.astype(np.float64)
            sq = bf16(Q[8:] * ex2((Gt[11] - Gt[7]) * A2)).astype(np.float64) @ \
                bf16(K[:8] * ex2((Gt[7] - Gt[3]) * A2)).T.astype(np.float64)
        out = np.tril(P)
        out[8:, :8] = sq
        out = np.where(np.tril(np.ones((16, 16))) > 0, out, 0)
        err = np.abs(out - ref).max() / (np.abs(c).max() * np.abs(b).max() * S)
        if not np.isfinite(err):
            raise SystemExit("plain: a non-finite entry at the limit")
        worst = max(worst, err)
    print(f"plain (DIAG8): {npass} passing blocks, all finite, worst error {worst:.2e} of max|c| max|b| S")


def backward(limit, blocks, seed, S=32):
    rng = np.random.default_rng(seed + 1)
    worst, npass = [0.0, 0.0], 0
    L = np.tril(np.ones((16, 16)))
    half = np.arange(16) >= 8
    same = half[:, None] == half[None, :]
    for A2, Gt, c, b, E, g3 in passing_blocks(rng, limit, blocks, S):
        npass += 1
        dP = rng.normal(0, 1, (16, 16)).astype(F32)
        dc_ref = np.einsum("tu,tus,us->ts", dP * L, E, b.astype(np.float64))
        db_ref = np.einsum("tu,tus,ts->us", dP * L, E, c.astype(np.float64))
        Kh = (b * ex2((g3 - Gt)[:, None] * A2)).astype(F32)
        Qh = (c * ex2((Gt - g3)[:, None] * A2)).astype(F32)
        with np.errstate(all="ignore"):
            mm = lambda x, y: (x.astype(np.float64) @ y.astype(np.float64)).astype(F32)
            dc = mm(dP * L * same, Kh) * ex2((Gt - g3)[:, None] * A2)
            dc[8:] += (mm(dP * L * ~same, Kh)[8:] * ex2((Gt[7] - Gt[3]) * A2)) * ex2((Gt[8:] - Gt[7])[:, None] * A2)
            dpT = (dP * L).T
            db = mm(dpT * same, Qh) * ex2((g3 - Gt)[:, None] * A2)
            db[:8] += (mm(dpT * ~same, Qh)[:8] * ex2((Gt[11] - Gt[7]) * A2)) * ex2((Gt[7] - Gt[:8])[:, None] * A2)
        for k, (x, r) in enumerate(((dc, dc_ref), (db, db_ref))):
            e = np.abs(x - r).max() / np.abs(r).max()
            if not np.isfinite(e):
                raise SystemExit("backward: a non-finite entry at the limit")
            worst[k] = max(worst[k], e)
    print(f"backward (DIAG8_BWD): {npass} passing blocks, all finite, worst error dc {worst[0]:.2e}, "
          f"db {worst[1]:.2e} of the largest entry")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=float, default=96.0)
    ap.add_argument("--blocks", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if not 0 < a.limit < 126:
        ap.error("--limit must lie in (0, 126): a factor must stay in FP32's normal range")
    shares(sorted({64.0, 96.0, 110.0, a.limit}), a.seed)
    plain(a.limit, a.blocks, a.seed)
    backward(a.limit, a.blocks, a.seed)


if __name__ == "__main__":
    main()
