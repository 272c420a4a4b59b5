"""hymo_ref command line.

  python3 -m bench.hymo_ref.cli grads --config CFG [--set k=v]... [--init CKPT] [--save-init CKPT]
                                      --data PATH --precision fp64|fp32 --out OUT.safetensors
  python3 -m bench.hymo_ref.cli train --config CFG [--set k=v]... --data PATH --steps N
                                      [--precision fp32|fp64] [--init CKPT] [--save-init CKPT] [--out DIR]
  python3 -m bench.hymo_ref.cli bench --config CFG --batch B --seq T --steps N [--threads K]
  python3 -m bench.hymo_ref.cli eval  --ckpt CKPT --data PATH [--config CFG] [--max-tokens N]
  python3 -m bench.hymo_ref.cli logits --ckpt CKPT --data PATH --out OUT.safetensors [--config CFG]
  python3 -m bench.hymo_ref.cli compare A.safetensors B.safetensors [--rtol 1e-6] [--prefix grad.]
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

if __package__ in (None, ""):  # run as a script: make `bench.hymo_ref` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    __package__ = "bench.hymo_ref"

# On a small shared machine libgomp's spin-waiting intra-op threads starve
# OpenBLAS's own threads (measured: 2 spinning threads make the small step
# 2x slower, 20x under load).  For `bench` default to passive waiting; it must
# be set before libgomp is loaded, i.e. before `import torch`.
if len(sys.argv) > 1 and sys.argv[1] == "bench":
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

from bench.hymo_ref import checkpoint as CK  # noqa: E402
from bench.hymo_ref import config as C  # noqa: E402
from bench.hymo_ref import data as D  # noqa: E402
from bench.hymo_ref import model as M  # noqa: E402
from bench.hymo_ref import optim as O  # noqa: E402
from bench.hymo_ref import safetensors_io as ST  # noqa: E402

DTYPES = {"fp32": torch.float32, "fp64": torch.float64}


class UsageError(ValueError):
    pass


def _dtype(precision):
    if precision == "fp16":
        raise UsageError("precision fp16 is not supported (use fp32 or fp64)")
    if precision not in DTYPES:
        raise UsageError("hymo_ref runs fp32 or fp64 only, got precision %r" % precision)
    return DTYPES[precision]


def _model_state(args, cfg, dtype):
    """Parameters from --init or the seeded init; writes --save-init."""
    if getattr(args, "init", None):
        # read at the file's own precision (F32 masters, or F64) and cast once to the run's dtype
        _, params, buffers, _ = CK.load_params(args.init, cfg, dtype=None)
    else:
        params, buffers = M.init_params(cfg)
    if getattr(args, "save_init", None):
        CK.save_params(args.save_init, params, buffers, cfg)
    return ({k: v.to(dtype) for k, v in params.items()}, {k: v.to(dtype) for k, v in buffers.items()})


def _batches(cfg, path):
    tr = cfg["training"]
    toks = D.load_tokens(path)
    return D.Batches(toks, tr["seq_len"], tr["micro_batch_size"], vocab_size=cfg["model"]["vocab_size"])


def cmd_grads(args):
    cfg = C.load(args.config, args.set)
    dtype = _dtype(args.precision)
    params, buffers = _model_state(args, cfg, dtype)
    tokens = _batches(cfg, args.data).get(0)
    P = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    out = M.forward(P, buffers, tokens, cfg)
    names = list(P)
    grads = torch.autograd.grad(out["loss"], [P[n] for n in names])
    res = {"loss": out["loss"].detach(), "loss_main": out["loss_main"].detach()}
    for k, l in enumerate(out["loss_mtp"]):
        res["loss_mtp.%d" % k] = l.detach()
    for k, c in out["counts"].items():
        res[k] = c.to(dtype)
    for n, g in zip(names, grads):
        res["grad." + n] = g
    ST.save(res, args.out, {"precision": args.precision, "config": C.dumps(cfg)})
    print(json.dumps({"loss": res["loss"].item(), "loss_main": res["loss_main"].item(),
                      "loss_mtp": [l.item() for l in out["loss_mtp"]], "out": args.out}))


def _save_ckpt(trainer, cfg, path):
    CK.save_params(path, trainer.P, trainer.B, cfg, extra=trainer.state_tensors(),
                   extra_meta={"step": str(trainer.step)},
                   dtype=torch.float64 if trainer.dtype == torch.float64 else torch.float32)


def cmd_train(args):
    cfg = C.load(args.config, args.set)
    dtype = _dtype(args.precision or ("fp64" if cfg["training"]["precision"] == "fp64" else "fp32"))
    if args.threads:
        torch.set_num_threads(args.threads)
    params, buffers = _model_state(args, cfg, dtype)
    data = _batches(cfg, args.data)
    trainer = O.Trainer(cfg, params, buffers, dtype)
    if args.resume:
        ck = _latest_ckpt(args.resume)
        _, p2, b2, tensors = CK.load_params(ck, cfg, dtype=dtype)
        with torch.no_grad():
            for k in trainer.P:
                trainer.P[k].copy_(p2[k])
            for k in trainer.B:
                trainer.B[k].copy_(b2[k])
        trainer.load_state_tensors(tensors)
    metrics = None
    if args.out:
        os.makedirs(os.path.join(args.out, "checkpoints"), exist_ok=True)
        metrics = open(os.path.join(args.out, "metrics.jsonl"), "a" if args.resume else "w")
    rc = 0
    try:
        for _ in range(args.steps):
            try:
                rec = trainer.train_step(data.get)
            except O.NanAbort as e:
                print("error: %s" % e, file=sys.stderr)
                rc = 3
                break
            line = json.dumps(rec)
            print(line, flush=True)
            if metrics:
                metrics.write(line + "\n")
                metrics.flush()
            if args.out and args.save_interval and trainer.step % args.save_interval == 0:
                _save_ckpt(trainer, cfg, os.path.join(args.out, "checkpoints", "step_%d.safetensors" % trainer.step))
    finally:
        if metrics:
            metrics.close()
    if args.out and rc == 0:
        _save_ckpt(trainer, cfg, os.path.join(args.out, "checkpoints", "step_%d.safetensors" % trainer.step))
    return rc


def _latest_ckpt(d):
    cd = os.path.join(d, "checkpoints")
    steps = []
    for f in os.listdir(cd) if os.path.isdir(cd) else []:
        if f.startswith("step_") and f.endswith(".safetensors"):
            try:
                steps.append((int(f[5:-12]), f))
            except ValueError:
                pass
    if not steps:
        raise UsageError("no checkpoint under %s" % cd)
    return os.path.join(cd, max(steps)[1])


def blas_set_threads(k):
    """Set OpenBLAS's thread count (torch.set_num_threads does not reach it).
    Returns True when an OpenBLAS was found."""
    import ctypes
    try:
        with open("/proc/self/maps") as f:
            libs = {l.split()[-1] for l in f if "openblas" in l and ".so" in l}
    except OSError:
        return False
    for lib in sorted(libs):
        try:
            ctypes.CDLL(lib).openblas_set_num_threads(int(k))
            return True
        except (OSError, AttributeError):
            continue
    return False


def _time_steps(cfg, args, intra_op):
    torch.set_num_threads(intra_op)
    params, buffers = M.init_params(cfg)
    trainer = O.Trainer(cfg, params, buffers, torch.float32)
    gen = torch.Generator().manual_seed(1234)
    V = cfg["model"]["vocab_size"]
    batches = [torch.randint(0, V, (args.batch, args.seq), generator=gen) for _ in range(8)]

    def get(j):
        return batches[j % len(batches)]

    for _ in range(args.warmup):
        trainer.train_step(get)
    times = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        trainer.train_step(get)
        times.append(time.perf_counter() - t0)
    return times


def cmd_bench(args):
    """Times the whole FP32 training step (micro-batches, clip, both optimizers,
    gate-bias update).  --threads K: K cores: OpenBLAS gets K threads and
    torch's intra-op pool is tried with K and with 1 thread (the faster one
    is reported: PyTorch at its best on this machine)."""
    cfg = C.load(args.config, list(args.set) + [
        "training.micro_batch_size=%d" % args.batch, "training.seq_len=%d" % args.seq,
        "training.precision=fp32"])
    K = args.threads or os.cpu_count() or 1
    blas = blas_set_threads(K)
    variants = sorted({K, 1}, reverse=True) if args.intra_op is None else [args.intra_op]
    results = {}
    for j in variants:
        times = _time_steps(cfg, args, j)
        results[j] = (statistics.median(times), min(times))
    best = min(results, key=lambda j: results[j][0])
    med, mn = results[best]
    G = cfg["training"]["gradient_accumulation_steps"]
    tok = args.batch * args.seq * G
    print(json.dumps({"impl": "pytorch", "torch": torch.__version__, "config": args.config,
                      "batch": args.batch, "seq": args.seq, "grad_accum": G,
                      "threads": K, "intra_op_threads": best, "openblas_threads": K if blas else None,
                      "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
                      "steps": args.steps, "median_ms": med * 1000.0, "min_ms": mn * 1000.0,
                      "tokens_per_s": tok / med,
                      "median_ms_by_intra_op": {str(j): r[0] * 1000.0 for j, r in results.items()},
                      "loadavg_1m": os.getloadavg()[0]}))


def _eval_batches(cfg, args):
    toks = D.load_tokens(args.data)
    if args.max_tokens:
        toks = toks[: args.max_tokens]
    T = args.seq or cfg["training"]["seq_len"]
    B = args.batch or cfg["training"]["micro_batch_size"]
    R = len(toks) // T
    if R < 1:
        raise D.DataError("%s: fewer tokens than one row of %d" % (args.data, T))
    if int(toks.max()) >= cfg["model"]["vocab_size"]:
        raise D.DataError("%s: token id >= vocab_size" % args.data)
    rows = torch.from_numpy(toks[: R * T].reshape(R, T).copy())
    return [rows[i:i + B] for i in range(0, R, B)]


def cmd_eval(args):
    cfg, params, buffers, _ = CK.load_params(args.ckpt, C.load(args.config) if args.config else None)
    if args.threads:
        torch.set_num_threads(args.threads)
    tot = 0.0
    n = 0
    with torch.no_grad():
        for rows in _eval_batches(cfg, args):
            out = M.forward(params, buffers, rows, cfg)
            k = rows.shape[0] * (rows.shape[1] - 1)
            tot += out["loss_main"].item() * k
            n += k
    loss = tot / n
    print(json.dumps({"loss": loss, "perplexity": math.exp(loss), "tokens": n}))


def cmd_logits(args):
    cfg, params, buffers, _ = CK.load_params(args.ckpt, C.load(args.config) if args.config else None)
    rows = _eval_batches(cfg, args)[0]
    with torch.no_grad():
        out = M.forward(params, buffers, rows, cfg, want_logits=True)
    ST.save({"logits": out["logits"], "tokens": rows.to(torch.int64), "loss": out["loss"],
             "loss_main": out["loss_main"]}, args.out)
    print(json.dumps({"loss": out["loss"].item(), "loss_main": out["loss_main"].item(), "out": args.out}))


def cmd_compare(args):
    """Compare two safetensors files tensor by tensor (e.g. hymo's grads vs
    ours): per tensor rel = max|a-b| / max(max|b|, 1e-300); fails when any
    rel > --rtol or a name/shape differs.  Prints one JSON line."""
    a, b = ST.load(args.a), ST.load(args.b)
    names = sorted(set(a) | set(b))
    if args.prefix:
        names = [n for n in names if n.startswith(tuple(args.prefix))]
    worst, bad = [], []
    for n in names:
        if n not in a or n not in b:
            bad.append("%s: only in %s" % (n, args.a if n in a else args.b))
            continue
        x, y = a[n].to(torch.float64), b[n].to(torch.float64)
        if x.shape != y.shape:
            bad.append("%s: shape %s vs %s" % (n, list(x.shape), list(y.shape)))
            continue
        den = max(y.abs().max().item() if y.numel() else 0.0, 1e-300)
        rel = (x - y).abs().max().item() / den if y.numel() else 0.0
        worst.append((rel, n))
        if not rel <= args.rtol:
            bad.append("%s: rel %.3e > %.1e" % (n, rel, args.rtol))
    worst.sort(reverse=True)
    print(json.dumps({"compared": len(worst), "max_rel": worst[0][0] if worst else 0.0,
                      "worst": [n for _, n in worst[:5]], "failures": bad[:20], "ok": not bad}))
    return 0 if not bad else 1


def main(argv=None):
    ap = argparse.ArgumentParser(prog="hymo_ref", description="PyTorch reference of HyMo (spec HYMO.md)")
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p, data=True):
        p.add_argument("--config", required=True)
        p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
        if data:
            p.add_argument("--data", required=True)

    p = sub.add_parser("grads", help="step-0 loss and every gradient of the first micro-batch")
    common(p)
    p.add_argument("--init")
    p.add_argument("--save-init")
    p.add_argument("--precision", default="fp64")
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_grads)

    p = sub.add_parser("train", help="train N optimizer steps")
    common(p)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--precision")
    p.add_argument("--init")
    p.add_argument("--save-init")
    p.add_argument("--out")
    p.add_argument("--resume")
    p.add_argument("--save-interval", type=int, default=1000)
    p.add_argument("--threads", type=int)
    p.set_defaults(fn=cmd_train)

    p = sub.add_parser("bench", help="time the whole CPU training step (FP32)")
    common(p, data=False)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--seq", type=int, required=True)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, help="cores to use (default: all)")
    p.add_argument("--intra-op", type=int, help="only this torch intra-op thread count")
    p.set_defaults(fn=cmd_bench)

    for name, fn in (("eval", cmd_eval), ("logits", cmd_logits)):
        p = sub.add_parser(name, help="loss + perplexity" if name == "eval" else "first batch's logits")
        p.add_argument("--ckpt", required=True)
        p.add_argument("--data", required=True)
        p.add_argument("--config", help="override the config stored in the checkpoint")
        p.add_argument("--max-tokens", type=int)
        p.add_argument("--seq", type=int)
        p.add_argument("--batch", type=int)
        p.add_argument("--threads", type=int)
        if name == "logits":
            p.add_argument("--out", required=True)
        p.set_defaults(fn=fn)

    p = sub.add_parser("compare", help="compare two safetensors files (max-abs relative per tensor)")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rtol", type=float, default=1e-6)
    p.add_argument("--prefix", action="append", help="only names with this prefix (repeatable)")
    p.set_defaults(fn=cmd_compare)

    args = ap.parse_args(argv)
    try:
        return args.fn(args) or 0
    except (UsageError, C.ConfigError, D.DataError, CK.CheckpointError, ST.SafetensorsError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
