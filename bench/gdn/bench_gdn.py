#!/usr/bin/env python3
"""PyTorch baselines for the GDN recurrence (spec 2.1), timed in the same device run
as ours (kernels/gdn, run through its benchmark binary with --json).

Prints, per shape: ours, a PyTorch chunked implementation (eager and torch.compile),
flash-linear-attention's Triton `chunk_gla` for the recurrence with the prologue and
epilogue in PyTorch (eager and torch.compile; when the `fla` package imports: see
bench/gdn/fetch-wheels.sh) and, for small T, the naive sequential loop; each as ms and
as a ratio to ours (fwd and fwd+bwd), each timed twice: from an idle GPU (the host's work
before the first kernel included) and "held" (the stream held by a spin kernel until the call is
queued: the GPU's work alone). Then the sweep over T, H and D=S from our binary.

Usage: python3 bench/gdn/bench_gdn.py --ours build-dev/kernels/gdn/hymo_gdn_bench [--quick]
"""
import argparse
import json
import math
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

EPS = 1e-6


def prologue(gate_raw, dt_bias, A_log):
    g = torch.sigmoid(gate_raw.to(dt_bias.dtype) + dt_bias)  # (B,T,H)
    A = -torch.exp(A_log)                                    # (H,S)
    return g, A


def epilogue(o, v, z, D_skip, w_y):
    y = o + D_skip[:, None] * v.to(o.dtype)
    y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + EPS) * w_y
    return (y * F.silu(z.to(o.dtype))).to(v.dtype)


def gdn_naive(v, b, c, gate_raw, z, dt_bias, A_log, D_skip, w_y):
    """The definition: one step per token."""
    g, A = prologue(gate_raw, dt_bias, A_log)
    B, T, H, D = v.shape
    S = b.shape[-1]
    ft = torch.float64 if v.dtype == torch.float64 else torch.float32
    h = v.new_zeros(B, H, S, D, dtype=ft)
    outs = []
    for t in range(T):
        a = torch.exp(g[:, t, :, None] * A)                  # (B,H,S)
        h = a[..., None] * h + b[:, t].to(ft)[..., None] * v[:, t].to(ft)[..., None, :]
        outs.append(torch.einsum('bhs,bhsd->bhd', c[:, t].to(ft), h))
    o = torch.stack(outs, 1)
    return epilogue(o, v, z, D_skip, w_y)


def gdn_chunked(v, b, c, gate_raw, z, dt_bias, A_log, D_skip, w_y, C=64):
    """Chunked form: intra-chunk masked products with exact pairwise decays
    (exponents masked to -inf above the diagonal, so never exp of a positive
    number), carried state between chunks."""
    g, A = prologue(gate_raw, dt_bias, A_log)
    B, T, H, D = v.shape
    S = b.shape[-1]
    pad = (-T) % C
    if pad:
        v, b, c = (F.pad(x, (0, 0, 0, 0, 0, pad)) for x in (v, b, c))
        g = F.pad(g, (0, 0, 0, pad))
    NC = (T + pad) // C
    ft = torch.float64 if v.dtype == torch.float64 else torch.float32
    vf = v.to(ft).view(B, NC, C, H, D).permute(0, 3, 1, 2, 4)         # B H N C D
    bf = b.to(ft).view(B, NC, C, H, S).permute(0, 3, 1, 2, 4)         # B H N C S
    cf = c.to(ft).view(B, NC, C, H, S).permute(0, 3, 1, 2, 4)
    G = g.view(B, NC, C, H).permute(0, 3, 1, 2).cumsum(-1)           # B H N C
    L = G[..., None] * A[None, :, None, None, :]                      # B H N C S (<= 0)
    mask = torch.ones(C, C, dtype=torch.bool, device=v.device).tril()
    diff = L[..., :, None, :] - L[..., None, :, :]                    # B H N C C S
    diff = diff.masked_fill(~mask[..., None], float('-inf'))
    P = torch.einsum('bhnts,bhnus,bhntus->bhntu', cf, bf, torch.exp(diff))
    o = P @ vf                                                        # B H N C D
    Llast = L[..., -1:, :]
    kl = bf * torch.exp(Llast - L)                                    # <= 1
    Hloc = kl.transpose(-1, -2) @ vf                                  # B H N S D
    # States entering each chunk without a Python loop over chunks (a loop of 64 steps
    # made torch.compile take minutes): h_in[n] = sum_{m<n} exp(Lin[n] - Lcum[m]) Hloc[m],
    # Lcum the inclusive cumulative chunk log-decay, Lin the exclusive one; exponents
    # <= 0, masked to -inf for m >= n; the cumulative sums in FP64 (they reach -1e5).
    Lc = Llast[..., 0, :].double()                                    # B H N S
    Lcum = Lc.cumsum(2)
    Lin = Lcum - Lc
    W = Lin[:, :, :, None, :] - Lcum[:, :, None, :, :]                # B H N M S
    before = torch.ones(NC, NC, dtype=torch.bool, device=v.device).tril(-1)
    W = torch.exp(W.masked_fill(~before[..., None], float('-inf'))).to(ft)
    hin = torch.einsum('bhnms,bhmsd->bhnsd', W, Hloc)                 # B H N S D
    o = o + (cf * torch.exp(L)) @ hin
    o = o.permute(0, 2, 3, 1, 4).reshape(B, NC * C, H, D)[:, :T]
    return epilogue(o, v[:, :T], z, D_skip, w_y)


def gdn_fla(v, b, c, gate_raw, z, dt_bias, A_log, D_skip, w_y):
    """flash-linear-attention's chunk_gla (Triton; GLA with per-channel decay is this
    recurrence with q = c, k = b and log-decay g_t A_s), prologue and epilogue in
    PyTorch. FLA's API takes the log-decay as a [B,T,H,S] FP32 tensor, which this
    materialises (ours never does)."""
    from fla.ops.gla import chunk_gla
    g, A = prologue(gate_raw, dt_bias, A_log)
    gk = g[..., None] * A[None, None]                                 # B T H S
    o, _ = chunk_gla(c, b, v, gk, scale=1.0)
    return epilogue(o.float(), v, z, D_skip, w_y)


def time_fla_core(shape, reps):
    """FLA's chunk_gla alone (the recurrence, on c, b, v and a precomputed [B,T,H,S]
    log-decay; no prologue or epilogue; backward to all four): a lower bound of what
    the Triton kernels take for this op, against ours with both fused in."""
    from fla.ops.gla import chunk_gla
    B, T, H, D, S = shape
    sets = []
    for i in range(2):
        v, b, c, gate, z, dt_bias, A_log, D_skip, w_y = make_inputs(B, T, H, D, S, 'cuda', seed=i)
        g, A = prologue(gate, dt_bias, A_log)
        gk = (g[..., None] * A[None, None]).contiguous()
        sets.append([t.detach().clone().requires_grad_(True) for t in (c, b, v, gk)])
    do = torch.randn(B, T, H, D, device='cuda').to(torch.bfloat16)
    it = [0]

    def fwd():
        x = sets[it[0] % 2]
        it[0] += 1
        with torch.no_grad():
            chunk_gla(*x, scale=1.0)

    def fwdbwd():
        x = sets[it[0] % 2]
        it[0] += 1
        o, _ = chunk_gla(*x, scale=1.0)
        o.backward(do)

    f = timeit(fwd, reps, label='fla_chunk_gla_core_only forward')
    fb = timeit(fwdbwd, reps, label='fla_chunk_gla_core_only forward + backward')
    return f[0], fb[0], f[1], fb[1]


def have_fla():
    try:
        from fla.ops.gla import chunk_gla  # noqa: F401
        return True
    except Exception as e:  # not installed, or does not import here
        print(f'flash-linear-attention not available ({repr(e)[:120]}): its rows are skipped')
        return False


def make_inputs(B, T, H, D, S, dev, seed=0):
    gen = torch.Generator(device=dev).manual_seed(seed)
    r = lambda *s, sc=1.0: (torch.randn(*s, generator=gen, device=dev) * sc).to(torch.bfloat16)
    v, z = r(B, T, H, D), r(B, T, H, D)
    b, c = r(B, T, H, S, sc=0.2), r(B, T, H, S, sc=0.2)
    gate = r(B, T, H)
    dt_bias = torch.zeros(H, device=dev)
    A_log = torch.log(torch.arange(H, device=dev, dtype=torch.float32) % 28 + 1)[:, None].repeat(1, S)
    D_skip = torch.ones(H, device=dev)
    w_y = torch.ones(D, device=dev)
    return [v, b, c, gate, z, dt_bias, A_log, D_skip, w_y]


_cycles_per_ms = None


def median(xs):
    return sorted(xs)[len(xs) // 2]


def cycles_per_ms():
    """torch.cuda._sleep's spin cycles a millisecond on this GPU (measured once)."""
    global _cycles_per_ms
    if _cycles_per_ms is None:
        torch.cuda._sleep(1000)
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        torch.cuda._sleep(20_000_000)
        e1.record()
        e1.synchronize()
        _cycles_per_ms = 20_000_000 / e0.elapsed_time(e1)
    return _cycles_per_ms


def timeit(fn, reps, warm=2, label='a call'):
    """CUDA-event medians of fn() over reps calls, twice: (idle, held). idle: each call from an
    idle GPU, so the time includes the host's work until its first kernel is queued (as in our
    benchmark's fwd_ms); held: the stream held by a spin kernel until the whole call is queued,
    so the time is the GPU's work alone (as our fwd_held_ms). A held call whose queueing took
    over half the hold is repeated with a longer hold; where even a 2 s hold is not enough (the
    host waited on the GPU: a call that synchronises, or more launches than a held stream's queue
    takes), held is nan."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    idle, held = [], []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        idle.append(e0.elapsed_time(e1))
    cpm, hold_ms = cycles_per_ms(), 2.0
    for _ in range(reps):
        while True:
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(int(hold_ms * cpm))
            t0 = time.perf_counter()
            e0.record()
            fn()
            e1.record()
            host_ms = (time.perf_counter() - t0) * 1e3
            e1.synchronize()
            if host_ms < 0.5 * hold_ms:
                held.append(e0.elapsed_time(e1))
                break
            if hold_ms >= 2000.0:  # (the host waits on the GPU: a longer hold would not help)
                print(f'  ({label}: {host_ms:.0f} ms to queue under a {hold_ms:.0f} ms hold, so the host '
                      'waited on the GPU (a synchronising call or a full launch queue): no held figure)')
                return median(idle), float('nan')
            hold_ms = min(4 * host_ms + 1.0, 2000.0)
    return median(idle), median(held)


def time_impl(impl, shape, reps, bwd=True, label='impl'):
    B, T, H, D, S = shape
    sets = [make_inputs(B, T, H, D, S, 'cuda', seed=i) for i in range(2)]
    it = [0]

    def fwd():
        x = sets[it[0] % 2]
        it[0] += 1
        with torch.no_grad():
            impl(*x)

    gsets = []
    for x in sets:
        xs = [t.clone().requires_grad_(True) if t.dtype == torch.bfloat16 or t.dim() > 0 else t for t in x]
        gsets.append(xs)
    dy = torch.randn(B, T, H, D, device='cuda').to(torch.bfloat16)

    def fwdbwd():
        x = gsets[it[0] % 2]
        it[0] += 1
        y = impl(*x)
        y.backward(dy)

    f = timeit(fwd, reps, label=f'{label} forward')
    fb = timeit(fwdbwd, reps, label=f'{label} forward + backward') if bwd else (float('nan'), float('nan'))
    return f[0], fb[0], f[1], fb[1]


def ours(binary, shapes):
    res = {}
    for sh in shapes:
        out = subprocess.run([binary, '--json', '--iters', '30', '--shape', ','.join(map(str, sh))],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith('{'):
                j = json.loads(line)
                res[sh] = j
    return res


# the baselines timed beside ours, in the tables' order (--impls picks some)
BASELINES = ('torch_chunked_eager', 'torch_chunked_compile', 'fla_chunk_gla_eager',
             'fla_chunk_gla_compile', 'fla_chunk_gla_core_only', 'torch_naive_loop')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ours', required=True)
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--sweep-json', help='output of hymo_gdn_bench --json (skip re-running the sweep)')
    ap.add_argument('--shape', action='append', metavar='B,T,H,D,S',
                    help='compare on this shape only (repeatable; replaces --quick\'s and the full list, no sweep)')
    ap.add_argument('--impls', metavar='A,B,...',
                    help=f'time only these baselines (ours always runs): {", ".join(BASELINES)} '
                         '(default: all; at D = S = 128 the chunked form\'s [B,H,N,C,C,S] decay tensor '
                         'alone is 15 GB at the default B, T, H)')
    args = ap.parse_args()
    custom = []
    for sh in args.shape or []:
        try:
            custom.append(tuple(int(v) for v in sh.split(',')))
        except ValueError:
            ap.error(f'--shape {sh}: five integers B,T,H,D,S')
        if len(custom[-1]) != 5 or min(custom[-1]) < 1:
            ap.error(f'--shape {sh}: five positive integers B,T,H,D,S')
    want = set(BASELINES)
    if args.impls:
        want = set(x for x in args.impls.split(',') if x)
        bad = sorted(want - set(BASELINES))
        if bad:
            ap.error(f'--impls: unknown {", ".join(bad)} (known: {", ".join(BASELINES)})')
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.cuda.get_device_name()
    print(f'device: {dev}, torch {torch.__version__}')

    # sanity: chunked == naive on a small problem
    x = make_inputs(1, 100, 2, 32, 32, 'cuda', seed=3)
    x64 = [t.double() for t in x]
    err = ((gdn_chunked(*x64).double() - gdn_naive(*x64).double()).norm() /
           gdn_naive(*x64).double().norm()).item()
    print(f'torch chunked vs naive (fp64 math, bf16 out): rel {err:.2e}')

    fla = have_fla()
    if fla:
        import fla as fla_pkg
        # FLA on this benchmark's decays (A_s down to -28, so log-decays to -28 a step):
        # its output against the FP64 chunked form
        x = make_inputs(1, 512, 28, 32, 32, 'cuda', seed=4)
        ref = gdn_chunked(*[t.double() for t in x]).double()
        got = gdn_fla(*x).double()
        err = ((got - ref).norm() / ref.norm()).item()
        print(f'flash-linear-attention {fla_pkg.__version__} chunk_gla vs fp64 chunked (T=512, H=28): '
              f'rel {err:.2e}{"" if math.isfinite(err) else " (non-finite: its numbers are not valid here)"}')
        fla_compiled = torch.compile(gdn_fla, dynamic=False)

    default = (4, 4096, 28, 32, 32)
    small = (4, 256, 28, 32, 32)
    base_shapes = [default, small] if args.quick else [default, small, (4, 1024, 28, 32, 32), (4, 4096, 64, 32, 32), (4, 4096, 28, 64, 64)]
    if args.shape:
        base_shapes = custom

    if not args.quick and not args.shape:  # ours over the sweep first: it is quick, and a timeout later keeps it
        print('\nsweep (ours):')
        if args.sweep_json:
            out = open(args.sweep_json).read()
        else:
            out = subprocess.run([args.ours, '--json', '--iters', '30'], capture_output=True, text=True, check=True).stdout
        print('| B | T | H | D=S | fwd ms | fwd+bwd ms | floor fwd | floor fwd+bwd | fwd x floor | fwd+bwd x floor '
              '| held fwd ms | held fwd+bwd ms |')
        print('|---|---|---|---|---|---|---|---|---|---|---|---|')
        for line in out.splitlines():
            if line.startswith('{'):
                j = json.loads(line)
                print(f"| {j['B']} | {j['T']} | {j['H']} | {j['D']} | {j['fwd_ms']:.4f} | {j['fwd_bwd_ms']:.4f} | "
                      f"{j['floor_ms']:.4f} | {j['floor_fwd_bwd_ms']:.4f} | {j['fwd_x_floor']:.2f} | {j['fwd_bwd_x_floor']:.2f} | "
                      f"{j.get('fwd_held_ms', float('nan')):.4f} | {j.get('fwd_bwd_held_ms', float('nan')):.4f} |")
        sys.stdout.flush()

    # idle: each call timed from an idle GPU (the host's launch work included); held: the stream
    # held until the call is queued (the GPU's work alone; timeit)
    header = ('| B,T,H,D,S | impl | fwd ms | fwd x ours | fwd+bwd ms | fwd+bwd x ours '
              '| held fwd ms | x ours | held fwd+bwd ms | x ours |\n'
              '|---|---|---|---|---|---|---|---|---|---|')
    impls = ('ours',) + BASELINES

    def table_rows(e):
        of, ofb, ofh, ofbh = e['ours']
        for k in impls:
            if k in e:
                f, fb, fh, fbh = e[k]
                print(f"| {','.join(map(str, e['shape']))} | {k} | {f:.3f} | {f / of:.1f} | {fb:.3f} | {fb / ofb:.1f} "
                      f"| {fh:.3f} | {fh / ofh:.1f} | {fbh:.3f} | {fbh / ofbh:.1f} |")

    o = ours(args.ours, base_shapes)
    compiled = torch.compile(gdn_chunked, dynamic=False)
    rows = []
    t_start = time.monotonic()

    def starting(impl, sh):
        # progress: which timing runs now (a call cut off by a timeout says where it was; the first
        # call of a Triton or torch.compile path compiles and autotunes, minutes at D = S = 128)
        print(f'  ({time.monotonic() - t_start:.0f} s) timing {impl} at {",".join(map(str, sh))}', flush=True)

    for sh in base_shapes:
        us = o[sh]
        nan = float('nan')  # (a binary from before session 55 has no held figures)
        entry = {'shape': sh, 'ours': (us['fwd_ms'], us['fwd_bwd_ms'], us.get('fwd_held_ms', nan),
                                       us.get('fwd_bwd_held_ms', nan))}

        def timed(name, impl, reps=5):  # entry[name]: impl timed at sh (time_impl), after a progress line
            starting(name, sh)
            entry[name] = time_impl(impl, sh, reps, label=name)

        if 'torch_chunked_eager' in want:
            timed('torch_chunked_eager', gdn_chunked)
            print(f'{sh}: eager {entry["torch_chunked_eager"]}', flush=True)
        if sh in (default, small) and 'torch_chunked_compile' in want:
            try:
                timed('torch_chunked_compile', compiled)
            except Exception as e:  # keep the run going
                print('torch.compile failed:', repr(e)[:200])
        if fla:
            if 'fla_chunk_gla_eager' in want:
                timed('fla_chunk_gla_eager', gdn_fla)
            if sh in (default, small) and 'fla_chunk_gla_compile' in want:
                try:
                    timed('fla_chunk_gla_compile', fla_compiled)
                except Exception as e:
                    print('torch.compile around FLA failed:', repr(e)[:200])
            if 'fla_chunk_gla_core_only' in want:
                starting('fla_chunk_gla_core_only', sh)
                entry['fla_chunk_gla_core_only'] = time_fla_core(sh, 5)
        if sh[1] <= 256 and 'torch_naive_loop' in want:
            timed('torch_naive_loop', gdn_naive, reps=3)
        rows.append(entry)
        # (strict JSON: a missing figure is null, not NaN)
        print(json.dumps({'shape': sh, **{k: [None if isinstance(x, float) and math.isnan(x) else x for x in v]
                                          for k, v in entry.items() if k != 'shape'}}))
        print(header)  # this shape's rows now (a timeout later keeps them)
        table_rows(entry)
        sys.stdout.flush()

    print('\nall shapes:')
    print(header)
    for e in rows:
        table_rows(e)


if __name__ == '__main__':
    main()
