#!/usr/bin/env python3
"""How close can an FP32 evaluation of the GDN function get to the FP64 reference?

issue 4 asks the FP32 test variant for ||out - ref|| / ||ref|| < 1e-5 on every input
gradient, on fresh random inputs. Some gradients are sums whose terms cancel: the per-head
sums over tokens (dt_bias, D_skip, A_log) and, where the decay leaves no memory, db and dc
(RMSNorm makes dyp nearly orthogonal to yp, so dP_tt = dyp_t . v_t is small against its
terms). Their relative error is then set by the condition number, whatever the kernel does.

This script measures that floor with PyTorch's own FP32 (no TF32, CPU): the definition
(one step per token, autograd) and the chunked form of bench_gdn.py, each in FP32, against
the same function in FP64, from the same inputs, drawn as kernels/gdn/gdn_test.cc draws
its FP32 cases (other random numbers, same distributions). Per case and tensor it prints
the largest relative error over the seeds and how many seeds miss 1e-5; for the per-head
sums also the condition number (||sum of the terms' magnitudes|| / ||sum||, median and
largest over the seeds) and the largest error against the terms' magnitudes.

With --case-file FILE it evaluates one of gdn_test.cc's cases on exactly its numbers
(`hymo_gdn_test --seed S --dump-case N FILE`, no GPU needed), so that a kernel's error on a
fresh seed can be set beside PyTorch's on the same inputs: FP32 for the FP32 cases; for the
BF16 cases the kernel's contract (v, b, c, gate, z, dout and the gradients of the first five in
BF16, parameters and compute in FP32).

Usage: /usr/bin/python3 bench/gdn/fp32_floor.py [--seeds 12] [--cases all|quick]
       /usr/bin/python3 bench/gdn/fp32_floor.py --case-file FILE
(CPU; about 8 minutes for --cases all at 12 seeds on two cores.)
"""
import argparse
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gdn import gdn_chunked, gdn_naive  # noqa: E402

TOL = 1e-5
NAMES = ["v", "b", "c", "gate_raw", "z", "dt_bias", "A_log", "D_skip", "w_y"]
GRADS = ["v", "b", "c", "gate_raw", "dt_bias", "A_log", "z", "D_skip", "w_y"]
LG = math.log(16.0)
# (B, T, H, D, S, gate_mean, A_log draw) as gdn_test.cc's fused FP32 cases: alog < 0 is
# log 28 everywhere, 0 "mixed" (log 28 on even s, U(0, log 4) on odd s), else U(0, alog)
CASES = [
    (2, 63, 2, 32, 32, 0.0, LG),
    (1, 65, 2, 32, 32, 0.0, LG),
    (1, 300, 2, 32, 32, 4.0, 0.0),
    (1, 100, 2, 16, 16, 0.0, LG),
    (1, 300, 2, 32, 32, 0.0, LG),
    (1, 1000, 2, 32, 32, 0.0, LG),
    (1, 4097, 1, 32, 32, 0.0, LG),
]
QUICK = CASES[:5]


def draw(B, T, H, D, S, gate_mean, alog, gen):
    n = lambda *s, m=0.0, sc=1.0: m + sc * torch.randn(*s, generator=gen, dtype=torch.float64)
    v, z = n(B, T, H, D), n(B, T, H, D)
    b, c = n(B, T, H, S, sc=1 / math.sqrt(S)), n(B, T, H, S, sc=1 / math.sqrt(S))
    gate = n(B, T, H, m=gate_mean)
    dt_bias = n(H, sc=0.3)
    u = torch.rand(H, S, generator=gen, dtype=torch.float64)
    if alog < 0:
        A_log = torch.full((H, S), math.log(28.0), dtype=torch.float64)
    elif alog == 0:
        A_log = torch.where(torch.arange(S) % 2 == 0, torch.tensor(math.log(28.0), dtype=torch.float64),
                            math.log(4.0) * u)
    else:
        A_log = alog * u
    D_skip, w_y = n(H, m=1.0, sc=0.2), n(D, m=1.0, sc=0.2)
    dout = n(B, T, H, D)
    # FP32 inputs, as the FP32 test variant takes them; the FP64 reference gets the same values
    ins = [x.float().double() for x in (v, b, c, gate, z, dt_bias, A_log, D_skip, w_y)]
    return ins, dout.float().double()


def grads(fn, ins, dout, dtype):
    """dtype torch.bfloat16: the kernel's BF16 contract, v b c gate z and dout in BF16, the
    parameters in FP32 (bench_gdn.py's functions then compute in FP32 and return y in BF16)."""
    if dtype == torch.bfloat16:
        xs = [x.detach().to(torch.bfloat16 if i < 5 else torch.float32).clone().requires_grad_()
              for i, x in enumerate(ins)]
    else:
        xs = [x.detach().to(dtype).clone().requires_grad_() for x in ins]
    y = fn(*xs)
    y.backward(dout.to(y.dtype))
    out = {k: x.grad.double() for k, x in zip(NAMES, xs)}
    out["y"] = y.detach().double()
    return out


def terms(ins, dout):
    """Per-head sums' terms' magnitudes, from the FP64 definition (one step per token)."""
    v, b, c, gate, z, dt_bias, A_log, D_skip, w_y = [x.detach().clone().requires_grad_() for x in ins]
    # per-token copies of the per-head parameters, so that autograd hands out the terms
    B, T, H, D = v.shape
    dtb_t = dt_bias.detach().expand(B, T, H).clone().requires_grad_()
    dsk_t = D_skip.detach().expand(B, T, H).clone().requires_grad_()
    alog_t = A_log.detach().expand(B, T, H, A_log.shape[1]).clone().requires_grad_()
    gg = torch.sigmoid(gate.detach() + dtb_t)
    h = v.new_zeros(B, H, b.shape[-1], D)
    outs = []
    for t in range(T):
        a = torch.exp(gg[:, t, :, None] * -torch.exp(alog_t[:, t]))
        h = a[..., None] * h + b.detach()[:, t, ..., None] * v.detach()[:, t, :, None, :]
        outs.append(torch.einsum('bhs,bhsd->bhd', c.detach()[:, t], h))
    o = torch.stack(outs, 1)
    yp = o + dsk_t[..., None] * v.detach()
    y = yp * torch.rsqrt(yp.pow(2).mean(-1, keepdim=True) + 1e-6) * w_y.detach() * torch.nn.functional.silu(z.detach())
    y.backward(dout)
    return {"dt_bias": dtb_t.grad.abs().sum((0, 1)), "D_skip": dsk_t.grad.abs().sum((0, 1)),
            "A_log": alog_t.grad.abs().sum((0, 1))}


def read_case(path):
    """A case written by `hymo_gdn_test --dump-case N FILE` (the inputs, then dout)."""
    with open(path, "rb") as f:
        head = f.readline().split()
        if len(head) != 8 or head[0] != b"hymo-gdn-case" or head[7] not in (b"bf16", b"f32"):
            sys.exit(f"{path}: not a case file from hymo_gdn_test --dump-case")
        B, T, H, D, S, fused = (int(x) for x in head[1:7])
        dtype = torch.bfloat16 if head[7] == b"bf16" else torch.float32
        if not fused:
            sys.exit(f"{path}: an unfused case (this script evaluates the fused function)")
        sizes = [B * T * H * D, B * T * H * S, B * T * H * S, B * T * H, B * T * H * D, H, H * S, H, D,
                 B * T * H * D]
        shapes = [(B, T, H, D), (B, T, H, S), (B, T, H, S), (B, T, H), (B, T, H, D), (H,), (H, S), (H,), (D,),
                  (B, T, H, D)]
        data = f.read()
    if len(data) != 8 * sum(sizes):
        sys.exit(f"{path}: {len(data)} bytes of arrays, expected {8 * sum(sizes)} for B={B} T={T} H={H} D={D} S={S}")
    flat = torch.frombuffer(bytearray(data), dtype=torch.float64)
    arrs, o = [], 0
    for n, sh in zip(sizes, shapes):
        arrs.append(flat[o:o + n].reshape(sh).clone())
        o += n
    return (B, T, H, D, S), dtype, arrs[:9], arrs[9]


def sensitivity(ins, dout, ref, seed):
    """The function's sensitivity to FP32 rounding, per output: the FP64 reference again from
    the inputs (and dout) each moved by a random relative 2^-24 (FP32's unit roundoff)."""
    pg = torch.Generator().manual_seed(seed)
    jig = lambda x: x * (1 + 2.0 ** -24 * (2 * torch.rand(x.shape, generator=pg, dtype=torch.float64) - 1))
    refp = grads(gdn_naive, [jig(x) for x in ins], jig(dout), torch.float64)
    return {k: rel(refp[k], ref[k]) for k in ref}


def label(k):
    return k if k == "y" else "d" + k


def rel(x, r):
    return (x - r).norm().item() / max(r.norm().item(), 1e-300)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=12)
    ap.add_argument("--cases", choices=["all", "quick"], default="quick")
    ap.add_argument("--no-chunked", action="store_true", help="the definition only")
    ap.add_argument("--case-file", help="evaluate one case written by hymo_gdn_test --dump-case instead")
    a = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    torch.backends.cuda.matmul.allow_tf32 = False
    impls = [("naive", gdn_naive)] + ([] if a.no_chunked else [("chunked", gdn_chunked)])
    if a.case_file:
        print("PyTorch (CPU, no TF32) against FP64; relative errors")
        return one_case(a.case_file, impls)
    print(f"FP32 PyTorch (CPU, no TF32) against FP64, {a.seeds} seeds a case; tol {TOL:g}")
    worst_all = {}
    for case in (CASES if a.cases == "all" else QUICK):
        B, T, H, D, S, gm, al = case
        alog = "log28" if al < 0 else "mixed" if al == 0 else f"U(0,{al:.2f})"
        print(f"case B={B} T={T} H={H} D={D} S={S} gate_mean={gm} A_log={alog}")
        stats = {}
        conds = {k: [] for k in ("dt_bias", "D_skip", "A_log")}
        for sd in range(a.seeds):
            gen = torch.Generator().manual_seed(1000 * (sd + 1) + 7 * T + H)
            ins, dout = draw(*case, gen)
            ref = grads(gdn_naive, ins, dout, torch.float64)
            spread = sensitivity(ins, dout, ref, sd + 99)
            mags = terms(ins, dout)
            for k in conds:
                conds[k].append(mags[k].norm().item() / max(ref[k].norm().item(), 1e-300))
            for name, fn in impls:
                got = grads(fn, ins, dout, torch.float32)
                for k in ["y"] + GRADS:
                    e = rel(got[k], ref[k])
                    st = stats.setdefault((name, k), [0.0, 0, 0.0, 0.0])
                    st[0] = max(st[0], e)
                    st[1] += e >= TOL
                    st[3] = max(st[3], e / max(spread[k], 1e-300))  # error / sensitivity
                    if k in mags:  # the error against the terms' magnitudes
                        st[2] = max(st[2], (got[k] - ref[k]).norm().item() / mags[k].norm().item())
        for (name, k), (w, nf, wm, ws) in stats.items():
            cond = ""
            if k in conds:
                cs = sorted(conds[k])
                cond = f"  cond median {cs[len(cs) // 2]:.0f} max {cs[-1]:.0f}; vs terms' magnitudes worst {wm:.1e}"
            print(f"  {name:8s} {label(k):10s} worst {w:.2e}  seeds >= 1e-5: {nf}/{a.seeds}"
                  f"  error/sensitivity worst {ws:.1f}{cond}")
            worst_all[(name, k)] = max(worst_all.get((name, k), 0.0), w)
    print("worst over all cases: " + ", ".join(f"{n}:{label(k)} {w:.1e}"
                                               for (n, k), w in sorted(worst_all.items())))


def one_case(path, impls):
    (B, T, H, D, S), dtype, ins, dout = read_case(path)
    tol = 1e-2 if dtype == torch.bfloat16 else TOL
    print(f"case file {path}: B={B} T={T} H={H} D={D} S={S} (fused), "
          f"{'BF16 I/O, FP32 compute' if dtype == torch.bfloat16 else 'FP32'}; tol {tol:g}")
    ref = grads(gdn_naive, ins, dout, torch.float64)
    mags = terms(ins, dout)
    spread = sensitivity(ins, dout, ref, 99)
    print("  sensitivity to FP32 rounding: " + "; ".join(f"{label(k)} {spread[k]:.1e}" for k in ["y"] + GRADS))
    for name, fn in impls:
        got = grads(fn, ins, dout, dtype)
        line = []
        for k in ["y"] + GRADS:
            e = rel(got[k], ref[k])
            extra = ""
            if k in mags:
                extra = f" (vs terms' magnitudes {(got[k] - ref[k]).norm().item() / mags[k].norm().item():.1e})"
            line.append(f"{label(k)} {e:.2e}{extra}")
        print(f"  {name:8s} " + "; ".join(line))
    return 0


if __name__ == "__main__":
    main()
