import unittest

import torch

from bench.hymo_ref import model as M


def rand_inputs(B, T, H, S, D, lo, hi=0.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    f = dict(dtype=torch.float64)
    c = torch.randn(B, T, H, S, generator=g, **f)
    b = torch.randn(B, T, H, S, generator=g, **f)
    v = torch.randn(B, T, H, D, generator=g, **f)
    la = lo + (hi - lo) * torch.rand(B, T, H, S, generator=g, **f)
    return c, b, v, la


class ChunkedVsNaive(unittest.TestCase):
    def check(self, T, L, lo, hi=0.0, B=2, H=3, S=4, D=5, tol=1e-12):
        c, b, v, la = rand_inputs(B, T, H, S, D, lo, hi, seed=T * 31 + L)
        ref = M.gdn_recurrence_naive(c, b, v, la)
        out = M.gdn_recurrence_chunked(c, b, v, la, L)
        self.assertTrue(torch.isfinite(out).all())
        err = ((out - ref).abs().max() / ref.abs().max()).item()
        self.assertLess(err, tol, "T=%d L=%d decay [%g,%g]" % (T, L, lo, hi))

    def test_mild_decay(self):
        for T, L in [(64, 16), (37, 16), (130, 64), (5, 16), (33, 7), (48, 12)]:
            self.check(T, L, -0.2)

    def test_random_decay_to_minus_28(self):
        for T, L in [(64, 16), (37, 16), (130, 64), (100, 64)]:
            self.check(T, L, -28.0)

    def test_constant_minus_28_per_step(self):
        for T, L in [(64, 16), (150, 64)]:
            c, b, v, _ = rand_inputs(1, T, 2, 3, 4, 0.0, seed=7)
            la = torch.full((1, T, 2, 3), -28.0, dtype=torch.float64)
            ref = M.gdn_recurrence_naive(c, b, v, la)
            out = M.gdn_recurrence_chunked(c, b, v, la, L)
            self.assertTrue(torch.allclose(out, ref, rtol=1e-12, atol=1e-13))

    def test_no_decay(self):
        # log-decay 0: the state is a plain running sum
        self.check(70, 16, 0.0, 0.0)

    def test_fp32_extreme_stays_finite(self):
        c, b, v, la = rand_inputs(2, 200, 2, 8, 8, -28.0)
        c, b, v, la = (x.float().requires_grad_(True) for x in (c, b, v, la))
        out = M.gdn_recurrence_chunked(c, b, v, la, 64)
        out.square().sum().backward()
        for x in (out, c.grad, b.grad, v.grad, la.grad):
            self.assertTrue(torch.isfinite(x).all())
        ref = M.gdn_recurrence_naive(*(x.detach().double() for x in (c, b, v, la)))
        self.assertLess(((out.double() - ref).abs().max() / ref.abs().max()).item(), 1e-4)

    def test_gradients_match_naive(self):
        c, b, v, la = rand_inputs(1, 21, 2, 3, 4, -28.0, seed=3)
        w = torch.randn(1, 21, 2, 4, dtype=torch.float64)
        gs = []
        for fn in (M.gdn_recurrence_naive, lambda *a: M.gdn_recurrence_chunked(*a, 8)):
            xs = [x.clone().requires_grad_(True) for x in (c, b, v, la)]
            (fn(*xs) * w).sum().backward()
            gs.append([x.grad for x in xs])
        for g1, g2 in zip(*gs):
            self.assertTrue(torch.allclose(g1, g2, rtol=1e-10, atol=1e-12))

    def test_gradcheck_chunked(self):
        c, b, v, la = rand_inputs(1, 10, 1, 2, 3, -3.0, seed=5)
        xs = tuple(x.requires_grad_(True) for x in (c, b, v, la))
        self.assertTrue(torch.autograd.gradcheck(lambda *a: M.gdn_recurrence_chunked(*a, 4), xs))


if __name__ == "__main__":
    unittest.main()
