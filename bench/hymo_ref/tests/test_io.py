"""safetensors, config, data order, checkpoints and the CLI."""
import contextlib
import io
import json
import os
import struct
import tempfile
import unittest

import numpy as np
import torch

from bench.hymo_ref import checkpoint as CK
from bench.hymo_ref import cli
from bench.hymo_ref import config as C
from bench.hymo_ref import data as D
from bench.hymo_ref import model as M
from bench.hymo_ref import safetensors_io as ST
from bench.hymo_ref.tests.util import TINY, text_or_synthetic, tiny_cfg


def run_cli(*argv):
    buf, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
        rc = cli.main([str(a) for a in argv])
    return rc, buf.getvalue(), err.getvalue()


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(x) for x in f]


class Safetensors(unittest.TestCase):
    def test_roundtrip_all_dtypes(self):
        ts = {"f32": torch.randn(3, 4), "f64": torch.randn(2, dtype=torch.float64),
              "bf16": torch.randn(5).to(torch.bfloat16), "i32": torch.arange(6, dtype=torch.int32).reshape(2, 3),
              "i64": torch.tensor(7, dtype=torch.int64), "u8": torch.arange(10, dtype=torch.uint8),
              "empty": torch.zeros(0, 3)}
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "a.safetensors")
            ST.save(ts, p, {"k": "v"})
            back, meta = ST.load(p, with_metadata=True)
            self.assertEqual(meta, {"k": "v"})
            for k, v in ts.items():
                self.assertEqual(back[k].dtype, v.dtype, k)
                self.assertEqual(back[k].shape, v.shape, k)
                self.assertTrue(torch.equal(back[k], v), k)
            # byte-level layout: header length, JSON, offsets
            with open(p, "rb") as f:
                raw = f.read()
            n = struct.unpack("<Q", raw[:8])[0]
            h = json.loads(raw[8:8 + n])
            b, e = h["f32"]["data_offsets"]
            self.assertEqual(h["f32"]["dtype"], "F32")
            self.assertTrue(np.array_equal(np.frombuffer(raw[8 + n + b:8 + n + e], "<f4").reshape(3, 4),
                                           ts["f32"].numpy()))
            self.assertEqual(h["bf16"]["dtype"], "BF16")
            # truncation is detected
            with open(p, "wb") as f:
                f.write(raw[:-3])
            with self.assertRaises(ST.SafetensorsError):
                ST.load(p)
            with open(p, "wb") as f:
                f.write(raw[:5])
            with self.assertRaises(ST.SafetensorsError):
                ST.load(p)


class Config(unittest.TestCase):
    def test_set_and_errors(self):
        cfg = C.load(TINY, ["model.gdn.n_heads=8", "optimizer.betas=[0.9, 0.99]", "training.loss_nan_skip=false"])
        self.assertEqual(cfg["model"]["gdn"]["n_heads"], 8)
        self.assertEqual(cfg["optimizer"]["betas"], [0.9, 0.99])
        self.assertIs(cfg["training"]["loss_nan_skip"], False)
        for bad in ("model.nope=1", "model.gdn=3", "training.precision=fp16", "nonsense"):
            with self.assertRaises(C.ConfigError, msg=bad):
                C.load(TINY, [bad])

    def test_all_configs_load(self):
        for n, total in (("tiny", 328600), ("small", 11105152), ("hymo_750m", 759064176)):
            cfg = C.load(TINY.replace("tiny", n))
            specs = M.param_specs(cfg)
            self.assertEqual(sum(int(np.prod(s.shape)) for s in specs if s.optimizer != "none"), total, n)


class Data(unittest.TestCase):
    def test_text_shard_and_order(self):
        with tempfile.TemporaryDirectory() as d:
            t = os.path.join(d, "t.txt")
            with open(t, "wb") as f:
                f.write(bytes(range(100)))
            toks = D.load_tokens(t)
            self.assertEqual(toks.tolist(), list(range(100)))
            s = os.path.join(d, "s.bin")
            D.write_shard(s, np.arange(3000) % 50000)
            self.assertEqual(D.load_tokens(s).tolist(), (np.arange(3000) % 50000).tolist())
            with open(s, "ab") as f:
                f.write(b"x")
            with self.assertRaises(D.DataError):
                D.load_tokens(s)
            with self.assertRaises(D.DataError):
                D.load_tokens(os.path.join(d, "missing"))
        # R = floor(100/8) = 12 rows; W=2, r=1, B=3: micro-step j takes rows ((2j+1)*3 + i) mod 12
        b = D.Batches(np.arange(100), 8, 3, world_size=2, rank=1)
        self.assertEqual(b.R, 12)
        self.assertEqual(b.rows_of(0), [3, 4, 5])
        self.assertEqual(b.rows_of(1), [9, 10, 11])
        self.assertEqual(b.rows_of(2), [3, 4, 5])   # (5*3 + i) mod 12
        self.assertEqual(b.get(1)[0].tolist(), list(range(72, 80)))


class Checkpoints(unittest.TestCase):
    def test_save_load_and_mismatch(self):
        cfg = tiny_cfg()
        P, Bf = M.init_params(cfg)
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "c.safetensors")
            CK.save_params(p, P, Bf, cfg)
            cfg2, P2, B2, _ = CK.load_params(p)           # config from the metadata
            self.assertEqual(cfg2, cfg)
            self.assertEqual(list(P2), list(P))
            for k in P:
                self.assertTrue(torch.equal(P[k], P2[k]))
            # a hymo-style checkpoint: JSON config (with a key we do not know), other state names
            meta_cfg = json.loads(json.dumps(cfg))
            meta_cfg["training"]["some_new_key"] = 1
            t = dict(P)
            t.update(Bf)
            t["normuon.momentum.layers.0.ffn.W1.weight"] = torch.zeros(1)
            t["train.step"] = torch.tensor(3, dtype=torch.int64)
            h = os.path.join(d, "h.safetensors")
            ST.save(t, h, {"format": "hymo-checkpoint", "config": json.dumps(meta_cfg)})
            cfg3, P3, _, _ = CK.load_params(h)
            self.assertEqual(cfg3, cfg)
            self.assertTrue(torch.equal(P3["embed.weight"], P["embed.weight"]))
            other = tiny_cfg("model.ffn_hidden=96")
            with self.assertRaisesRegex(CK.CheckpointError, "layers.0.ffn.W1.weight"):
                CK.load_params(p, other)
            with self.assertRaisesRegex(CK.CheckpointError, "layers.4"):
                CK.load_params(p, tiny_cfg("model.n_layers=5"))
            with self.assertRaisesRegex(CK.CheckpointError, "layers.3.norm1"):
                CK.load_params(p, tiny_cfg("model.n_layers=3"))


class CLI(unittest.TestCase):
    def test_grads_train_resume_eval(self):
        with tempfile.TemporaryDirectory() as d:
            data = os.path.join(d, "text.txt")
            with open(data, "wb") as f:
                f.write(text_or_synthetic()[:20000])
            init = os.path.join(d, "init.safetensors")
            out = os.path.join(d, "g.safetensors")
            sets = ["--set", "training.seq_len=32"]
            rc, so, se = run_cli("grads", "--config", TINY, *sets, "--data", data, "--precision", "fp64",
                                 "--save-init", init, "--out", out)
            self.assertEqual(rc, 0, se)
            g = ST.load(out)
            cfg = tiny_cfg("training.seq_len=32")
            names = [s.name for s in M.param_specs(cfg) if s.optimizer != "none"]
            self.assertEqual(sorted(k[5:] for k in g if k.startswith("grad.")), sorted(names))
            self.assertEqual(g["grad.embed.weight"].dtype, torch.float64)
            for k in ("loss", "loss_main", "loss_mtp.0", "loss_mtp.1", "layers.3.ffn.counts"):
                self.assertIn(k, g)
            # --init with the saved init reproduces the same gradients
            out2 = os.path.join(d, "g2.safetensors")
            rc, _, se = run_cli("grads", "--config", TINY, *sets, "--data", data, "--precision", "fp64",
                                "--init", init, "--out", out2)
            self.assertEqual(rc, 0, se)
            g2 = ST.load(out2)
            for k in g:
                self.assertTrue(torch.equal(g[k], g2[k]), k)
            rc, so, _ = run_cli("compare", out, out2)
            self.assertEqual(rc, 0)
            self.assertEqual(json.loads(so)["max_rel"], 0.0)
            g2["grad.head.weight"] = g2["grad.head.weight"] * (1 + 1e-5)
            ST.save(g2, out2)
            rc, so, _ = run_cli("compare", out, out2, "--prefix", "grad.")
            self.assertEqual(rc, 1)
            self.assertIn("grad.head.weight", so)

            # resume is bit-exact: 4 steps straight == 2 + resume + 2
            a, b = os.path.join(d, "a"), os.path.join(d, "b")
            args = ["--config", TINY, *sets, "--data", data, "--init", init, "--set", "scheduler.total_steps=8"]
            self.assertEqual(run_cli("train", *args, "--steps", 4, "--out", a)[0], 0)
            self.assertEqual(run_cli("train", *args, "--steps", 2, "--out", b)[0], 0)
            rc, _, se = run_cli("train", *args, "--steps", 2, "--out", b, "--resume", b)
            self.assertEqual(rc, 0, se)
            ta = ST.load(os.path.join(a, "checkpoints", "step_4.safetensors"))
            tb = ST.load(os.path.join(b, "checkpoints", "step_4.safetensors"))
            self.assertEqual(set(ta), set(tb))
            for k in ta:
                self.assertTrue(torch.equal(ta[k], tb[k]), k)
            la, lb = read_jsonl(os.path.join(a, "metrics.jsonl")), read_jsonl(os.path.join(b, "metrics.jsonl"))
            self.assertEqual([r["loss"] for r in la], [r["loss"] for r in lb])
            for key in ("step", "loss", "loss_main", "grad_norm", "lr_muon", "lr_adamw", "skipped",
                        "tokens_per_s"):
                self.assertIn(key, la[0])

            rc, so, se = run_cli("eval", "--ckpt", os.path.join(a, "checkpoints", "step_4.safetensors"),
                                 "--data", data)
            self.assertEqual(rc, 0, se)
            r = json.loads(so)
            self.assertAlmostEqual(r["perplexity"], np.exp(r["loss"]), places=6)

            self.assertEqual(run_cli("grads", "--config", TINY, "--data", data, "--precision", "fp16",
                                     "--out", out)[0], 2)
            self.assertEqual(run_cli("grads", "--config", TINY, "--data", os.path.join(d, "nope"),
                                     "--out", out)[0], 2)


if __name__ == "__main__":
    unittest.main()


class InitPrecision(unittest.TestCase):
    def test_f64_init_keeps_precision(self):
        cfg = tiny_cfg("training.seq_len=16")
        P, Bf = M.init_params(cfg, dtype=torch.float64)
        g = torch.Generator().manual_seed(5)
        P = {k: v + 1e-9 * torch.randn(v.shape, generator=g, dtype=torch.float64) for k, v in P.items()}
        with tempfile.TemporaryDirectory() as d:
            init = os.path.join(d, "i64.safetensors")
            tensors = dict(P)
            tensors.update(Bf)
            ST.save(tensors, init, {"config": C.dumps(cfg)})
            data = os.path.join(d, "t.txt")
            with open(data, "wb") as f:
                f.write(text_or_synthetic()[:4000])
            out = os.path.join(d, "g.safetensors")
            rc, _, se = run_cli("grads", "--config", TINY, "--set", "training.seq_len=16", "--data", data,
                                "--precision", "fp64", "--init", init, "--out", out)
            self.assertEqual(rc, 0, se)
            res = ST.load(out)
            tokens = D.Batches(D.load_tokens(data), 16, 2).get(0)
            Q = {k: v.clone().requires_grad_(True) for k, v in P.items()}
            o = M.forward(Q, Bf, tokens, cfg)
            grads = torch.autograd.grad(o["loss"], list(Q.values()))
            self.assertEqual(res["loss"].item(), o["loss"].item())
            for n, gr in zip(Q, grads):
                self.assertTrue(torch.equal(res["grad." + n], gr), n)
