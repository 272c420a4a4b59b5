"""Loop-by-loop readings of spec sections 2.1 / 2.2 (row layouts, RoPE
formula, per-head norm) against the vectorised model."""
import math
import unittest

import torch

from bench.hymo_ref import model as M
from bench.hymo_ref.tests.util import micro_cfg


def rms(x, w, eps=1e-6):
    return x / math.sqrt(float((x * x).mean()) + eps) * w


def rope_vec(x, pos, theta=10000.0):
    dr = x.shape[0]
    h = dr // 2
    out = x.clone()
    for i in range(h):
        a = pos * theta ** (-2.0 * i / dr)
        out[i] = x[i] * math.cos(a) - x[i + h] * math.sin(a)
        out[i + h] = x[i + h] * math.cos(a) + x[i] * math.sin(a)
    return out


class Layouts(unittest.TestCase):
    def setUp(self):
        self.cfg = micro_cfg()
        P, _ = M.init_params(self.cfg, seed=3, dtype=torch.float64)
        g = torch.Generator().manual_seed(1)
        self.P = {k: v + 0.2 * torch.randn(v.shape, generator=g, dtype=torch.float64) for k, v in P.items()}
        self.u = torch.randn(2, 5, 16, generator=g, dtype=torch.float64)

    def test_mla_loops(self):
        a = self.cfg["model"]["mla"]
        H, dn, dr, dv, rkv = a["n_heads"], a["qk_nope_head_dim"], a["qk_rope_head_dim"], a["v_head_dim"], a["kv_lora_rank"]
        p = "layers.3.mixer."
        P = self.P
        got = M.mla_mixer(P, p, self.u, self.cfg)
        Bsz, T, _ = self.u.shape
        for b in range(Bsz):
            q, kn, kr, vv = {}, {}, {}, {}
            for t in range(T):
                u = self.u[b, t]
                qf = P[p + "W_qb.weight"] @ rms(P[p + "W_qa.weight"] @ u, P[p + "norm_q.weight"])
                kv = P[p + "W_kva.weight"] @ u
                c_kv, k_rope = kv[:rkv], kv[rkv:]
                kvb = P[p + "W_kvb.weight"] @ rms(c_kv, P[p + "norm_kv.weight"])
                kr[t] = rope_vec(k_rope, t)
                for h in range(H):
                    qh = qf[h * (dn + dr):(h + 1) * (dn + dr)]
                    q[t, h] = (qh[:dn], rope_vec(qh[dn:], t))
                    kh = kvb[h * (dn + dv):(h + 1) * (dn + dv)]
                    kn[t, h], vv[t, h] = kh[:dn], kh[dn:]
            for t in range(T):
                heads = []
                for h in range(H):
                    sc = torch.stack([(q[t, h][0] @ kn[s, h] + q[t, h][1] @ kr[s]) / math.sqrt(dn + dr)
                                      for s in range(t + 1)])
                    att = torch.softmax(sc, 0)
                    heads.append(sum(att[s] * vv[s, h] for s in range(t + 1)))
                ref = P[p + "W_o.weight"] @ torch.cat(heads)
                self.assertTrue(torch.allclose(got[b, t], ref, rtol=1e-11, atol=1e-12), (b, t))

    def test_gdn_loops(self):
        g = self.cfg["model"]["gdn"]
        H, D, S = g["n_heads"], g["head_dim"], g["state_dim"]
        p = "layers.0.mixer."
        P = self.P
        got = M.gdn_mixer(P, p, self.u, self.cfg)
        Bsz, T, _ = self.u.shape
        A = -torch.exp(P[p + "A_log"])
        for b in range(Bsz):
            state = [torch.zeros(S, D, dtype=torch.float64) for _ in range(H)]
            for t in range(T):
                u = self.u[b, t]
                v = (P[p + "W_v.weight"] @ u).reshape(H, D)
                bb = (P[p + "W_b.weight"] @ u).reshape(H, S)
                c = (P[p + "W_c.weight"] @ u).reshape(H, S)
                gate = torch.sigmoid(P[p + "W_g.weight"] @ u + P[p + "dt_bias"])
                z = torch.nn.functional.silu(P[p + "W_z.weight"] @ u).reshape(H, D)
                ys = []
                for h in range(H):
                    state[h] = torch.diag(torch.exp(gate[h] * A[h])) @ state[h] + torch.outer(bb[h], v[h])
                    o = c[h] @ state[h]
                    y = o + P[p + "D_skip"][h] * v[h]
                    ys.append(rms(y, P[p + "norm_y.weight"]) * z[h])
                ref = P[p + "W_o.weight"] @ torch.cat(ys)
                self.assertTrue(torch.allclose(got[b, t], ref, rtol=1e-11, atol=1e-12), (b, t))


if __name__ == "__main__":
    unittest.main()
