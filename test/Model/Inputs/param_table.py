#!/usr/bin/env python3
"""An independent reading of spec §3.1 and §5, for the lit tests.

  param_table.py spec CONFIG.yaml     prints the parameter table the spec
                                      prescribes for CONFIG (NAME SHAPE
                                      OPTIMIZER, total, active)
  param_table.py module FILE.mlir     prints the table read off @forward's
                                      argument attributes in printed IR

The lit tests diff these against `hymo-opt --hymo-param-table`.
"""
import re
import sys

import yaml


def spec_table(cfg):
    m = cfg["model"]
    dim, V = m["dim"], m["vocab_size"]
    g, a, e = m["gdn"], m["mla"], m["moe"]
    rows = []

    def add(name, shape, opt):
        rows.append((name, list(shape), opt))

    def g_layer(p):
        H, D, S = g["n_heads"], g["head_dim"], g["state_dim"]
        add(p + "norm1.weight", [dim], "adamw")
        for w, shape in [("W_v", [H * D, dim]), ("W_b", [H * S, dim]), ("W_c", [H * S, dim]),
                         ("W_g", [H, dim]), ("W_z", [H * D, dim]), ("W_o", [dim, H * D])]:
            add(p + "mixer." + w + ".weight", shape, "normuon")
        add(p + "mixer.dt_bias", [H], "adamw")
        add(p + "mixer.A_log", [H, S], "adamw")
        add(p + "mixer.D_skip", [H], "adamw")
        add(p + "mixer.norm_y.weight", [D], "adamw")
        add(p + "norm2.weight", [dim], "adamw")
        F = m["ffn_hidden"]
        add(p + "ffn.W1.weight", [F, dim], "normuon")
        add(p + "ffn.W2.weight", [dim, F], "normuon")
        add(p + "ffn.W3.weight", [F, dim], "normuon")

    def m_layer(p):
        H = a["n_heads"]
        dn, dr, dv = a["qk_nope_head_dim"], a["qk_rope_head_dim"], a["v_head_dim"]
        rq, rkv = a["q_lora_rank"], a["kv_lora_rank"]
        add(p + "norm1.weight", [dim], "adamw")
        add(p + "mixer.W_qa.weight", [rq, dim], "normuon")
        add(p + "mixer.norm_q.weight", [rq], "adamw")
        add(p + "mixer.W_qb.weight", [H * (dn + dr), rq], "normuon")
        add(p + "mixer.W_kva.weight", [rkv + dr, dim], "normuon")
        add(p + "mixer.norm_kv.weight", [rkv], "adamw")
        add(p + "mixer.W_kvb.weight", [H * (dn + dv), rkv], "normuon")
        add(p + "mixer.W_o.weight", [dim, H * dv], "normuon")
        add(p + "norm2.weight", [dim], "adamw")
        E, Hd = e["n_routed"], e["expert_hidden"]
        add(p + "ffn.gate.weight", [E, dim], "adamw")
        add(p + "ffn.gate_bias", [E], "none")
        add(p + "ffn.gate_ema", [E], "none")
        add(p + "ffn.experts.W1", [E, Hd, dim], "adamw")
        add(p + "ffn.experts.W2", [E, dim, Hd], "adamw")
        add(p + "ffn.experts.W3", [E, Hd, dim], "adamw")
        if e["n_shared"] > 0:
            Hs = e["n_shared"] * Hd
            add(p + "ffn.shared.W1.weight", [Hs, dim], "adamw")
            add(p + "ffn.shared.W2.weight", [dim, Hs], "adamw")
            add(p + "ffn.shared.W3.weight", [Hs, dim], "adamw")

    add("embed.weight", [V, dim], "adamw")
    add("head.weight", [V, dim], "adamw")
    add("norm_f.weight", [dim], "adamw")
    pattern = m["layer_pattern"]
    n_moe = 0
    for i in range(m["n_layers"]):
        kind = pattern[i % len(pattern)]
        (g_layer if kind == "G" else m_layer)("layers.%d." % i)
        n_moe += kind == "M"
    for k in range(m["mtp"]["depth"]):
        p = "mtp.%d." % k
        add(p + "norm_h.weight", [dim], "adamw")
        add(p + "norm_e.weight", [dim], "adamw")
        add(p + "proj.weight", [dim, 2 * dim], "normuon")
        g_layer(p + "layer.")
    total = sum(prod(s) for n, s, o in rows if o != "none")
    per_expert = 3 * e["expert_hidden"] * dim
    active = total - n_moe * (e["n_routed"] - e["top_k"]) * per_expert
    return rows, total, active


def prod(shape):
    out = 1
    for s in shape:
        out *= s
    return out


ARG = re.compile(r'%arg\d+: tensor<((?:\d+x)+)(?:f32|f64|i32)> \{([^}]*)\}')


def module_table(text):
    rows = []
    header = text[text.index("func.func @forward("):]
    header = header[:header.index(") -> (")]
    for shape, attrs in ARG.findall(header):
        kv = dict(re.findall(r'hymo\.(\w+) = "([^"]*)"', attrs))
        if kv.get("role") == "input":
            continue
        rows.append((kv["name"], [int(s) for s in shape.rstrip("x").split("x")], kv["optimizer"]))
    return rows


def fmt(rows, total=None, active=None):
    for n, s, o in rows:
        print(n, "x".join(str(d) for d in s), o)
    if total is not None:
        print("total", total)
        print("active", active)


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "spec":
        with open(path) as f:
            fmt(*spec_table(yaml.safe_load(f)))
    else:
        with open(path) as f:
            fmt(module_table(f.read()))
