#!/usr/bin/env python3
"""Would TF32 operands keep the BF16 path's gradients within tolerance? (An emulation, CPU.)

The staged backward main kernel (docs/kernels/gdn.md, "Backward main kernel") feeds its tensor-core
products FP32-accurate operands as BF16 high and low parts (about 16 bits of mantissa): the
gradient of o (dO), the entering states (h) and the adjoints (dh). Each such product costs two or
three BF16 mma instructions and a split (two conversions and a subtraction) an element. Session 32's
run 240 dropped dO's low part: db and dc then reached 1.0-1.1e-2 on fresh seeds against the 1e-2
tolerance, and the change was removed. TF32 operands (10 bits, one m16n8k8 mma per k = 8, no split)
sit between the two. Before any kernel is written for them, this script asks how far each operand
precision moves the gradients.

It evaluates the recurrence of spec 2.1 one step per token in FP64 (no chunking), with the fused
prologue and epilogue by autograd, and a hand-written backward of the recurrence whose products
read dO, h and dh rounded to a given precision (every step's state and adjoint, which is more
rounding than the kernel does: its intra-chunk terms read BF16 inputs exactly). The decay
gradients go through the kernel's identity q_t = c_t dc_t - b_t db_t (their suffix sums give
dg, their G-weighted sums dA). Inputs are drawn as kernels/gdn/gdn_test.cc draws its BF16 cases and
rounded to BF16 where the kernel's contract has BF16. Per precision and gradient it prints the
largest relative error ||x - ref|| / ||ref|| over the seeds, against FP64 autograd on the same
inputs.

Precisions: exact (the hand-written backward unrounded: checks it against autograd), hilo (BF16 high + low parts: today's kernel), bf16-dO (dO's high part only, h and dh
high + low: run 240's variant), tf32-dO, tf32-h, tf32-dh (that operand rounded to TF32 to nearest,
as cvt.rna.tf32 does, the others high + low), tf32-rn (all three), tf32-rz (all three truncated:
FP32 bits fed to a .tf32 mma without a conversion). dO's rounding reaches the adjoints too (the
kernel's adjoint update reads the same dO tiles). o-bf16: the operands high + low, and o (the
recurrence's output before the epilogue, which the training forward leaves in FP32 for the
adjoint pass's epilogue backward) rounded to BF16 where that backward reads it.

Usage: /usr/bin/python3 bench/gdn/operand_precision.py [--seeds 6] [--T 320] [--H 4]
(CPU, PyTorch; about a minute at the defaults on two cores.)
"""
import argparse
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gdn import epilogue, gdn_naive, prologue  # noqa: E402

f64 = torch.float64


def bf16(x):
    return x.to(torch.float32).to(torch.bfloat16).to(f64)


def hilo(x):
    hi = bf16(x)
    return hi + bf16(x - hi)


def tf32(x, nearest):
    i = x.to(torch.float32).contiguous().view(torch.int32)
    if nearest:  # to nearest, ties away from zero (cvt.rna.tf32.f32)
        i = i + 0x1000
    i = i & ~0x1FFF
    return i.view(torch.float32).to(f64)


def tf32_rn(x):
    return tf32(x, True)


def tf32_rz(x):  # truncated: FP32 bits fed to a .tf32 mma
    return tf32(x, False)


def ident(x):
    return x


MODES = {
    'exact': dict(dO=ident, h=ident, dh=ident),  # the hand-written backward unrounded, against autograd
    'hilo': dict(dO=hilo, h=hilo, dh=hilo),
    'bf16-dO': dict(dO=bf16, h=hilo, dh=hilo),
    'tf32-dO': dict(dO=tf32_rn, h=hilo, dh=hilo),
    'tf32-h': dict(dO=hilo, h=tf32_rn, dh=hilo),
    'tf32-dh': dict(dO=hilo, h=hilo, dh=tf32_rn),
    'tf32-rn': dict(dO=tf32_rn, h=tf32_rn, dh=tf32_rn),
    'tf32-rz': dict(dO=tf32_rz, h=tf32_rz, dh=tf32_rz),
    # o (the recurrence's output, before the epilogue) kept in BF16 for the epilogue's backward
    # (the training forward leaves it in FP32 for the adjoint pass today), operands high + low
    'o-bf16': dict(dO=hilo, h=hilo, dh=hilo, o=bf16),
}


class Core(torch.autograd.Function):
    """o_t = h_t^T c_t, h_t = exp(g_t A) h_{t-1} + b_t v_t^T (FP64); the backward's products read
    dO, h and dh through the rounding functions of `mode`."""

    @staticmethod
    def forward(ctx, b, c, v, g, A, mode):
        B, T, H, S = b.shape
        D = v.shape[-1]
        h = b.new_zeros(B, H, S, D)
        hs, os_ = [], []
        for t in range(T):
            a = torch.exp(g[:, t, :, None] * A)  # (B,H,S)
            h = a[..., None] * h + b[:, t, :, :, None] * v[:, t, :, None, :]
            hs.append(h)
            os_.append(torch.einsum('bhs,bhsd->bhd', c[:, t], h))
        ctx.save_for_backward(b, c, v, g, A, torch.stack(hs, 1))
        ctx.mode = mode
        return torch.stack(os_, 1)

    @staticmethod
    def backward(ctx, dO):
        b, c, v, g, A, hs = ctx.saved_tensors
        rd = MODES[ctx.mode]
        B, T, H, S = b.shape
        dOr, hr = rd['dO'](dO), rd['h'](hs)
        dc = torch.einsum('bthsd,bthd->bths', hr, dOr)
        db = torch.empty_like(b)
        dv = torch.empty_like(v)
        dh = b.new_zeros(B, H, S, v.shape[-1])
        for t in range(T - 1, -1, -1):
            if t + 1 < T:
                dh = torch.exp(g[:, t + 1, :, None] * A)[..., None] * dh
            # the adjoint accumulates in FP64 (FP32 in the kernel) from the operands' dO
            dh = dh + c[:, t, :, :, None] * dOr[:, t, :, None, :]
            dhr = rd['dh'](dh)
            db[:, t] = torch.einsum('bhsd,bhd->bhs', dhr, v[:, t])
            dv[:, t] = torch.einsum('bhsd,bhs->bhd', dhr, b[:, t])
        # the decay gradients through q = c dc - b db (the kernel's tail): dL / d(G_t A_s) = q_t[s]
        q = c * dc - b * db  # (B,T,H,S)
        dG = torch.einsum('bths,hs->bth', q, A)  # dL / dG_t
        dg = dG.flip(1).cumsum(1).flip(1)  # G_t = sum_{u <= t} g_u
        G = g.cumsum(1)
        dA = torch.einsum('bths,bth->hs', q, G)
        return db, dc, dv, dg, dA, None


def gdn_emulated(v, b, c, gate_raw, z, dt_bias, A_log, D_skip, w_y, mode):
    g, A = prologue(gate_raw, dt_bias, A_log)
    o = Core.apply(b, c, v, g, A, mode)
    ro = MODES[mode].get('o')
    if ro is None:
        return epilogue(o, v, z, D_skip, w_y)
    # the forward's y from o itself, the backward through the epilogue evaluated at the rounded o
    o_r = o + (ro(o) - o).detach()
    y_r = epilogue(o_r, v, z, D_skip, w_y)
    return y_r + (epilogue(o, v, z, D_skip, w_y) - y_r).detach()


def draw(B, T, H, D, S, alog, gen):
    n = lambda *s, m=0.0, sc=1.0: m + sc * torch.randn(*s, generator=gen, dtype=f64)
    x = dict(v=n(B, T, H, D), b=n(B, T, H, S, sc=1 / math.sqrt(S)), c=n(B, T, H, S, sc=1 / math.sqrt(S)),
             gate_raw=n(B, T, H), z=n(B, T, H, D), dt_bias=n(H, sc=0.3), D_skip=n(H, m=1.0, sc=0.2),
             w_y=n(D, m=1.0, sc=0.2))
    if alog == 'spec':  # the spec's initialisation: A = -1 .. -H across the heads (down to -28 a step)
        x['A_log'] = torch.log(torch.arange(1, H + 1, dtype=f64))[:, None].expand(H, S).clone()
    else:
        x['A_log'] = alog * torch.rand(H, S, generator=gen, dtype=f64)
    for k in ('v', 'b', 'c', 'gate_raw', 'z'):  # the kernel's BF16 inputs
        x[k] = bf16(x[k])
    for k in ('dt_bias', 'A_log', 'D_skip', 'w_y'):  # FP32 parameters
        x[k] = x[k].to(torch.float32).to(f64)
    dout = bf16(n(B, T, H, D))
    return x, dout


NAMES = ['v', 'b', 'c', 'gate_raw', 'z', 'dt_bias', 'A_log', 'D_skip', 'w_y']


def grads(fn, x, dout):
    xs = {k: t.clone().requires_grad_(True) for k, t in x.items()}
    y = fn(**xs)
    (y * dout).sum().backward()
    return {k: xs[k].grad for k in NAMES}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--seeds', type=int, default=6)
    ap.add_argument('--T', type=int, default=320)
    ap.add_argument('--H', type=int, default=4)
    ap.add_argument('--B', type=int, default=2)
    args = ap.parse_args()
    if min(args.seeds, args.T, args.H, args.B) < 1:
        ap.error('--seeds, --T, --H and --B must be positive')
    torch.set_num_threads(2)
    D = S = 32
    for alog in (math.log(16.0), 'spec'):
        worst = {m: {k: 0.0 for k in NAMES} for m in MODES}
        for seed in range(args.seeds):
            gen = torch.Generator().manual_seed(1000 + seed)
            x, dout = draw(args.B, args.T, args.H, D, S, alog, gen)
            ref = grads(gdn_naive, x, dout)
            for m in MODES:
                got = grads(lambda **k: gdn_emulated(**k, mode=m), x, dout)
                for k in NAMES:
                    e = (got[k] - ref[k]).norm().item() / max(ref[k].norm().item(), 1e-300)
                    worst[m][k] = max(worst[m][k], e)
        label = 'A_log ~ U(0, log 16)' if alog != 'spec' else 'A_log = log(h + 1) (the spec, A down to -H)'
        print(f'B={args.B} T={args.T} H={args.H} D=S={D}, {label}, {args.seeds} seeds: '
              'the largest ||x - ref|| / ||ref|| (tolerance 1e-2)')
        print('| precision | ' + ' | '.join('d' + k for k in NAMES) + ' |')
        print('|---' * (len(NAMES) + 1) + '|')
        for m, row in worst.items():
            print(f'| {m} | ' + ' | '.join(f'{row[k]:.1e}' for k in NAMES) + ' |')
        print(flush=True)


if __name__ == '__main__':
    main()
