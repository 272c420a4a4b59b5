#!/usr/bin/env python3
"""Read the per-CTA clock stamps of a profiling build (HYMO_GDN_CLOCKS=1) and say where a CTA's
time goes: its wait for the kernel before it, its prologue, its first, middle and last chunks,
and how the CTAs fill the SMs over the kernel's span.

The stamps come from `hymo_gdn_bench --clocks FILE` (records of 16 header words, then
kernels x CTAs x 32 or 128 words; the words are gdn.cuh's ClkWord). Each kernel's stamps are those of
its last call in the benchmark: the state, training output, adjoint and backward main passes
from the last forward + backward call, the plain output pass from the last plain forward.

Usage: scripts/gdn-clocks.py FILE[.xz] [--json] [--ctas N]   (--ctas: print N CTAs' rows a kernel)
"""
import argparse
import json
import lzma
import struct
import sys
from collections import Counter

MAGIC = 0x31304B4C434E4447  # "GDNCLK01"
NAMES = ["state pass", "output pass (plain)", "training output pass", "adjoint pass", "backward main"]
W_GT_ENTER, W_GT_EXIT, W_WHERE, W_ENTER, W_WAITED, W_EXIT, W_NCH, W_CHUNK0 = 0, 1, 2, 3, 4, 5, 6, 8
W_CHUNK_END = 32  # chunk stamps in words 8..31 (records of 32 words and more)
# the backward main kernel's phases (records of 128 words, session 47): for its first 8 chunks,
# thread 0 after the staging (W_STAGED + k), lane 0 of each of 8 warps at its role's end
# (W_ROLE + 8 k + warp), thread 0 after the tail (W_TAIL + k)
W_STAGED, W_ROLE, W_TAIL, PH_CHUNKS, PH_WARPS = 32, 40, 104, 8, 8


def fail(msg):
    print(f"gdn-clocks: {msg}", file=sys.stderr)
    sys.exit(2)


def records(path):
    try:
        data = (lzma.open if path.endswith(".xz") else open)(path, "rb").read()
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror or e}")
    except lzma.LZMAError as e:
        fail(f"cannot read {path}: {e}")
    off = 0
    while off < len(data):
        if len(data) - off < 128:
            fail(f"{path}: a truncated record header at byte {off}")
        hdr = struct.unpack_from("<16Q", data, off)
        if hdr[0] != MAGIC:
            fail(f"{path}: no record at byte {off} (magic {hdr[0]:#x}; not a --clocks file?)")
        nk, nc, nw = hdr[7], hdr[8], hdr[9]
        if not (1 <= nk <= 64 and 1 <= nc <= 1 << 20 and 8 < nw <= 256):
            fail(f"{path}: implausible record sizes at byte {off}: {nk} kernels, {nc} CTAs, {nw} words")
        n = nk * nc * nw
        if len(data) - off - 128 < 8 * n:
            fail(f"{path}: a truncated record at byte {off}")
        words = struct.unpack_from(f"<{n}Q", data, off + 128)
        yield {"B": hdr[1], "T": hdr[2], "H": hdr[3], "D": hdr[4], "S": hdr[5], "segments": hdr[6]}, nk, nc, nw, words
        off += 128 + 8 * n


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def kernel_report(name, ctas, nshow):
    """ctas: list of dicts of one kernel's CTAs. Returns a summary dict and prints it."""
    # the SM clock's rate from each CTA's two clocks (cycles / ns = GHz)
    rates = [(c["exit"] - c["enter"]) / (c["gt_exit"] - c["gt_enter"]) for c in ctas
             if c["gt_exit"] > c["gt_enter"] + 2000]
    ghz = median(rates) if rates else 1.98
    us = lambda cyc: cyc / ghz / 1000.0  # noqa: E731
    t0 = min(c["gt_enter"] for c in ctas)
    t1 = max(c["gt_exit"] for c in ctas)
    span = (t1 - t0) / 1000.0
    sms = {}
    for c in ctas:
        sms.setdefault(c["sm"], []).append(c)
    # the most CTAs resident on one SM at once (from the global timer)
    slots = 1
    for lst in sms.values():
        ev = sorted([(c["gt_enter"], 1) for c in lst] + [(c["gt_exit"], -1) for c in lst], key=lambda e: (e[0], e[1]))
        cur = 0
        for _, d in ev:
            cur += d
            slots = max(slots, cur)
    wait = [us(c["waited"] - c["enter"]) for c in ctas if c["waited"]]
    # HYMO_GDN_OUT_EARLY (session 57): the plain output pass waits inside its first chunk (after
    # its P V), or its first segments at their end, so its "wait" there holds the first chunk's
    # intra-chunk work and a CTA stamped "waited" after its first chunk's stamp has no prologue
    late = sum(1 for c in ctas if c["waited"] and c["chunks"] and c["waited"] > c["chunks"][0])
    pro = [us(c["chunks"][0] - c["waited"]) for c in ctas if c["waited"] and c["chunks"] and c["waited"] <= c["chunks"][0]]
    first, mid, last, per_chunk = [], [], [], {}
    for c in ctas:
        ch = c["chunks"]
        if not ch:
            continue
        ends = ch[1:] + [c["exit"]]
        d = [us(e - s) for s, e in zip(ch, ends)]
        for k, x in enumerate(d):
            per_chunk.setdefault(k, []).append(x)
        if c["nch"] != len(ch):  # more chunks than stamps: the last stamp's "chunk" runs to the end
            continue
        first.append(d[0])
        last.append(d[-1])
        mid.extend(d[1:-1])
    busy = [us(c["exit"] - c["enter"]) for c in ctas]
    work = [us(c["exit"] - c["waited"]) for c in ctas if c["waited"]]
    nsm = len(sms)
    fill = sum(busy) / (nsm * slots * span) if span > 0 else float("nan")
    fill_work = sum(work) / (nsm * slots * span) if span > 0 and work else float("nan")
    sm_end = sorted((max(c["gt_exit"] for c in lst) - t0) / 1000.0 for lst in sms.values())
    sm_start = sorted((min(c["gt_enter"] for c in lst) - t0) / 1000.0 for lst in sms.values())
    # the gap between a CTA's exit and the entry of the next CTA in the same slot (approx.:
    # the next CTA on the SM to enter after it exits)
    gaps = []
    for lst in sms.values():
        ent = sorted(c["gt_enter"] for c in lst)
        for c in lst:
            nxt = [e for e in ent if e >= c["gt_exit"]]
            if nxt:
                gaps.append((nxt[0] - c["gt_exit"]) / 1000.0)
    # per SM: how many CTAs it ran and their chunks, when it ended; per middle chunk: how many
    # CTAs of the kernel shared its SM at the chunk's midpoint (a lone CTA runs faster, but
    # its SM then issues less)
    per_sm_ctas = Counter(len(lst) for lst in sms.values())
    per_sm_chunks = Counter(sum(c["nch"] for c in lst) for lst in sms.values())
    by_res = {}
    for c in ctas:
        ch = c["chunks"]
        if c["nch"] != len(ch) or len(ch) < 3:
            continue
        rate = (c["exit"] - c["enter"]) / max(1, c["gt_exit"] - c["gt_enter"])
        lst = sms[c["sm"]]
        for s_, e in zip(ch[1:-1], ch[2:]):
            midt = c["gt_enter"] + ((s_ + e) / 2 - c["enter"]) / rate
            res = sum(1 for o in lst if o["gt_enter"] <= midt <= o["gt_exit"])
            by_res.setdefault(res, []).append(us(e - s_))
    pct = lambda xs, q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
    # In step or not (session 47, HYMO_GDN_BWD_STAGGER): for two CTAs on one SM at once, where each
    # chunk top of one falls in the other's chunk cycle (0: at its chunk top too, 0.5: half a chunk
    # off; the SM's clock64 is the same counter for both). Uniform offsets give a mean distance
    # from the nearest chunk top of 0.25 and 20% of them within 0.1.
    dist = []
    for lst in sms.values():
        for a_ in lst:
            for b_ in lst:
                if a_ is b_ or b_["nch"] != len(b_["chunks"]) or len(b_["chunks"]) < 2:
                    continue
                tops = b_["chunks"] + [b_["exit"]]
                for t in a_["chunks"][1:]:
                    for s0, s1 in zip(tops, tops[1:]):
                        if s0 <= t < s1 and s1 > s0:
                            ph = (t - s0) / (s1 - s0)
                            dist.append(min(ph, 1 - ph))
                            break
    # the first CTAs of each SM: is the second one's linear index in [n, 2n) for n SMs (the block
    # scheduler filling the SMs breadth-first, which cta_stagger assumes)?
    bf = [sorted(lst, key=lambda c: c["gt_enter"])[:2] for lst in sms.values() if len(lst) >= 2]
    bf_ok = sum(1 for x, y in bf if min(x["cta"], y["cta"]) < nsm <= max(x["cta"], y["cta"]) < 2 * nsm)
    mid_m = median(mid) if mid else median(per_chunk.get(0, [float("nan")]))
    nch_all = [c["nch"] for c in ctas]
    ideal = sum(n * mid_m for n in nch_all)  # every chunk at the middle chunks' median
    over = 1 - ideal / sum(work) if work and sum(work) > 0 else float("nan")
    s = {
        "kernel": name, "ctas": len(ctas), "sms": nsm, "ctas_per_sm": slots, "clock_ghz": round(ghz, 3),
        "span_us": round(span, 2), "cta_us_median": round(median(busy), 2),
        "wait_us_median": round(median(wait), 2), "prologue_us_median": round(median(pro), 2),
        "first_chunk_us_median": round(median(first), 3), "middle_chunk_us_median": round(mid_m, 3),
        "last_chunk_us_median": round(median(last), 3), "chunks_median": median(nch_all),
        "fill": round(fill, 3), "fill_after_wait": round(fill_work, 3),
        "overhead_vs_middle_chunks": round(over, 3),
        "sm_first_idle_us": round(sm_end[0], 2), "sm_last_start_us": round(sm_start[-1], 2),
        "slot_gap_us_median": round(median(gaps), 2) if gaps else None,
        "per_chunk_us_median": [round(median(per_chunk[k]), 3) for k in sorted(per_chunk)],
        "ctas_an_sm": dict(sorted(per_sm_ctas.items())), "chunks_an_sm": dict(sorted(per_sm_chunks.items())),
        "sm_end_us_pct_0_10_50_90_100": [round(pct(sm_end, q), 1) for q in (0, 0.1, 0.5, 0.9, 1.0)],
        "middle_chunk_us_by_residency": {k: round(median(v), 3) for k, v in sorted(by_res.items())},
        "step_distance_mean": round(mean(dist), 3) if dist else None,
        "step_within_0p1": round(sum(1 for d in dist if d < 0.1) / len(dist), 3) if dist else None,
        "first_pairs_breadth_first": f"{bf_ok}/{len(bf)}",
        "ctas_waited_inside_first_chunk": late,
    }
    print(f"  {name}: {len(ctas)} CTAs on {nsm} SMs (up to {slots} an SM), span {span:.1f} us, "
          f"SM clock {ghz:.2f} GHz")
    print(f"    a CTA (medians, us): in all {median(busy):.2f} = wait {median(wait):.2f} + prologue "
          f"{median(pro):.2f} + chunks (first {median(first):.3f}, middle {mid_m:.3f}, last incl. epilogue "
          f"{median(last):.3f}; {median(nch_all)} chunks)")
    if late:
        print(f"    {late} CTAs waited inside or after their first chunk (HYMO_GDN_OUT_EARLY): their wait "
              f"holds that chunk's intra-chunk work, and they have no prologue")
    print(f"    per chunk k (median us): " + " ".join(f"{x:.2f}" for x in s["per_chunk_us_median"]))
    print(f"    slots busy over the span: {100 * fill:.1f}% (after the wait: {100 * fill_work:.1f}%); "
          f"time beyond every chunk at the middle rate: {100 * over:.1f}% of the CTAs' time after the wait")
    print(f"    first SM idle at {sm_end[0]:.1f} us, last at {sm_end[-1]:.1f}; the last SM's first CTA entered "
          f"at {sm_start[-1]:.1f} us; exit-to-next-entry gap in a slot: median "
          f"{median(gaps) if gaps else float('nan'):.2f} us")
    print(f"    CTAs an SM {s['ctas_an_sm']}, chunks an SM {s['chunks_an_sm']}; SMs' ends (us, 0/10/50/90/100%): "
          + " ".join(str(x) for x in s["sm_end_us_pct_0_10_50_90_100"]))
    print("    a middle chunk (median us) by the kernel's CTAs on its SM: "
          + ", ".join(f"{k}: {v:.2f} (n={len(by_res[k])})" for k, v in s["middle_chunk_us_by_residency"].items()))
    if dist:
        print(f"    two CTAs an SM: a chunk top's distance from the other's nearest, in chunks: mean "
              f"{mean(dist):.3f}, {100 * s['step_within_0p1']:.0f}% within 0.1 (uniform: 0.25, 20%; "
              f"n={len(dist)}); each SM's first two CTAs at indices [0, n) and [n, 2n): {s['first_pairs_breadth_first']}")
    # the phases of a chunk (backward main, records with them): chunk top -> staged -> each warp's
    # role end -> the last role end (the roles' barrier) -> the tail's end
    ph = [(c["chunks"][k], st, roles, tl) for c in ctas for k, (st, roles, tl) in enumerate(c.get("phases", []))
          if k < len(c["chunks"]) and st and tl and all(roles)]
    if ph:
        stag = [us(st - top) for top, st, _, _ in ph]
        role = [[us(x - st) for x in roles] for _, st, roles, _ in ph]
        idle = [[us(max(roles) - x) for x in roles] for _, _, roles, _ in ph]
        tail = [us(tl - max(roles)) for _, _, roles, tl in ph]
        nwp = len(role[0])
        s["phases_us_median"] = {
            "staging": round(median(stag), 3), "tail_after_roles": round(median(tail), 3),
            "role_by_warp": [round(median([r[w] for r in role]), 3) for w in range(nwp)],
            "wait_at_roles_barrier_by_warp": [round(median([d[w] for d in idle]), 3) for w in range(nwp)],
            "last_warp_counts": [sum(1 for r in role if max(range(nwp), key=lambda w: r[w]) == w) for w in range(nwp)],
        }
        p_ = s["phases_us_median"]
        print(f"    phases of a chunk (median us, n={len(ph)}): staging {p_['staging']:.3f}, tail after the roles' "
              f"barrier {p_['tail_after_roles']:.3f}")
        print("      role by warp (from the staging's end): " + " ".join(f"{x:.3f}" for x in p_["role_by_warp"]))
        print("      wait at the roles' barrier by warp:     " + " ".join(f"{x:.3f}" for x in p_["wait_at_roles_barrier_by_warp"]))
        print("      chunks where the warp ended its role last: " + " ".join(str(x) for x in p_["last_warp_counts"]))
    if nshow:
        print("    cta  sm  enter_us  exit_us  wait  prologue  chunks...")
        for c in sorted(ctas, key=lambda c: c["gt_enter"])[:nshow]:
            ch = c["chunks"]
            ends = ch[1:] + [c["exit"]]
            print(f"    {c['cta']:4d} {c['sm']:3d} {(c['gt_enter'] - t0) / 1000:8.2f} {(c['gt_exit'] - t0) / 1000:8.2f} "
                  f"{us(c['waited'] - c['enter']):5.2f} {us(ch[0] - c['waited']) if ch else 0:8.2f}  "
                  + " ".join(f"{us(e - s_):.2f}" for s_, e in zip(ch, ends)))
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--json", action="store_true", help="one JSON object a record and kernel")
    ap.add_argument("--ctas", type=int, default=0, help="print the first N CTAs (by entry) of each kernel")
    a = ap.parse_args()
    out = []
    for shape, nk, nc, nw, w in records(a.file):
        print(f"B={shape['B']} T={shape['T']} H={shape['H']} D={shape['D']} S={shape['S']} "
              f"({shape['segments']} segments a (b, h))")
        for k in range(nk):
            ctas = []
            for i in range(nc):
                r = w[(k * nc + i) * nw:(k * nc + i + 1) * nw]
                if r[W_ENTER] == 0 or r[W_EXIT] == 0:
                    continue
                nch = r[W_NCH]
                c = {"cta": i, "sm": r[W_WHERE] & 0xFFFF, "gt_enter": r[W_GT_ENTER], "gt_exit": r[W_GT_EXIT],
                     "enter": r[W_ENTER], "waited": r[W_WAITED], "exit": r[W_EXIT], "nch": nch,
                     "chunks": list(r[W_CHUNK0:W_CHUNK0 + min(nch, min(nw, W_CHUNK_END) - W_CHUNK0)])}
                if nw >= W_TAIL + PH_CHUNKS:
                    c["phases"] = [(r[W_STAGED + k], list(r[W_ROLE + PH_WARPS * k:W_ROLE + PH_WARPS * (k + 1)]),
                                    r[W_TAIL + k]) for k in range(min(nch, PH_CHUNKS))]
                ctas.append(c)
            if not ctas:
                continue
            s = kernel_report(NAMES[k] if k < len(NAMES) else f"kernel {k}", ctas, a.ctas)
            s.update(shape)
            out.append(s)
    if a.json:
        for s in out:
            print(json.dumps(s))
    if not out:
        fail(f"{a.file}: no stamps (was the benchmark built with -DHYMO_GDN_CLOCKS=1?)")


if __name__ == "__main__":
    main()
