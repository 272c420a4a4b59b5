"""FP64 gradchecks of the model's pieces and central finite differences of
the whole (micro) model's loss."""
import unittest

import torch
from torch.autograd import gradcheck

from bench.hymo_ref import model as M
from bench.hymo_ref.tests.util import micro_cfg


def params64(cfg, seed=0):
    P, Bf = M.init_params(cfg, seed=seed, dtype=torch.float64)
    return P, Bf


class Pieces(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.cfg = micro_cfg()
        self.P, self.Bf = params64(self.cfg)
        self.u = torch.randn(2, 6, 16, dtype=torch.float64)

    def run_piece(self, fn, names):
        P = dict(self.P)
        ins = [self.u.clone().requires_grad_(True)]
        # perturb the init a little so norms / D_skip etc. are not at special values
        for n in names:
            ins.append((P[n] + 0.1 * torch.randn_like(P[n])).requires_grad_(True))

        def f(u, *ws):
            Q = dict(P)
            Q.update(zip(names, ws))
            return fn(Q, u)
        self.assertTrue(gradcheck(f, tuple(ins), eps=1e-6, atol=1e-6, rtol=1e-5))

    def test_rms_norm(self):
        w = torch.randn(16, dtype=torch.float64, requires_grad=True)
        self.assertTrue(gradcheck(lambda x, w: M.rms_norm(x, w, 1e-6), (self.u.clone().requires_grad_(True), w)))

    def test_rope(self):
        x = torch.randn(2, 5, 3, 4, dtype=torch.float64, requires_grad=True)
        self.assertTrue(gradcheck(lambda x: M.rope(x, 10000.0, x.dtype), (x,)))

    def test_gdn_mixer(self):
        p = "layers.0.mixer."
        names = [p + n for n in ("W_v.weight", "W_b.weight", "W_c.weight", "W_g.weight", "W_z.weight",
                                 "W_o.weight", "dt_bias", "A_log", "D_skip", "norm_y.weight")]
        self.run_piece(lambda Q, u: M.gdn_mixer(Q, p, u, self.cfg), names)

    def test_mla_mixer(self):
        p = "layers.3.mixer."
        names = [p + n for n in ("W_qa.weight", "norm_q.weight", "W_qb.weight", "W_kva.weight",
                                 "norm_kv.weight", "W_kvb.weight", "W_o.weight")]
        self.run_piece(lambda Q, u: M.mla_mixer(Q, p, u, self.cfg), names)

    def test_moe_ffn(self):
        p = "layers.3.ffn."
        names = [p + n for n in ("gate.weight", "experts.W1", "experts.W2", "experts.W3",
                                 "shared.W1.weight", "shared.W2.weight", "shared.W3.weight")]
        self.P[p + "gate.weight"] = self.P[p + "gate.weight"] * 100   # clear routing margins
        self.run_piece(lambda Q, u: M.moe_ffn(Q, self.Bf, p, u, self.cfg)[0], names)

    def test_swiglu(self):
        p = "layers.0.ffn."
        names = [p + "W1.weight", p + "W2.weight", p + "W3.weight"]
        self.run_piece(lambda Q, u: M.swiglu(u, *(Q[n] for n in names)), names)


class WholeModel(unittest.TestCase):
    def test_loss_central_differences(self):
        """Every parameter tensor: autograd vs central differences on 2 entries."""
        cfg = micro_cfg()
        P, Bf = params64(cfg, seed=1)
        P = {k: v.requires_grad_(True) for k, v in P.items()}
        tokens = torch.randint(0, 32, (2, 11), generator=torch.Generator().manual_seed(3))
        loss = M.forward(P, Bf, tokens, cfg)["loss"]
        grads = torch.autograd.grad(loss, list(P.values()))
        gen = torch.Generator().manual_seed(4)
        h = 1e-5
        with torch.no_grad():
            for (name, p), g in zip(P.items(), grads):
                for _ in range(2):
                    i = int(torch.randint(0, p.numel(), (1,), generator=gen))
                    flat = p.view(-1)
                    old = flat[i].item()
                    flat[i] = old + h
                    lp = M.forward(P, Bf, tokens, cfg)["loss"].item()
                    flat[i] = old - h
                    lm = M.forward(P, Bf, tokens, cfg)["loss"].item()
                    flat[i] = old
                    fd = (lp - lm) / (2 * h)
                    ga = g.reshape(-1)[i].item()
                    self.assertLess(abs(fd - ga), 1e-6 * max(1.0, abs(ga)) + 1e-8,
                                    "%s[%d]: fd %r autograd %r" % (name, i, fd, ga))

    def test_chunked_equals_naive_model(self):
        cfg = micro_cfg()
        P, Bf = params64(cfg, seed=2)
        tokens = torch.randint(0, 32, (2, 11))
        res = []
        for naive in (False, True):
            Q = {k: v.clone().requires_grad_(True) for k, v in P.items()}
            out = M.forward(Q, Bf, tokens, cfg, naive=naive)
            res.append((out["loss"].item(), torch.autograd.grad(out["loss"], list(Q.values()))))
        self.assertAlmostEqual(res[0][0], res[1][0], places=12)
        for a, b in zip(res[0][1], res[1][1]):
            self.assertTrue(torch.allclose(a, b, rtol=1e-9, atol=1e-12))


if __name__ == "__main__":
    unittest.main()
