import math
import unittest

import torch

from bench.hymo_ref import model as M
from bench.hymo_ref.tests.util import micro_cfg, tiny_cfg


class Routing(unittest.TestCase):
    def test_topk_ties_capacity_counts(self):
        # E = 4, k = 2, N = 5 -> capacity = max(1, floor(1.0 * 5 * 2 / 4)) = 2
        logits = torch.log(torch.tensor([
            [0.4, 0.3, 0.2, 0.1],   # token 0 -> e0, e1
            [0.1, 0.4, 0.4, 0.1],   # token 1 -> tie e1/e2: e1 first (lower index), then e2
            [0.5, 0.3, 0.1, 0.1],   # token 2 -> e0, e1  (e1's 3rd assignment: dropped)
            [0.25, 0.25, 0.25, 0.25],  # token 3 -> all tied: e0 (3rd: dropped), e1 (4th: dropped)
            [0.1, 0.2, 0.3, 0.4],   # token 4 -> e3, e2
        ], dtype=torch.float64))
        p, sel, keep, pos, counts, cap = M.moe_route(logits, torch.zeros(4, dtype=torch.float64), 2, 1.0)
        self.assertEqual(cap, 2)
        self.assertEqual(sel.tolist(), [[0, 1], [1, 2], [0, 1], [0, 1], [3, 2]])
        self.assertEqual(keep.tolist(), [[True, True], [True, True], [True, False],
                                         [False, False], [True, True]])
        self.assertEqual(counts.tolist(), [3, 4, 2, 1])   # before the capacity drop
        # gate_bias changes the choice but not the weights' source p
        p2, sel2, _, _, _, _ = M.moe_route(logits, torch.tensor([0.0, 0.0, 0.0, 0.5], dtype=torch.float64), 2, 1.0)
        self.assertEqual(sel2[0].tolist(), [3, 0])
        self.assertTrue(torch.equal(p, p2))

    def test_capacity_floor_min_one(self):
        logits = torch.zeros(3, 8)
        _, _, keep, _, _, cap = M.moe_route(logits, torch.zeros(8), 2, 1.0)
        self.assertEqual(cap, 1)   # floor(3*2/8) = 0 -> 1
        self.assertEqual(keep.sum().item(), 2)   # all go to e0, e1: one kept each

    def test_moe_ffn_hand_built(self):
        cfg = tiny_cfg("model.dim=4", "model.moe.n_routed=4", "model.moe.top_k=2",
                       "model.moe.expert_hidden=3", "model.moe.capacity_factor=1.0",
                       "model.moe.n_shared=0")
        torch.manual_seed(0)
        N, dim, E, h = 5, 4, 4, 3
        x = torch.randn(1, N, dim, dtype=torch.float64)
        P = {"f.experts.W1": torch.randn(E, h, dim, dtype=torch.float64),
             "f.experts.W2": torch.randn(E, dim, h, dtype=torch.float64),
             "f.experts.W3": torch.randn(E, h, dim, dtype=torch.float64),
             "f.gate.weight": torch.randn(E, dim, dtype=torch.float64)}
        Bf = {"f.gate_bias": torch.zeros(E, dtype=torch.float64)}
        out, counts = M.moe_ffn(P, Bf, "f.", x, cfg)
        # independent loop version
        xf = x[0]
        p = torch.softmax(xf @ P["f.gate.weight"].t(), -1)
        cap = max(1, math.floor(1.0 * N * 2 / E))
        used = [0] * E
        ref = torch.zeros(N, dim, dtype=torch.float64)
        cnt = [0] * E
        for t in range(N):
            order = sorted(range(E), key=lambda e: (-p[t, e].item(), e))[:2]
            wsum = sum(p[t, e] for e in order)
            for e in order:
                cnt[e] += 1
                if used[e] < cap:
                    used[e] += 1
                    y = (torch.nn.functional.silu(xf[t] @ P["f.experts.W1"][e].t()) *
                         (xf[t] @ P["f.experts.W3"][e].t())) @ P["f.experts.W2"][e].t()
                    ref[t] += p[t, e] / wsum * y
        self.assertEqual(counts.tolist(), cnt)
        self.assertTrue(torch.allclose(out[0], ref, rtol=1e-12, atol=1e-12))
        self.assertLess(sum(used), 2 * N)   # the example does drop something


class MTP(unittest.TestCase):
    def test_shapes_and_targets(self):
        cfg = micro_cfg()
        P, Bf = M.init_params(cfg, dtype=torch.float64)
        T = 11
        tokens = torch.randint(0, 32, (2, T))
        seen = []
        orig = M.ce_loss

        def spy(logits, targets):
            seen.append((tuple(logits.shape), targets.clone()))
            return orig(logits, targets)
        M.ce_loss = spy
        try:
            out = M.forward(P, Bf, tokens, cfg)
        finally:
            M.ce_loss = orig
        self.assertEqual(len(seen), 3)
        self.assertEqual(seen[0][0], (2, T - 1, 32))
        self.assertTrue(torch.equal(seen[0][1], tokens[:, 1:]))
        for k in (1, 2):
            self.assertEqual(seen[k][0], (2, T - k - 1, 32))
            self.assertTrue(torch.equal(seen[k][1], tokens[:, k + 1:]))
        w = cfg["model"]["mtp"]["weights"]
        tot = out["loss_main"] + w[0] * out["loss_mtp"][0] + w[1] * out["loss_mtp"][1]
        self.assertAlmostEqual(out["loss"].item(), tot.item(), places=12)
        self.assertEqual(list(out["counts"]), ["layers.3.ffn.counts"])
        self.assertEqual(out["counts"]["layers.3.ffn.counts"].sum().item(), 2 * T * 2)

    def test_mtp_causality(self):
        # loss_k's prediction at position t sees tokens <= t+k only: changing the last
        # token changes only the CE targets, so with the final token's target removed
        # (its logits row is never scored) per-position losses before it are unchanged.
        cfg = micro_cfg("model.moe.capacity_factor=8.0")
        P, Bf = M.init_params(cfg, dtype=torch.float64)
        tokens = torch.randint(0, 32, (1, 11))
        t2 = tokens.clone()
        t2[0, 7] = (t2[0, 7] + 1) % 32
        hs = []
        orig = M.ce_loss
        for tk in (tokens, t2):
            rows = []

            def spy(logits, targets):
                rows.append(torch.nn.functional.cross_entropy(logits.reshape(-1, 32), targets.reshape(-1),
                                                              reduction="none"))
                return orig(logits, targets)
            M.ce_loss = spy
            try:
                M.forward(P, Bf, tk, cfg)
            finally:
                M.ce_loss = orig
            hs.append(rows)
        # main: position t predicts token t+1 from tokens <= t: positions t < 6 unchanged
        for k in range(3):
            a, b = hs[0][k], hs[1][k]
            n_same = 7 - k - 1   # position t predicts tokens[t+k+1] from tokens <= t+k
            self.assertTrue(torch.allclose(a[:n_same], b[:n_same], rtol=1e-12, atol=1e-13), k)
            self.assertFalse(torch.allclose(a[n_same], b[n_same]), k)


if __name__ == "__main__":
    unittest.main()
