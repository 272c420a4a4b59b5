#!/usr/bin/env python3
"""Interop: the PyTorch reference (bench/hymo_ref) loads a hymo checkpoint and
reproduces hymo's eval loss and logits (FP32, within --tol relative).

Trains CONFIG for a few steps with `hymo-run train`, runs `hymo-run eval
--json --save-logits` on held-out data, then loads the checkpoint with
bench/hymo_ref/checkpoint.py (config from the checkpoint's metadata) and
evaluates the same rows in the same batches (docs/eval.md: rows of T,
micro-batches of B, a last partial batch filled with rows from the start and
masked). Two cases: a whole number of batches (also checked against the
reference's own `eval`), and a partial last batch.

  interop.py --hymo-run BIN --config CFG --train-data FILE --eval-data FILE --work DIR
Exit 0 on a match, 1 on a mismatch, 77 when torch/numpy are missing.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print("interop: skipping, PyTorch/numpy not importable: %s" % e)
    sys.exit(77)

from bench.hymo_ref import checkpoint as CK  # noqa: E402
from bench.hymo_ref import data as D  # noqa: E402
from bench.hymo_ref import model as M  # noqa: E402


def torch_eval(cfg, params, buffers, toks, max_tokens):
    """Loss over the rows (docs/eval.md order) and the first batch's logits."""
    T = cfg["training"]["seq_len"]
    B = cfg["training"]["micro_batch_size"]
    toks = toks[:max_tokens]
    R = len(toks) // T
    rows = torch.from_numpy(toks[: R * T].reshape(R, T).astype(np.int64))
    tot, n, first = 0.0, 0, None
    with torch.no_grad():
        for s in range(0, R, B):
            real = min(B, R - s)
            idx = [(s + i) % R for i in range(B)]
            batch = rows[idx]
            lg = M.forward(params, buffers, batch, cfg, want_logits=True)["logits"]
            if first is None:
                first = lg.numpy().copy()
            lp = torch.log_softmax(lg[:real, :-1].to(torch.float64), -1)
            ce = -lp.gather(-1, batch[:real, 1:].unsqueeze(-1)).squeeze(-1)
            tot += ce.sum().item()
            n += ce.numel()
    return tot / n, n, first


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hymo-run", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--train-data", required=True)
    ap.add_argument("--eval-data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-4)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    run = os.path.join(args.work, "run")
    shutil.rmtree(run, ignore_errors=True)  # a run left by an earlier ctest
    subprocess.run([args.hymo_run, "train", "--config", args.config, "--data", args.train_data,
                    "--steps", str(args.steps), "--out", run], check=True, stdout=subprocess.DEVNULL)
    ckpt = os.path.join(run, "checkpoints", "step_%d.safetensors" % args.steps)

    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    cfg, params, buffers, _ = CK.load_params(ckpt)  # config from the metadata, F32
    T = cfg["training"]["seq_len"]
    B = cfg["training"]["micro_batch_size"]
    toks = D.load_tokens(args.eval_data)
    ok = True
    # 6B rows + a partial row: whole batches; 6B+1 rows: a padded last batch.
    for name, rows in (("whole batches", 6 * B), ("partial batch", 6 * B + 1)):
        max_tokens = rows * T + T // 2
        lg_file = os.path.join(args.work, "logits_%d.npy" % rows)
        if os.path.exists(lg_file):  # (an earlier run's: eval does not write over a file unasked)
            os.remove(lg_file)
        out = subprocess.run([args.hymo_run, "eval", "--ckpt", ckpt, "--data", args.eval_data,
                              "--max-tokens", str(max_tokens), "--json", "--save-logits", lg_file],
                             check=True, capture_output=True, text=True).stdout
        h = json.loads(out.strip().splitlines()[-1])
        loss, n, first = torch_eval(cfg, params, buffers, toks, max_tokens)
        lh = np.load(lg_file).astype(np.float64)
        rl = abs(h["loss_main"] - loss) / abs(loss)
        rlg = float(np.abs(lh - first).max() / np.abs(first).max())
        rp = abs(h["perplexity"] - math.exp(loss)) / math.exp(loss)
        good = rl <= args.tol and rlg <= args.tol and rp <= args.tol and h["predictions"] == n
        ok &= good
        print("interop %s (%d rows): hymo loss_main %.7f torch %.7f rel %.2e; ppl rel %.2e; logits max rel %.2e; "
              "predictions %d/%d %s" % (name, rows, h["loss_main"], loss, rl, rp, rlg, h["predictions"], n,
                                        "ok" if good else "MISMATCH"))
        if rows % B == 0:
            # The reference's own eval command agrees as well (same rows, whole batches).
            ref = subprocess.run([sys.executable, "-m", "bench.hymo_ref.cli", "eval", "--ckpt", ckpt,
                                  "--data", args.eval_data, "--max-tokens", str(max_tokens)],
                                 check=True, capture_output=True, text=True, cwd=ROOT).stdout
            r = json.loads(ref.strip().splitlines()[-1])
            rr = abs(h["loss_main"] - r["loss"]) / abs(r["loss"])
            good = rr <= args.tol and r["tokens"] == h["predictions"]
            ok &= good
            print("interop: bench.hymo_ref.cli eval loss %.7f, rel %.2e to hymo %s"
                  % (r["loss"], rr, "ok" if good else "MISMATCH"))
    print("interop: %s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
