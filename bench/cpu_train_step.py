#!/usr/bin/env python3
"""CPU training step: hymo vs PyTorch (bench/hymo_ref), same config, same run.

For each config it compiles the FP32 plan, times hymo's whole training step
(`hymo-run train`, median `step_s` of the steps after the first) and the
PyTorch reference's (`bench.hymo_ref.cli bench`, median), alternating the two
`--rounds` times so that drift on a shared machine hits both, and prints a
table plus one JSON line per config. Whole-step tokens/s = B*T*G / step time
(spec §3).

  /usr/bin/python3 bench/cpu_train_step.py [--build build] [--steps 6] [--rounds 2]
      [--case tiny:2:64] [--case small:2:128] [--threads 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def hymo_step(build, cfg, B, T, steps, threads, work):
    out = os.path.join(work, "run")
    subprocess.run(["rm", "-rf", out], check=True)
    env = dict(os.environ, HYMO_NUM_THREADS=str(threads))
    subprocess.run([os.path.join(build, "tools/hymo-run/hymo-run"), "train", "--config", cfg,
                    "--set", "training.micro_batch_size=%d" % B, "--set", "training.seq_len=%d" % T,
                    "--precision", "fp32", "--data", "default", "--steps", str(steps),
                    "--save-interval", "1000000", "--out", out],
                   check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = [json.loads(l) for l in open(os.path.join(out, "metrics.jsonl"))]
    return statistics.median(r["step_s"] for r in rows[1:]) * 1e3


def torch_step(cfg, B, T, steps, threads):
    r = subprocess.run(["/usr/bin/python3", "-m", "bench.hymo_ref.cli", "bench", "--config", cfg,
                        "--batch", str(B), "--seq", str(T), "--steps", str(steps),
                        "--threads", str(threads)],
                       check=True, cwd=ROOT, capture_output=True, text=True)
    line = [l for l in r.stdout.splitlines() if l.startswith("{")][-1]
    return json.loads(line)["median_ms"], json.loads(line).get("torch", "?")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--case", action="append", default=[])
    a = ap.parse_args()
    cases = a.case or ["tiny:2:64", "small:2:128"]
    results = []
    with tempfile.TemporaryDirectory() as work:
        for case in cases:
            name, B, T = case.split(":")
            B, T = int(B), int(T)
            cfg = os.path.join(ROOT, "models/configs/%s.yaml" % name)
            hy, pt = [], []
            version = "?"
            for _ in range(a.rounds):
                hy.append(hymo_step(a.build, cfg, B, T, a.steps, a.threads, work))
                ms, version = torch_step(cfg, B, T, a.steps, a.threads)
                pt.append(ms)
            h, p = min(hy), min(pt)
            res = {"config": name, "B": B, "T": T, "threads": a.threads, "steps": a.steps,
                   "rounds": a.rounds, "hymo_ms": round(h, 2), "torch_ms": round(p, 2),
                   "hymo_tokens_per_s": round(B * T / h * 1e3, 1),
                   "torch_tokens_per_s": round(B * T / p * 1e3, 1),
                   "speedup": round(p / h, 3), "torch": version,
                   "hymo_ms_rounds": [round(x, 2) for x in hy], "torch_ms_rounds": [round(x, 2) for x in pt],
                   "loadavg": os.getloadavg()[0]}
            results.append(res)
            print(json.dumps(res), flush=True)
    print("\n%-6s %5s %10s %10s %12s %12s %8s" % ("config", "BxT", "hymo ms", "torch ms", "hymo tok/s",
                                                 "torch tok/s", "speedup"))
    for r in results:
        print("%-6s %5s %10.1f %10.1f %12.1f %12.1f %7.2fx" % (
            r["config"], "%dx%d" % (r["B"], r["T"]), r["hymo_ms"], r["torch_ms"],
            r["hymo_tokens_per_s"], r["torch_tokens_per_s"], r["speedup"]))


if __name__ == "__main__":
    sys.exit(main())
