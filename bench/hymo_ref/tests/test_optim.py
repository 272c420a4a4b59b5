"""WSD, NorMuon and CautiousAdamW against hand-derived values, and the
training-step semantics of spec section 3."""
import math
import unittest

import torch

from bench.hymo_ref import model as M
from bench.hymo_ref import optim as O
from bench.hymo_ref.tests.util import micro_cfg, tiny_cfg

SEED_SCHED = {"total_steps": 57220, "warmup_frac": 0.02, "stable_frac": 0.83,
              "decay_frac": 0.15, "min_lr_ratio": 0.05, "decay": "linear"}
OCFG = {"momentum": 0.95, "nesterov": True, "betas": [0.95, 0.95], "eps": 1e-8,
        "weight_decay": 0.1, "cautious_wd": True, "ns_iterations": 5,
        "ns_coefficients": "quintic"}


class WSD(unittest.TestCase):
    def test_seed_figures(self):
        total, warmup, stable, decay = O.wsd_phases(SEED_SCHED)
        self.assertEqual((warmup, stable, decay), (1144, 47492, 8584))
        f = lambda t: O.wsd_factor(t, SEED_SCHED)  # noqa: E731
        self.assertEqual(f(0), 0.0)
        self.assertEqual(f(572), 0.5)
        self.assertEqual(f(1144), 1.0)
        self.assertEqual(f(48635), 1.0)
        # 52884: progress (52884-48636)/8584 = 0.49487 -> 0.05 + 0.95*0.50513 = 0.5299 (seed: ~0.525 at p=0.5)
        self.assertAlmostEqual(f(52884), 0.05 + 0.95 * (1 - 4248 / 8584), places=12)
        self.assertAlmostEqual(f(52884), 0.53, places=2)
        self.assertAlmostEqual(f(57220), 0.05, places=12)
        self.assertAlmostEqual(f(60000), 0.05, places=12)   # clamped

    def test_shapes_of_decay(self):
        s = dict(SEED_SCHED, total_steps=100, warmup_frac=0.1, stable_frac=0.5)
        # warmup 10, stable 50, decay 40; t = 80 -> p = 0.5
        self.assertAlmostEqual(O.wsd_factor(80, dict(s, decay="linear")), 0.05 + 0.95 * 0.5)
        self.assertAlmostEqual(O.wsd_factor(80, dict(s, decay="cosine")), 0.05 + 0.95 * 0.5)
        self.assertAlmostEqual(O.wsd_factor(70, dict(s, decay="cosine")),
                               0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * 0.25)))
        self.assertAlmostEqual(O.wsd_factor(80, dict(s, decay="sqrt")), 0.05 + 0.95 * (1 - math.sqrt(0.5)))
        # no decay phase: p = 1 at once
        s0 = dict(s, warmup_frac=0.5, stable_frac=0.5)
        self.assertAlmostEqual(O.wsd_factor(100, s0), 0.05)
        self.assertEqual(O.wsd_factor(99, s0), 1.0)


def ns_scalar(sigma, iters=5, kind="quintic"):
    a, b, c = O.QUINTIC
    for _ in range(iters):
        sigma = a * sigma + b * sigma ** 3 + c * sigma ** 5 if kind == "quintic" else 1.5 * sigma - 0.5 * sigma ** 3
    return sigma


class NorMuonHand(unittest.TestCase):
    W0 = [[0.5, -1.0, 0.2], [0.3, 0.4, -0.6]]

    def run_muon(self, Gs, scale="shape", kind="quintic", transpose=False, lr=0.02):
        W = torch.tensor(self.W0, dtype=torch.float64)
        if transpose:
            W = W.t().contiguous()
        W = W[None].clone()
        Mom = torch.zeros_like(W)
        V = torch.zeros(1, W.shape[1], dtype=torch.float64)
        for G in Gs:
            G = torch.tensor(G, dtype=torch.float64)
            G = (G.t() if transpose else G)[None].contiguous()
            O.normuon_update(W, G, Mom, V, lr, dict(OCFG, ns_coefficients=kind), scale)
        return W[0]

    def test_one_step_quintic_shape(self):
        G = [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]
        W = self.run_muon([G])
        # U = 1.95 G; rows orthogonal, singular values 1.95/(1.95*sqrt5 + 1e-7) * (1, 2)
        nU = 1.95 * math.sqrt(5.0)
        f1 = ns_scalar(1.95 / (nU + 1e-7))
        f2 = ns_scalar(3.90 / (nU + 1e-7))
        V1, V2 = 0.05 * f1 * f1 / 3, 0.05 * f2 * f2 / 3
        o1, o2 = f1 / (math.sqrt(V1) + 1e-8), f2 / (math.sqrt(V2) + 1e-8)
        s = math.sqrt(f1 * f1 + f2 * f2) * 1.0 / math.hypot(o1, o2)   # m/n = 2/3 -> factor 1
        Op = [[s * o1, 0, 0], [0, s * o2, 0]]
        mask = [[1, 0, 0], [0, 1, 0]]   # O'*W > 0 only at (0,0) (0.5>0) and (1,1) (0.4>0)
        exp = [[self.W0[i][j] - 0.02 * (Op[i][j] + 0.1 * self.W0[i][j] * mask[i][j]) for j in range(3)]
               for i in range(2)]
        self.assertTrue(torch.allclose(W, torch.tensor(exp, dtype=torch.float64), rtol=1e-12, atol=1e-14))
        # ||O'||_F = ||O||_F
        self.assertAlmostEqual(math.hypot(Op[0][0], Op[1][1]), math.hypot(f1, f2), places=12)

    def test_two_steps_momentum(self):
        G1 = [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]
        G2 = [[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
        W = self.run_muon([G1, G2])
        # after step 1 (as above)
        nU = 1.95 * math.sqrt(5.0)
        f1, f2 = ns_scalar(1.95 / (nU + 1e-7)), ns_scalar(3.90 / (nU + 1e-7))
        V = [0.05 * f1 * f1 / 3, 0.05 * f2 * f2 / 3]
        o1, o2 = f1 / (math.sqrt(V[0]) + 1e-8), f2 / (math.sqrt(V[1]) + 1e-8)
        s = math.hypot(f1, f2) / math.hypot(o1, o2)
        W1 = [[self.W0[0][0] - 0.02 * (s * o1 + 0.1 * self.W0[0][0]), self.W0[0][1], self.W0[0][2]],
              [self.W0[1][0], self.W0[1][1] - 0.02 * (s * o2 + 0.1 * self.W0[1][1]), self.W0[1][2]]]
        # step 2: M = 0.95 G1 + G2, U = G2 + 0.95 M = 0.9025 G1 + 1.95 G2
        r0 = [0.9025, 0.0, 1.95]
        r1 = [0.0, 1.805, 0.0]
        n0, n1 = math.hypot(0.9025, 1.95), 1.805
        nU = math.hypot(n0, n1)
        g0, g1 = ns_scalar(n0 / (nU + 1e-7)), ns_scalar(n1 / (nU + 1e-7))
        Orow = [[g0 * x / n0 for x in r0], [g1 * x / n1 for x in r1]]
        V = [0.95 * V[0] + 0.05 * g0 * g0 / 3, 0.95 * V[1] + 0.05 * g1 * g1 / 3]
        Oh = [[x / (math.sqrt(V[i]) + 1e-8) for x in Orow[i]] for i in range(2)]
        s = math.hypot(g0, g1) / math.sqrt(sum(x * x for r in Oh for x in r))
        exp = [[W1[i][j] - 0.02 * (s * Oh[i][j] + 0.1 * W1[i][j] * (s * Oh[i][j] * W1[i][j] > 0))
                for j in range(3)] for i in range(2)]
        self.assertTrue(torch.allclose(W, torch.tensor(exp, dtype=torch.float64), rtol=1e-12, atol=1e-14))

    def test_tall_rms_and_cubic(self):
        G = [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]
        for kind in ("quintic", "cubic"):
            for scale in ("shape", "rms"):
                W = self.run_muon([G], scale=scale, kind=kind, transpose=True)   # W is 3x2
                nU = 1.95 * math.sqrt(5.0)
                f1, f2 = ns_scalar(1.95 / (nU + 1e-7), kind=kind), ns_scalar(3.90 / (nU + 1e-7), kind=kind)
                # rows of the 3x2 O: (f1, 0), (0, f2), (0, 0); V row = 0.05 * f^2 / 2
                o1 = f1 / (math.sqrt(0.05 * f1 * f1 / 2) + 1e-8)
                o2 = f2 / (math.sqrt(0.05 * f2 * f2 / 2) + 1e-8)
                target = math.hypot(f1, f2) * math.sqrt(1.5) if scale == "shape" else 0.2 * math.sqrt(6)
                s = target / math.hypot(o1, o2)
                Wt = [list(r) for r in zip(*self.W0)]   # 3x2
                exp = [row[:] for row in Wt]
                exp[0][0] = Wt[0][0] - 0.02 * (s * o1 + 0.1 * Wt[0][0])   # O'*W>0: 0.5
                exp[1][1] = Wt[1][1] - 0.02 * (s * o2 + 0.1 * Wt[1][1])   # 0.4
                self.assertTrue(torch.allclose(W, torch.tensor(exp, dtype=torch.float64),
                                               rtol=1e-12, atol=1e-14), (kind, scale))

    def test_ns_batched_equals_single_and_orthogonalises(self):
        g = torch.Generator().manual_seed(0)
        U = torch.randn(3, 5, 8, generator=g, dtype=torch.float64)
        Ob = O.newton_schulz(U)
        for i in range(3):
            self.assertTrue(torch.allclose(Ob[i], O.newton_schulz(U[i]), rtol=1e-13, atol=1e-14))
        # quintic NS leaves singular values roughly in [0.7, 1.2]
        sv = torch.linalg.svdvals(Ob)
        self.assertTrue(bool((sv > 0.6).all() and (sv < 1.25).all()), sv)
        Ut = torch.randn(2, 9, 4, generator=g, dtype=torch.float64)
        self.assertTrue(torch.allclose(O.newton_schulz(Ut), O.newton_schulz(Ut.transpose(1, 2)).transpose(1, 2),
                                       rtol=1e-13, atol=1e-14))


class AdamWHand(unittest.TestCase):
    def test_two_steps(self):
        W0 = [[0.5, -1.0, 0.2], [0.3, 0.4, -0.6]]
        g1 = [[0.1, -0.2, 0.0], [0.3, -0.1, 0.05]]
        g2 = [[-0.1, 0.1, 0.2], [0.3, 0.0, -0.05]]
        lr, wd, b1, b2, eps = 1e-2, 0.1, 0.9, 0.95, 1e-8
        W = torch.tensor(W0, dtype=torch.float64)
        m = torch.zeros_like(W)
        v = torch.zeros_like(W)
        for t, g in ((1, g1), (2, g2)):
            O.adamw_update(W, torch.tensor(g, dtype=torch.float64), m, v, t, lr, b1, b2, eps, wd)
        # by hand, element by element
        exp = [[0.0] * 3 for _ in range(2)]
        Wh = [r[:] for r in W0]
        mh = [[0.0] * 3 for _ in range(2)]
        vh = [[0.0] * 3 for _ in range(2)]
        for t, g in ((1, g1), (2, g2)):
            u = [[0.0] * 3 for _ in range(2)]
            for i in range(2):
                for j in range(3):
                    mh[i][j] = b1 * mh[i][j] + (1 - b1) * g[i][j]
                    vh[i][j] = b2 * vh[i][j] + (1 - b2) * g[i][j] ** 2
                    u[i][j] = (mh[i][j] / (1 - b1 ** t)) / (math.sqrt(vh[i][j] / (1 - b2 ** t)) + eps)
            phi = [[1.0 if u[i][j] * g[i][j] > 0 else 0.0 for j in range(3)] for i in range(2)]
            mean = sum(sum(r) for r in phi) / 6
            for i in range(2):
                for j in range(3):
                    uu = u[i][j] * phi[i][j] / max(mean, 1e-3)
                    mask = 1.0 if uu * Wh[i][j] > 0 else 0.0
                    Wh[i][j] = Wh[i][j] - lr * (uu + wd * Wh[i][j] * mask)
        exp = Wh
        self.assertTrue(torch.allclose(W, torch.tensor(exp, dtype=torch.float64), rtol=1e-13, atol=1e-15))
        # step 1 alone: u = sign(g) * 6/5 where g != 0
        W = torch.tensor(W0, dtype=torch.float64)
        O.adamw_update(W, torch.tensor(g1, dtype=torch.float64), torch.zeros(2, 3, dtype=torch.float64),
                       torch.zeros(2, 3, dtype=torch.float64), 1, lr, b1, b2, eps, wd)
        self.assertAlmostEqual(W[0, 2].item(), 0.2)   # g = 0: untouched (no update, WD masked)
        u00 = 0.1 / (0.1 + eps) * 1.2
        self.assertAlmostEqual(W[0, 0].item(), 0.5 - lr * (u00 + wd * 0.5), places=14)
        u11 = -0.1 / (0.1 + eps) * 1.2   # u*W = -(0.4): WD masked
        self.assertAlmostEqual(W[1, 1].item(), 0.4 - lr * u11, places=14)


class GateBias(unittest.TestCase):
    def test_update(self):
        bias = torch.zeros(4, dtype=torch.float64)
        ema = torch.zeros(4, dtype=torch.float64)
        O.gate_bias_update(bias, ema, torch.tensor([10.0, 0.0, 5.0, 5.0]), 0.02, 0.001)
        self.assertTrue(torch.allclose(ema, torch.tensor([0.2, 0.0, 0.1, 0.1], dtype=torch.float64)))
        self.assertEqual(bias.tolist(), [-0.001, 0.001, 0.0, 0.0])


class CaptureTrainer(O.Trainer):
    def update(self, counts):
        self.captured = ({n: g.clone() for n, g in self.grads().items()}, dict(counts))
        return super().update(counts)


class StepSemantics(unittest.TestCase):
    def setUp(self):
        self.cfg = micro_cfg("training.gradient_accumulation_steps=2")
        self.P, self.Bf = M.init_params(self.cfg, dtype=torch.float64)
        g = torch.Generator().manual_seed(9)
        self.batches = [torch.randint(0, 32, (2, 11), generator=g) for _ in range(8)]

    def grads_of(self, tokens):
        P = {k: v.clone().requires_grad_(True) for k, v in self.P.items()}
        out = M.forward(P, self.Bf, tokens, self.cfg)
        return dict(zip(P, torch.autograd.grad(out["loss"], list(P.values())))), out

    def test_accumulation_and_nan_skip(self):
        tr = CaptureTrainer(self.cfg, self.P, self.Bf, torch.float64)
        rec = tr.train_step(lambda j: self.batches[j])
        g0, o0 = self.grads_of(self.batches[0])
        g1, o1 = self.grads_of(self.batches[1])
        grads, counts = tr.captured
        for n in g0:
            self.assertTrue(torch.allclose(grads[n], (g0[n] + g1[n]) / 2, rtol=1e-12, atol=1e-15), n)
        c = "layers.3.ffn.counts"
        self.assertTrue(torch.equal(counts[c], (o0["counts"][c] + o1["counts"][c]).double()))
        self.assertAlmostEqual(rec["loss"], (o0["loss"].item() + o1["loss"].item()) / 2, places=12)
        self.assertEqual(rec["skipped"], 0)
        self.assertEqual(tr.step, 1)
        self.assertEqual(tr.adam_t, 1)

        # second step: micro-batch 3 is non-finite -> skipped, only batch 2 counts (still / 2)
        orig = tr.micro_batch

        def poisoned(tokens):
            out = orig(tokens)
            if tokens is self.batches[3]:
                out["loss"] = out["loss"] * float("nan")
            return out
        tr.micro_batch = poisoned
        self.P = {n: p.detach().clone() for n, p in tr.P.items()}
        self.Bf = {n: b.clone() for n, b in tr.B.items()}
        rec = tr.train_step(lambda j: self.batches[j])
        self.assertEqual(rec["skipped"], 1)
        self.assertTrue(rec["is_update"])
        self.assertEqual(tr.consecutive_nan, 1)
        g2, o2 = self.grads_of(self.batches[2])
        grads, counts = tr.captured
        for n in g2:
            self.assertTrue(torch.allclose(grads[n], g2[n] / 2, rtol=1e-12, atol=1e-15), n)
        self.assertTrue(torch.equal(counts[c], o2["counts"][c].double()))
        self.assertAlmostEqual(rec["loss"], o2["loss"].item(), places=12)
        self.assertEqual(tr.step, 2)
        self.assertEqual(tr.adam_t, 2)

    def test_skipped_micro_batch_adds_nothing(self):
        tr = CaptureTrainer(self.cfg, self.P, self.Bf, torch.float64)
        orig = tr.micro_batch
        calls = []

        def poisoned(tokens):
            calls.append(1)
            out = orig(tokens)
            if len(calls) == 2:
                out["loss"] = out["loss"] + float("inf")
            return out
        tr.micro_batch = poisoned
        rec = tr.train_step(lambda j: self.batches[j])
        g0, o0 = self.grads_of(self.batches[0])
        grads, counts = tr.captured
        for n in g0:
            self.assertTrue(torch.allclose(grads[n], g0[n] / 2, rtol=1e-12, atol=1e-15), n)
        c = "layers.3.ffn.counts"
        self.assertTrue(torch.equal(counts[c], o0["counts"][c].double()))
        self.assertAlmostEqual(rec["loss"], o0["loss"].item(), places=12)
        self.assertEqual(rec["skipped"], 1)

    def test_all_skipped_changes_nothing_and_abort(self):
        cfg = micro_cfg("training.gradient_accumulation_steps=2", "training.consecutive_nan_limit=3")
        tr = O.Trainer(cfg, self.P, self.Bf, torch.float64)
        tr.train_step(lambda j: self.batches[j])        # one good step: state non-trivial
        before = ({n: p.detach().clone() for n, p in tr.P.items()}, {n: b.clone() for n, b in tr.B.items()},
                  {k: v.clone() for k, v in tr.state_tensors().items() if not k.startswith(("sched", "data", "train"))})
        orig = tr.micro_batch

        def nan(tokens):
            out = orig(tokens)
            out["loss"] = out["loss"] * float("nan")
            return out
        tr.micro_batch = nan
        rec = tr.train_step(lambda j: self.batches[j])
        self.assertEqual(rec["skipped"], 2)
        self.assertFalse(rec["is_update"])
        self.assertIsNone(rec["loss"])
        self.assertEqual(tr.step, 2)
        for n, p in tr.P.items():
            self.assertTrue(torch.equal(p.detach(), before[0][n]), n)
        for n, b in tr.B.items():
            self.assertTrue(torch.equal(b, before[1][n]), n)
        st = tr.state_tensors()
        for k, v in before[2].items():
            self.assertTrue(torch.equal(st[k], v), k)
        with self.assertRaises(O.NanAbort):
            tr.train_step(lambda j: self.batches[j])   # third consecutive skip aborts

    def test_clip(self):
        g = [torch.tensor([3.0, 0.0]), torch.tensor([[0.0, 4.0]])]
        self.assertEqual(O.clip_grads(g, 1.0), 5.0)
        self.assertAlmostEqual(g[0][0].item(), 3.0 / (5.0 + 1e-6), places=7)
        self.assertAlmostEqual(g[1][0, 1].item(), 4.0 / (5.0 + 1e-6), places=7)
        g = [torch.tensor([0.3, 0.4])]
        O.clip_grads(g, 1.0)
        self.assertEqual(g[0].tolist(), [0.30000001192092896, 0.4000000059604645])   # untouched

    def test_partition_and_wd(self):
        cfg = tiny_cfg()
        P, Bf = M.init_params(cfg)
        tr = O.Trainer(cfg, P, Bf)
        muon = set(tr.muon_names)
        self.assertIn("mtp.0.proj.weight", muon)
        self.assertIn("mtp.1.layer.ffn.W2.weight", muon)
        self.assertIn("layers.3.mixer.W_kvb.weight", muon)
        self.assertNotIn("layers.0.mixer.A_log", muon)
        self.assertNotIn("layers.3.ffn.experts.W1", muon)
        self.assertNotIn("layers.3.ffn.shared.W1.weight", muon)
        self.assertNotIn("layers.3.ffn.gate_bias", set(tr.adam_names) | muon)
        self.assertEqual(tr.adam_wd("embed.weight"), 0.0)
        self.assertEqual(tr.adam_wd("layers.0.mixer.A_log"), 0.0)
        self.assertEqual(tr.adam_wd("layers.3.ffn.gate.weight"), 0.1)
        self.assertEqual(tr.adam_wd("layers.3.ffn.experts.W2"), 0.1)
        self.assertEqual(tr.adam_wd("layers.3.mixer.norm_q.weight"), 0.0)
        self.assertEqual(sum(p.numel() for p in P.values()), 328600)   # docs/params.md


if __name__ == "__main__":
    unittest.main()
