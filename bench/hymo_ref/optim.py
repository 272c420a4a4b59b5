"""The training step of spec section 3: gradient accumulation with NaN skip,
global-norm clipping, the WSD schedule, NorMuon (batched Newton-Schulz over
same-shape matrices), CautiousAdamW and the MoE gate-bias update."""
import math
import time

import torch

from . import model as M

QUINTIC = (3.4445, -4.7750, 2.0315)


class NanAbort(RuntimeError):
    pass


# ----------------------------------------------------------------------------
# WSD (spec 3.4)

def wsd_phases(sched):
    total = int(sched["total_steps"])
    warmup = int(math.floor(total * sched["warmup_frac"]))
    stable = int(math.floor(total * sched["stable_frac"]))
    return total, warmup, stable, total - warmup - stable


def wsd_factor(t, sched):
    total, warmup, stable, decay = wsd_phases(sched)
    if t < warmup:
        return t / warmup
    if t < warmup + stable:
        return 1.0
    p = 1.0 if decay <= 0 else min(1.0, max(0.0, (t - warmup - stable) / decay))
    kind = sched["decay"]
    if kind == "linear":
        f = 1.0 - p
    elif kind == "cosine":
        f = 0.5 * (1.0 + math.cos(math.pi * p))
    elif kind == "sqrt":
        f = 1.0 - math.sqrt(p)
    else:
        raise ValueError("unknown decay %r" % kind)
    r = sched["min_lr_ratio"]
    return r + (1.0 - r) * f


# ----------------------------------------------------------------------------
# Newton-Schulz and NorMuon (spec 3.2)

def newton_schulz(U, iterations=5, coefficients="quintic"):
    """Orthogonalise a batch of matrices U (k, m, n) (or one (m, n))."""
    single = U.dim() == 2
    if single:
        U = U[None]
    nrm = U.flatten(1).norm(dim=1)
    X = U / (nrm + 1e-7)[:, None, None]
    tr = U.shape[1] > U.shape[2]
    if tr:  # the Gram matrix is min(m, n)^2
        X = X.transpose(1, 2)
    X = X.contiguous()
    for _ in range(int(iterations)):
        A = torch.bmm(X, X.transpose(1, 2))
        if coefficients == "quintic":
            a, b, c = QUINTIC
            Bm = torch.baddbmm(A, A, A, beta=b, alpha=c)       # b A + c A^2
            X = torch.baddbmm(X, Bm, X, beta=a, alpha=1.0)      # a X + B X
        else:
            X = torch.baddbmm(X, A, X, beta=1.5, alpha=-0.5)    # 1.5 X - 0.5 A X
    if tr:
        X = X.transpose(1, 2)
    return X[0] if single else X


def normuon_update(W, G, Mom, V, lr, ocfg, scale="shape"):
    """One NorMuon step on a stack of same-shape matrices, in place.
    W, G, Mom: (k, m, n); V: (k, m).  Written with few passes over the
    matrices: the Frobenius norms of O and O/(sqrt(V)+eps) come from the
    per-row sums of squares."""
    mu = ocfg["momentum"]
    beta2 = ocfg["betas"][1]
    eps = ocfg["eps"]
    wd = ocfg["weight_decay"]
    m, n = W.shape[1], W.shape[2]
    Mom.mul_(mu).add_(G)
    U = torch.add(G, Mom, alpha=mu) if ocfg["nesterov"] else Mom
    O = newton_schulz(U, ocfg["ns_iterations"], ocfg["ns_coefficients"])
    rowsq = torch.linalg.vector_norm(O, dim=2).square_()          # (k, m): sum_cols O^2
    V.mul_(beta2).add_(rowsq, alpha=(1.0 - beta2) / n)            # mean_cols(O^2)
    rs = 1.0 / (V.sqrt() + eps)                                    # O_hat = O * rs (rows)
    nh = (rs * rs * rowsq).sum(1).sqrt()                           # ||O_hat||_F
    if scale == "shape":
        target = rowsq.sum(1).sqrt() * math.sqrt(max(1.0, m / n))  # ||O||_F sqrt(max(1, m/n))
    else:
        target = torch.full_like(nh, 0.2 * math.sqrt(m * n))
    s = torch.where(nh > 0, target / torch.where(nh > 0, nh, torch.ones_like(nh)), torch.zeros_like(nh))
    Op = O * (rs * s[:, None])[:, :, None]                         # O'
    if ocfg["cautious_wd"]:
        mask = torch.mul(Op, W).gt_(0)                             # (O' * W > 0), as 0/1
        W.addcmul_(W, mask, value=-lr * wd)
    else:
        W.mul_(1.0 - lr * wd)
    W.sub_(Op, alpha=lr)


# ----------------------------------------------------------------------------
# CautiousAdamW (spec 3.3)

def adamw_update(W, g, m, v, t, lr, b1, b2, eps, wd, cautious_wd=True):
    """One CautiousAdamW step on one tensor, in place; t = this optimizer's
    update count including this one."""
    m.mul_(b1).add_((1.0 - b1) * g)
    v.mul_(b2).add_((1.0 - b2) * g * g)
    u = (m / (1.0 - b1 ** t)) / ((v / (1.0 - b2 ** t)).sqrt() + eps)
    phi = (u * g > 0).to(u.dtype)
    u = u * phi / max(phi.mean().item(), 1e-3)
    if wd != 0.0:
        mask = (u * W > 0).to(u.dtype) if cautious_wd else 1.0
        u = u + wd * W * mask
    W.sub_(lr * u)


# ----------------------------------------------------------------------------
# Clipping and the gate-bias update

def clip_grads(grads, clip):
    """Global-norm clipping in place (coef = min(1, clip/(norm+1e-6)));
    returns the norm before clipping."""
    norm = torch.sqrt(sum(x.pow(2).sum() for x in grads)).item()
    if clip is not None and clip > 0:
        coef = min(1.0, clip / (norm + 1e-6))
        if coef < 1.0:
            for x in grads:
                x.mul_(coef)
    return norm


def gate_bias_update(bias, ema, counts, alpha, speed):
    """Spec 2.3, in place: ema = (1-alpha) ema + alpha counts; +-speed outside
    [0.95, 1.05] x mean(ema)."""
    ema.mul_(1.0 - alpha).add_(alpha * counts.to(ema.dtype))
    avg = ema.mean()
    over, under = ema > 1.05 * avg, ema < 0.95 * avg
    bias[over] -= speed
    bias[under] += speed


# ----------------------------------------------------------------------------
# The trainer

class Trainer:
    """Holds parameters (leaf tensors), buffers and optimizer state and runs
    optimizer steps on micro-batches from `get_batch(j)` (j = micro-step)."""

    def __init__(self, cfg, params, buffers, dtype=torch.float32):
        self.cfg = cfg
        self.dtype = dtype
        self.P = {k: v.detach().to(dtype).clone().requires_grad_(True) for k, v in params.items()}
        self.B = {k: v.detach().to(dtype).clone() for k, v in buffers.items()}
        specs = M.param_specs(cfg)
        self.specs = {s.name: s for s in specs}
        self.muon_names = [s.name for s in specs if s.optimizer == "normuon"]
        self.adam_names = [s.name for s in specs if s.optimizer == "adamw"]
        groups = {}
        for n in self.muon_names:
            groups.setdefault(tuple(self.P[n].shape), []).append(n)
        self.groups = groups
        self.mom = {sh: torch.zeros((len(ns),) + sh, dtype=dtype) for sh, ns in groups.items()}
        self.vrow = {sh: torch.zeros((len(ns), sh[0]), dtype=dtype) for sh, ns in groups.items()}
        self.adam_m = {n: torch.zeros_like(self.P[n].detach()) for n in self.adam_names}
        self.adam_v = {n: torch.zeros_like(self.P[n].detach()) for n in self.adam_names}
        self.adam_t = 0
        self.step = 0
        self.micro_step = 0
        self.consecutive_nan = 0
        self.moe_layers = [n[: -len("gate_bias")] for n in self.B if n.endswith("gate_bias")]

    # -- weight decay of an AdamW parameter (spec 3.3)
    def adam_wd(self, name):
        o = self.cfg["optimizer"]
        w = self.specs[name].wd
        if w == "embed":
            return float(o["embed_weight_decay"])
        if w == "none" or self.P[name].dim() == 1:
            return 0.0
        return float(o["adamw_weight_decay"])

    def micro_batch(self, tokens):
        return M.forward(self.P, self.B, tokens, self.cfg)

    def train_step(self, get_batch):
        """One optimizer step (gradient_accumulation_steps micro-batches)."""
        t0 = time.perf_counter()
        cfg = self.cfg
        tr = cfg["training"]
        G = int(tr["gradient_accumulation_steps"])
        for p in self.P.values():
            p.grad = None
        counts = {}
        sums = None
        n_ok = skipped = ntok = 0
        for _ in range(G):
            tokens = get_batch(self.micro_step)
            self.micro_step += 1
            ntok += tokens.numel()
            out = self.micro_batch(tokens)
            loss = out["loss"]
            if tr["loss_nan_skip"] and not bool(torch.isfinite(loss.detach())):
                skipped += 1
                self.consecutive_nan += 1
                if self.consecutive_nan >= int(tr["consecutive_nan_limit"]):
                    raise NanAbort("aborting: %d consecutive micro-batches with a non-finite loss"
                                   % self.consecutive_nan)
                continue
            self.consecutive_nan = 0
            (loss / G).backward()
            n_ok += 1
            vals = [loss.item(), out["loss_main"].item()] + [l.item() for l in out["loss_mtp"]]
            sums = vals if sums is None else [a + b for a, b in zip(sums, vals)]
            for k, c in out["counts"].items():
                counts[k] = counts.get(k, 0) + c.to(self.dtype)
        rec = {"step": self.step + 1, "is_update": n_ok > 0, "skipped": skipped}
        if n_ok == 0:
            self.step += 1
            rec.update(loss=None, loss_main=None, loss_mtp=None, grad_norm=None,
                       lr_muon=None, lr_adamw=None)
        else:
            with torch.no_grad():
                rec.update(self.update(counts))
            rec["loss"] = sums[0] / n_ok
            rec["loss_main"] = sums[1] / n_ok
            rec["loss_mtp"] = [s / n_ok for s in sums[2:]]
        dt = time.perf_counter() - t0
        rec["tokens_per_s"] = ntok / dt if dt > 0 else None
        rec["step_ms"] = dt * 1000.0
        return rec

    def grads(self):
        return {n: (p.grad if p.grad is not None else torch.zeros_like(p)) for n, p in self.P.items()}

    def update(self, counts):
        cfg = self.cfg
        o = cfg["optimizer"]
        tr = cfg["training"]
        g = self.grads()
        norm = clip_grads(list(g.values()), tr["grad_clip"])
        factor = wsd_factor(self.step + 1, cfg["scheduler"])
        lr_muon = o["muon_lr"] * factor
        lr_adamw = o["adamw_lr"] * factor
        # NorMuon, batched over same-shape matrices
        for sh, names in self.groups.items():
            W = torch.stack([self.P[n].detach() for n in names])
            Gs = torch.stack([g[n] for n in names])
            normuon_update(W, Gs, self.mom[sh], self.vrow[sh], lr_muon, o, o["muon_scale"])
            for i, n in enumerate(names):
                self.P[n].detach().copy_(W[i])
        # CautiousAdamW
        self.adam_t += 1
        b1, b2 = o["adamw_betas"]
        for n in self.adam_names:
            adamw_update(self.P[n].detach(), g[n], self.adam_m[n], self.adam_v[n], self.adam_t,
                         lr_adamw, b1, b2, o["adamw_eps"], self.adam_wd(n), o["cautious_wd"])
        # gate-bias update (spec 2.3)
        e = cfg["model"]["moe"]
        for p in self.moe_layers:
            c = counts.get(p + "counts")
            if c is not None:
                gate_bias_update(self.B[p + "gate_bias"], self.B[p + "gate_ema"], c,
                                 e["ema_alpha"], e["bias_speed"])
        self.step += 1
        return {"grad_norm": norm, "lr_muon": lr_muon, "lr_adamw": lr_adamw}

    # -- state for checkpoints
    def state_tensors(self):
        out = {}
        for sh, names in self.groups.items():
            for i, n in enumerate(names):
                out["optim.normuon.momentum." + n] = self.mom[sh][i]
                out["optim.normuon.v." + n] = self.vrow[sh][i]
        for n in self.adam_names:
            out["optim.adamw.m." + n] = self.adam_m[n]
            out["optim.adamw.v." + n] = self.adam_v[n]
        out["optim.adamw.t"] = torch.tensor(self.adam_t, dtype=torch.int64)
        out["sched.step"] = torch.tensor(self.step, dtype=torch.int64)
        out["data.micro_step"] = torch.tensor(self.micro_step, dtype=torch.int64)
        out["train.consecutive_nan"] = torch.tensor(self.consecutive_nan, dtype=torch.int64)
        return out

    def load_state_tensors(self, st):
        for sh, names in self.groups.items():
            for i, n in enumerate(names):
                if "optim.normuon.momentum." + n in st:
                    self.mom[sh][i].copy_(st["optim.normuon.momentum." + n])
                    self.vrow[sh][i].copy_(st["optim.normuon.v." + n])
        for n in self.adam_names:
            if "optim.adamw.m." + n in st:
                self.adam_m[n].copy_(st["optim.adamw.m." + n])
                self.adam_v[n].copy_(st["optim.adamw.v." + n])
        for key, attr in (("optim.adamw.t", "adam_t"), ("sched.step", "step"),
                          ("data.micro_step", "micro_step"), ("train.consecutive_nan", "consecutive_nan")):
            if key in st:
                setattr(self, attr, int(st[key].item()))
