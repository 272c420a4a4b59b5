#!/usr/bin/env python3
"""Whole training steps, hymo vs the PyTorch reference (bench/hymo_ref), FP64.

The reference draws the init and writes it (--save-init); both train
--steps steps on the same data from it; then every parameter, buffer
(gate bias/EMA) and optimizer state that both checkpoints hold, and the
per-step loss and grad norm, must agree within --tol (relative). This checks
hymo's compiled update (clip, WSD, NorMuon with batched Newton-Schulz,
CautiousAdamW, gate-bias update) against an independent implementation.

  train_crosscheck.py --hymo-run BIN --config CFG --data FILE --work DIR [--set K=V]...
Exit 0 on agreement, 1 on a mismatch, 77 when torch is missing.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
try:
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover
    print("train_crosscheck: skipping, PyTorch not importable: %s" % e)
    sys.exit(77)
from bench.hymo_ref import safetensors_io as ST  # noqa: E402


def tensors(path):
    t = ST.load(path)
    return t[0] if isinstance(t, tuple) else t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hymo-run", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-10)
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="config override passed to both (e.g. training.gradient_accumulation_steps=2)")
    a = ap.parse_args()
    sets = [x for kv in a.set for x in ("--set", kv)]
    subprocess.run(["rm", "-rf", a.work], check=True)
    os.makedirs(a.work)
    init = os.path.join(a.work, "init.safetensors")
    ref, hy = os.path.join(a.work, "ref"), os.path.join(a.work, "hymo")
    subprocess.run(["/usr/bin/python3", "-m", "bench.hymo_ref.cli", "train", "--config", a.config,
                    "--data", a.data, "--steps", str(a.steps), "--precision", "fp64",
                    "--save-init", init, "--out", ref] + sets, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    subprocess.run([a.hymo_run, "train", "--config", a.config, "--data", a.data, "--steps", str(a.steps),
                    "--precision", "fp64", "--init", init, "--out", hy] + sets, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    name = "step_%d.safetensors" % a.steps
    tr, th = tensors(os.path.join(ref, "checkpoints", name)), tensors(os.path.join(hy, "checkpoints", name))
    failed, worst, n = [], 0.0, 0
    for k, v in tr.items():
        hk = k[len("optim."):] if k.startswith("optim.") else k
        if hk not in th or tuple(th[hk].shape) != tuple(v.shape) or not v.is_floating_point():
            continue
        d = (th[hk].double() - v.double()).norm().item() / max(v.double().norm().item(), 1e-300)
        if v.double().norm().item() == 0:
            d = (th[hk].double() - v.double()).norm().item()
        n += 1
        worst = max(worst, d)
        if not d <= a.tol:
            failed.append((k, d))
    for s_h, s_r in zip((json.loads(l) for l in open(os.path.join(hy, "metrics.jsonl"))),
                        (json.loads(l) for l in open(os.path.join(ref, "metrics.jsonl")))):
        for key in ("loss", "loss_main", "grad_norm", "lr_muon", "lr_adamw"):
            d = abs(s_h[key] - s_r[key]) / max(abs(s_r[key]), 1e-300)
            worst = max(worst, d)
            if not d <= a.tol:
                failed.append(("step %d %s" % (s_h["step"], key), d))
    for k, d in failed[:20]:
        print("FAIL %-50s rel %.2e" % (k, d))
    print("train_crosscheck: %d steps, %d tensors compared, worst relative difference %.2e (tol %.0e)"
          % (a.steps, n, worst, a.tol))
    if n < 100:
        print("FAIL: too few tensors in common (%d)" % n)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
