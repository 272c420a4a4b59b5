#!/usr/bin/env python3
"""hymo vs the PyTorch reference (bench/hymo_ref), FP64, from the same init.

Compiles CONFIG to an FP64 plan, draws the reference's init, feeds the same
parameters and the first micro-batch of DATA (spec §5 batch order) to both,
and compares the step-0 losses and every parameter gradient:
||hymo - torch|| / ||torch|| < --tol (1e-6) per tensor.

  crosscheck.py --hymo-opt BIN --hymo-run BIN --config CFG --data FILE --work DIR
Exit status 0 when everything matches, 1 on a mismatch, 77 when torch is
missing (ctest counts that as skipped).
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print("crosscheck: skipping, PyTorch/numpy not importable: %s" % e)
    sys.exit(77)

from bench.hymo_ref import config as C  # noqa: E402
from bench.hymo_ref import data as D  # noqa: E402
from bench.hymo_ref import model as M  # noqa: E402


def rel(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hymo-opt", required=True)
    ap.add_argument("--hymo-run", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    sets = ["training.precision=fp64"] + args.set

    plan = os.path.join(args.work, "plan.json")
    subprocess.run([args.hymo_opt, "--hymo-model=" + args.config]
                   + ["--hymo-set=" + s for s in sets]
                   + ["--hymo-autodiff", "--hymo-emit-plan=output=" + plan, "-o", os.devnull],
                   check=True)

    torch.set_default_dtype(torch.float64)
    cfg = C.load(args.config, sets)
    params, buffers = M.init_params(cfg)
    params = {k: v.double() for k, v in params.items()}
    buffers = {k: v.double() for k, v in buffers.items()}
    tr = cfg["training"]
    tokens = D.Batches(D.load_tokens(args.data), tr["seq_len"], tr["micro_batch_size"],
                       vocab_size=cfg["model"]["vocab_size"]).get(0)

    P = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    out = M.forward(P, buffers, tokens, cfg)
    names = list(P)
    grads = torch.autograd.grad(out["loss"], [P[n] for n in names])
    ref = {"loss": out["loss"].item(), "loss_main": out["loss_main"].item()}
    for k, l in enumerate(out["loss_mtp"]):
        ref["loss_mtp.%d" % k] = l.item()

    cmd = [args.hymo_run, "exec", plan, "--function", "forward_grad"]
    npy = os.path.join(args.work, "npy")
    os.makedirs(npy, exist_ok=True)
    for name, t in list(params.items()) + list(buffers.items()):
        f = os.path.join(npy, name + ".npy")
        np.save(f, t.numpy())
        cmd += ["--input", "%s=%s" % (name, f)]
    np.save(os.path.join(npy, "tokens.npy"), tokens.numpy().astype(np.int32))
    cmd += ["--input", "tokens=" + os.path.join(npy, "tokens.npy")]
    outs = {}
    for n in list(ref) + ["grad." + n for n in names]:
        f = os.path.join(npy, "out." + n + ".npy")
        outs[n] = f
        cmd += ["--save", "forward_grad:%s=%s" % (n, f)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)

    worst, failed = 0.0, []
    for n, v in ref.items():
        e = rel(np.load(outs[n]), v)
        worst = max(worst, e)
        print("%-8s %-44s hymo %.15g torch %.15g rel %.2e"
              % ("ok" if e < args.tol else "FAIL", n, float(np.load(outs[n])), v, e))
        if not e < args.tol:
            failed.append(n)
    for n, g in zip(names, grads):
        e = rel(np.load(outs["grad." + n]), g.numpy())
        worst = max(worst, e)
        print("%-8s grad.%-39s rel %.2e" % ("ok" if e < args.tol else "FAIL", n, e))
        if not e < args.tol:
            failed.append("grad." + n)
    print("crosscheck: %d tensors, worst relative error %.2e, %d above %.0e"
          % (len(ref) + len(names), worst, len(failed), args.tol))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
