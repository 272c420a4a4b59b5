"""The HyMo forward of spec section 2, written from the spec.

Parameters live in a flat dict keyed by the spec section 5 names (order as
docs/params.md); `gate_bias` / `gate_ema` live in a separate buffer dict.
Everything is functional so that autograd gives every parameter's gradient.
"""
import math

import torch
import torch.nn.functional as F


# ----------------------------------------------------------------------------
# Parameter table and init (spec sections 2.5, 3.1, 5)

class ParamSpec:
    __slots__ = ("name", "shape", "optimizer", "init", "wd")

    def __init__(self, name, shape, optimizer, init, wd=None):
        self.name, self.shape, self.optimizer, self.init, self.wd = name, tuple(shape), optimizer, init, wd


def param_specs(cfg):
    """All parameters and buffers in docs/params.md order.

    optimizer: 'normuon' | 'adamw' | 'none' (buffers).  wd (AdamW only):
    'embed' (embed_weight_decay), 'none' (0) or 'adamw' (adamw_weight_decay).
    init: ('linear', fan_in) | ('normal', std) | ('ones',) | ('zeros',) | ('alog',).
    """
    m = cfg["model"]
    dim, V = m["dim"], m["vocab_size"]
    g, a, e = m["gdn"], m["mla"], m["moe"]
    out = []

    def add(name, shape, opt, init, wd=None):
        out.append(ParamSpec(name, shape, opt, init, wd))

    def lin(name, o, i):
        add(name, (o, i), "normuon", ("linear", i))

    def norm(name, n):
        add(name, (n,), "adamw", ("ones",), "none")

    def g_layer(p):
        H, D, S, Fh = g["n_heads"], g["head_dim"], g["state_dim"], m["ffn_hidden"]
        norm(p + "norm1.weight", dim)
        lin(p + "mixer.W_v.weight", H * D, dim)
        lin(p + "mixer.W_b.weight", H * S, dim)
        lin(p + "mixer.W_c.weight", H * S, dim)
        lin(p + "mixer.W_g.weight", H, dim)
        lin(p + "mixer.W_z.weight", H * D, dim)
        lin(p + "mixer.W_o.weight", dim, H * D)
        add(p + "mixer.dt_bias", (H,), "adamw", ("zeros",), "none")
        add(p + "mixer.A_log", (H, S), "adamw", ("alog",), "none")
        add(p + "mixer.D_skip", (H,), "adamw", ("ones",), "none")
        norm(p + "mixer.norm_y.weight", D)
        norm(p + "norm2.weight", dim)
        lin(p + "ffn.W1.weight", Fh, dim)
        lin(p + "ffn.W2.weight", dim, Fh)
        lin(p + "ffn.W3.weight", Fh, dim)

    def m_layer(p):
        H = a["n_heads"]
        dn, dr, dv = a["qk_nope_head_dim"], a["qk_rope_head_dim"], a["v_head_dim"]
        rq, rkv = a["q_lora_rank"], a["kv_lora_rank"]
        E, h = e["n_routed"], e["expert_hidden"]
        norm(p + "norm1.weight", dim)
        lin(p + "mixer.W_qa.weight", rq, dim)
        norm(p + "mixer.norm_q.weight", rq)
        lin(p + "mixer.W_qb.weight", H * (dn + dr), rq)
        lin(p + "mixer.W_kva.weight", rkv + dr, dim)
        norm(p + "mixer.norm_kv.weight", rkv)
        lin(p + "mixer.W_kvb.weight", H * (dn + dv), rkv)
        lin(p + "mixer.W_o.weight", dim, H * dv)
        norm(p + "norm2.weight", dim)
        add(p + "ffn.gate.weight", (E, dim), "adamw", ("normal", 0.006), "adamw")
        add(p + "ffn.gate_bias", (E,), "none", ("zeros",))
        add(p + "ffn.gate_ema", (E,), "none", ("zeros",))
        add(p + "ffn.experts.W1", (E, h, dim), "adamw", ("linear", dim), "adamw")
        add(p + "ffn.experts.W2", (E, dim, h), "adamw", ("linear", h), "adamw")
        add(p + "ffn.experts.W3", (E, h, dim), "adamw", ("linear", dim), "adamw")
        if e["n_shared"] > 0:
            hs = e["n_shared"] * h
            add(p + "ffn.shared.W1.weight", (hs, dim), "adamw", ("linear", dim), "adamw")
            add(p + "ffn.shared.W2.weight", (dim, hs), "adamw", ("linear", hs), "adamw")
            add(p + "ffn.shared.W3.weight", (hs, dim), "adamw", ("linear", dim), "adamw")

    add("embed.weight", (V, dim), "adamw", ("normal", 1.0), "embed")
    add("head.weight", (V, dim), "adamw", ("linear", dim), "embed")
    norm("norm_f.weight", dim)
    for i in range(m["n_layers"]):
        (g_layer if layer_kind(cfg, i) == "G" else m_layer)("layers.%d." % i)
    for k in range(m["mtp"]["depth"]):
        p = "mtp.%d." % k
        norm(p + "norm_h.weight", dim)
        norm(p + "norm_e.weight", dim)
        lin(p + "proj.weight", dim, 2 * dim)
        g_layer(p + "layer.")
    return out


def layer_kind(cfg, i):
    pat = cfg["model"]["layer_pattern"]
    return pat[i % len(pat)]


def init_params(cfg, seed=None, dtype=torch.float32):
    """Spec section 2.5 init, drawn in FP32 from one seeded torch.Generator in
    parameter order (then cast to `dtype`).  Returns (params, buffers)."""
    if seed is None:
        seed = cfg["training"]["seed"]
    gen = torch.Generator().manual_seed(int(seed))
    params, buffers = {}, {}
    for s in param_specs(cfg):
        kind = s.init[0]
        if kind == "linear":
            bound = 1.0 / math.sqrt(s.init[1])
            t = torch.empty(s.shape, dtype=torch.float32).uniform_(-bound, bound, generator=gen)
        elif kind == "normal":
            t = torch.empty(s.shape, dtype=torch.float32).normal_(0.0, s.init[1], generator=gen)
        elif kind == "ones":
            t = torch.ones(s.shape, dtype=torch.float32)
        elif kind == "zeros":
            t = torch.zeros(s.shape, dtype=torch.float32)
        elif kind == "alog":  # A_log[h, s] = log(h + 1)
            H, S = s.shape
            t = torch.log(torch.arange(1, H + 1, dtype=torch.float64)).to(torch.float32)
            t = t[:, None].expand(H, S).contiguous()
        else:
            raise AssertionError(kind)
        (buffers if s.optimizer == "none" else params)[s.name] = t.to(dtype)
    return params, buffers


# ----------------------------------------------------------------------------
# Building blocks

def _wide(dtype):
    """At least FP32."""
    return torch.promote_types(dtype, torch.float32)


def rms_norm(x, w, eps):
    xf = x.to(_wide(x.dtype))
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return (y * w.to(xf.dtype)).to(x.dtype)


def linear(x, w):
    return torch.matmul(x, w.t())


def swiglu(x, w1, w2, w3):
    return linear(F.silu(linear(x, w1)) * linear(x, w3), w2)


# ----------------------------------------------------------------------------
# GDN recurrence: h_t = diag(exp(la_t)) h_{t-1} + b_t v_t^T ; o_t = c_t^T h_t

def gdn_recurrence_naive(c, b, v, la):
    """Sequential reference. c, b, la: (B,T,H,S); v: (B,T,H,D). Returns (B,T,H,D)."""
    Bsz, T, H, S = b.shape
    D = v.shape[-1]
    h = v.new_zeros(Bsz, H, S, D)
    outs = []
    for t in range(T):
        h = torch.exp(la[:, t])[..., None] * h + b[:, t][..., None] * v[:, t][..., None, :]
        outs.append((c[:, t][..., None] * h).sum(-2))
    return torch.stack(outs, 1)


def _sub_chunk(L):
    """Sub-chunk length: the pairwise (diagonal-block) work grows with it, the
    off-diagonal K tensor with L / it; take the divisor minimising the sum
    (8 for L = 64); short chunks are one block.  Stability does not depend on
    it (only exponents <= 0 are evaluated either way)."""
    if L <= 16:
        return L
    return min((d for d in range(1, L + 1) if L % d == 0), key=lambda d: (d + L // d, -d))


def gdn_recurrence_chunked(c, b, v, la, chunk_size):
    """Chunked gated-linear-attention form of the GDN recurrence.

    Within a chunk of L steps with inclusive cumulative log-decay Lam_t
    (<= 0, non-increasing):
      o_t = (c_t * exp(Lam_t))^T H0 + sum_{tau<=t} [sum_s c_t,s exp(Lam_t,s - Lam_tau,s) b_tau,s] v_tau
      H_L = exp(Lam_L) * H0 + sum_tau (b_tau * exp(Lam_L - Lam_tau)) v_tau^T
    Only exponents <= 0 are ever evaluated.  The intra-chunk matrix is split
    into sub-chunks of Ls steps (see _sub_chunk): a block (i, j), j < i, is a masked matrix
    product whose decay ratios are taken relative to the last step of
    sub-chunk i-1 (a point inside the chunk: both factors are <= 1); a
    diagonal block uses the exact pairwise decay (Ls x Ls x S, masked before
    exp).  States are carried between chunks by a short scan.
    """
    Bsz, T, H, S = b.shape
    D = v.shape[-1]
    L = int(chunk_size)
    nc = -(-T // L)
    Tp = nc * L
    wd = _wide(v.dtype)

    def prep(x):
        x = x.to(wd).permute(0, 2, 1, 3)  # (B,H,T,.)
        if Tp != T:
            x = F.pad(x, (0, 0, 0, Tp - T))
        return x.reshape(Bsz, H, nc, L, x.shape[-1])

    c, b, v, la = prep(c), prep(b), prep(v), prep(la)
    lam = torch.cumsum(la, dim=-2)                      # (B,H,nc,L,S)
    Ls = _sub_chunk(L)
    ns = L // Ls
    lam_s = lam.reshape(Bsz, H, nc, ns, Ls, S)
    c_s = c.reshape(Bsz, H, nc, ns, Ls, S)
    b_s = b.reshape(Bsz, H, nc, ns, Ls, S)
    v_s = v.reshape(Bsz, H, nc, ns, Ls, D)
    neg_inf = torch.tensor(float("-inf"), dtype=wd)

    # diagonal sub-chunk blocks: exact pairwise decay, masked before exp
    tri = torch.ones(Ls, Ls, dtype=torch.bool).tril()  # tau <= t
    diff = lam_s[..., :, None, :] - lam_s[..., None, :, :]          # (...,Ls_t,Ls_tau,S)
    dec = torch.exp(torch.where(tri[:, :, None], diff, neg_inf))
    a_diag = (dec * c_s[..., :, None, :] * b_s[..., None, :, :]).sum(-1)   # (...,ns,Ls,Ls)
    o = torch.matmul(a_diag, v_s)                                    # (...,ns,Ls,D)

    if ns > 1:
        # reference of sub-chunk i: Lam at its previous step (0 = chunk start for i = 0)
        ref = torch.cat([lam.new_zeros(Bsz, H, nc, 1, S), lam_s[..., :-1, -1, :]], dim=3)  # (..,ns,S)
        q_rel = c_s * torch.exp(lam_s - ref[..., None, :])           # exponent <= 0
        pos = torch.arange(L)
        before = pos[None, :] < (torch.arange(ns) * Ls)[:, None]    # (ns, L): tau < i*Ls
        kd = ref[..., :, None, :] - lam[..., None, :, :]           # (...,ns,L,S), <= 0 where kept
        k_rel = b[..., None, :, :] * torch.exp(torch.where(before[:, :, None], kd, neg_inf))
        a_inter = torch.matmul(q_rel, k_rel.transpose(-1, -2))      # (...,ns,Ls,L)
        o = o + torch.matmul(a_inter, v[..., None, :, :])
    o = o.reshape(Bsz, H, nc, L, D)

    # inter-chunk state carry
    lam_last = lam[..., -1:, :]                                      # (...,nc,1,S)
    k_end = b * torch.exp(lam_last - lam)
    dH = torch.matmul(k_end.transpose(-1, -2), v)                    # (...,nc,S,D)
    if nc > 1:
        decay = torch.exp(lam_last[..., 0, :])                       # (...,nc,S)
        states = [v.new_zeros(Bsz, H, S, D)]
        for n in range(nc - 1):
            states.append(decay[:, :, n, :, None] * states[-1] + dH[:, :, n])
        h0 = torch.stack(states, dim=2)                              # (...,nc,S,D)
        o = o + torch.matmul(c * torch.exp(lam), h0)
    o = o.reshape(Bsz, H, Tp, D)[:, :, :T]
    return o.permute(0, 2, 1, 3)


# ----------------------------------------------------------------------------
# Mixers and FFNs

def gdn_mixer(P, p, u, cfg, naive=False):
    g = cfg["model"]["gdn"]
    H, D, S = g["n_heads"], g["head_dim"], g["state_dim"]
    Bsz, T, _ = u.shape
    v = linear(u, P[p + "W_v.weight"]).reshape(Bsz, T, H, D)
    b = linear(u, P[p + "W_b.weight"]).reshape(Bsz, T, H, S)
    c = linear(u, P[p + "W_c.weight"]).reshape(Bsz, T, H, S)
    wd = _wide(u.dtype)
    gate = torch.sigmoid(linear(u, P[p + "W_g.weight"]).to(wd) + P[p + "dt_bias"].to(wd))  # (B,T,H)
    A = -torch.exp(P[p + "A_log"].to(wd))                                                   # (H,S)
    la = gate[..., None] * A                                                                # (B,T,H,S)
    if naive:
        o = gdn_recurrence_naive(c.to(wd), b.to(wd), v.to(wd), la)
    else:
        o = gdn_recurrence_chunked(c, b, v, la, g["chunk_size"])
    y = o + P[p + "D_skip"].to(wd)[:, None] * v.to(wd)
    y = rms_norm(y, P[p + "norm_y.weight"], cfg["model"]["norm_eps"]).to(u.dtype)
    y = y * F.silu(linear(u, P[p + "W_z.weight"])).reshape(Bsz, T, H, D)
    return linear(y.reshape(Bsz, T, H * D), P[p + "W_o.weight"])


def rope(x, theta, pos_dtype):
    """Rotate-half RoPE on the last dim (dr), positions 0..T-1 along dim 1."""
    T, dr = x.shape[1], x.shape[-1]
    h = dr // 2
    wd = _wide(x.dtype)
    i = torch.arange(h, dtype=torch.float64)
    inv = (float(theta) ** (-2.0 * i / dr)).to(wd)
    ang = torch.arange(T, dtype=wd)[:, None] * inv[None, :]              # (T,h)
    shape = [1, T] + [1] * (x.dim() - 3) + [h]
    cos, sin = torch.cos(ang).reshape(shape), torch.sin(ang).reshape(shape)
    xf = x.to(wd)
    x1, x2 = xf[..., :h], xf[..., h:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1).to(x.dtype)


def mla_mixer(P, p, u, cfg):
    m = cfg["model"]
    a = m["mla"]
    H, dn, dr, dv = a["n_heads"], a["qk_nope_head_dim"], a["qk_rope_head_dim"], a["v_head_dim"]
    rkv, eps = a["kv_lora_rank"], m["norm_eps"]
    Bsz, T, _ = u.shape
    q = linear(rms_norm(linear(u, P[p + "W_qa.weight"]), P[p + "norm_q.weight"], eps), P[p + "W_qb.weight"])
    q = q.reshape(Bsz, T, H, dn + dr)
    q_nope, q_rope = q[..., :dn], rope(q[..., dn:], m["rope_theta"], u.dtype)
    kv = linear(u, P[p + "W_kva.weight"])
    c_kv, k_rope = kv[..., :rkv], rope(kv[..., rkv:], m["rope_theta"], u.dtype)   # k_rope (B,T,dr)
    kvb = linear(rms_norm(c_kv, P[p + "norm_kv.weight"], eps), P[p + "W_kvb.weight"]).reshape(Bsz, T, H, dn + dv)
    k_nope, val = kvb[..., :dn], kvb[..., dn:]
    qn, qr = q_nope.transpose(1, 2), q_rope.transpose(1, 2)              # (B,H,T,.)
    kn, vv = k_nope.transpose(1, 2), val.transpose(1, 2)
    scores = torch.matmul(qn, kn.transpose(-1, -2)) + torch.matmul(qr, k_rope[:, None].transpose(-1, -2))
    wd = _wide(u.dtype)
    scores = scores.to(wd) * (1.0 / math.sqrt(dn + dr))
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    att = torch.softmax(scores, dim=-1).to(u.dtype)
    o = torch.matmul(att, vv).transpose(1, 2).reshape(Bsz, T, H * dv)
    return linear(o, P[p + "W_o.weight"])


def moe_route(logits, gate_bias, k, capacity_factor):
    """Routing of spec 2.3 (no autograd through the choices).
    logits: (N,E) FP32.  Returns p, sel (N,k), keep (N,k) bool, counts (E), capacity."""
    N, E = logits.shape
    p = torch.softmax(logits, dim=-1)
    score = p.detach() + gate_bias.to(p.dtype)
    # stable descending sort: ties go to the lower expert index, slots ordered by score
    sel = torch.sort(score, dim=-1, descending=True, stable=True).indices[:, :k]
    capacity = max(1, int(math.floor(capacity_factor * N * k / E)))
    flat = sel.reshape(-1)                                   # token-major, then slot
    onehot = F.one_hot(flat, E)
    pos = (torch.cumsum(onehot, 0) - 1).gather(1, flat[:, None])[:, 0]   # rank within expert
    keep = (pos < capacity).reshape(N, k)
    counts = torch.bincount(flat, minlength=E)
    return p, sel, keep, pos.reshape(N, k), counts, capacity


def moe_ffn(P, B_, p, u, cfg):
    e = cfg["model"]["moe"]
    E, k = e["n_routed"], e["top_k"]
    Bsz, T, dim = u.shape
    x = u.reshape(Bsz * T, dim)
    N = x.shape[0]
    wd = _wide(u.dtype)
    logits = linear(x.to(wd), P[p + "gate.weight"].to(wd))
    prob, sel, keep, pos, counts, cap = moe_route(logits, B_[p + "gate_bias"], k, e["capacity_factor"])
    psel = prob.gather(1, sel)
    w = (psel / psel.sum(-1, keepdim=True)).to(u.dtype)       # (N,k)
    tok = torch.arange(N)[:, None].expand(N, k)[keep]
    slot = (sel * cap + pos)[keep]
    wk = w[keep]
    buf = x.new_zeros(E * cap, dim).index_copy(0, slot, x[tok]).reshape(E, cap, dim)
    W1, W2, W3 = P[p + "experts.W1"], P[p + "experts.W2"], P[p + "experts.W3"]
    hid = F.silu(torch.bmm(buf, W1.transpose(1, 2))) * torch.bmm(buf, W3.transpose(1, 2))
    y = torch.bmm(hid, W2.transpose(1, 2)).reshape(E * cap, dim)
    out = x.new_zeros(N, dim).index_add(0, tok, y[slot] * wk[:, None])
    if (p + "shared.W1.weight") in P:
        out = out + swiglu(x, P[p + "shared.W1.weight"], P[p + "shared.W2.weight"], P[p + "shared.W3.weight"])
    return out.reshape(Bsz, T, dim), counts


def g_layer(P, p, x, cfg, naive=False):
    eps = cfg["model"]["norm_eps"]
    x = x + gdn_mixer(P, p + "mixer.", rms_norm(x, P[p + "norm1.weight"], eps), cfg, naive)
    u = rms_norm(x, P[p + "norm2.weight"], eps)
    return x + swiglu(u, P[p + "ffn.W1.weight"], P[p + "ffn.W2.weight"], P[p + "ffn.W3.weight"])


def ce_loss(logits, targets):
    wd = _wide(logits.dtype)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).to(wd), targets.reshape(-1))


# ----------------------------------------------------------------------------
# The whole model

def forward(P, Bf, tokens, cfg, naive=False, want_logits=False):
    """Returns a dict: loss, loss_main, loss_mtp (list), counts {layer name: (E)},
    and logits (B,T,V) when want_logits."""
    m = cfg["model"]
    eps = m["norm_eps"]
    tokens = tokens.long()
    Bsz, T = tokens.shape
    emb_w = P["embed.weight"]
    x = F.embedding(tokens, emb_w)
    counts = {}
    for i in range(m["n_layers"]):
        p = "layers.%d." % i
        if layer_kind(cfg, i) == "G":
            x = g_layer(P, p, x, cfg, naive)
        else:
            x = x + mla_mixer(P, p + "mixer.", rms_norm(x, P[p + "norm1.weight"], eps), cfg)
            y, cnt = moe_ffn(P, Bf, p + "ffn.", rms_norm(x, P[p + "norm2.weight"], eps), cfg)
            x = x + y
            counts[p + "ffn.counts"] = cnt
    h = x
    logits = linear(rms_norm(h, P["norm_f.weight"], eps), P["head.weight"])
    loss_main = ce_loss(logits[:, :-1], tokens[:, 1:])
    loss = loss_main
    mtp_losses = []
    for kk in range(1, m["mtp"]["depth"] + 1):
        p = "mtp.%d." % (kk - 1)
        if T - kk - 1 < 1:
            raise ValueError("seq_len %d too short for MTP depth %d" % (T, kk))
        e = F.embedding(tokens[:, kk:], emb_w)                                 # tokens[t+k], t < T-k
        z = torch.cat([rms_norm(h[:, : T - kk], P[p + "norm_h.weight"], eps),
                       rms_norm(e, P[p + "norm_e.weight"], eps)], -1)
        h = g_layer(P, p + "layer.", linear(z, P[p + "proj.weight"]), cfg, naive)
        lg = linear(rms_norm(h[:, : T - kk - 1], P["norm_f.weight"], eps), P["head.weight"])
        lk = ce_loss(lg, tokens[:, kk + 1:])
        mtp_losses.append(lk)
        loss = loss + m["mtp"]["weights"][kk - 1] * lk
    out = {"loss": loss, "loss_main": loss_main, "loss_mtp": mtp_losses, "counts": counts}
    if want_logits:
        out["logits"] = logits
    return out
