#!/usr/bin/env python3
"""Static latency slack of one kernel's short-scoreboard producers, compared between builds.

For every LDS, LDSM and MUFU instruction of the kernel (the producers a warp waits for on the
short scoreboard), counts the instructions between it and the first later instruction that
reads one of its destination registers, in the static SASS order of `nvdisasm -gi` (which
also names each instruction's source line; an inlined call counts at its call site). A
smaller count leaves less work to hide the producer's latency behind. Session 17 used it to
see why the plain output pass's slow path stalled more on the short scoreboard with the
DIAG8 fast path compiled in (run 104): the mean slack of its LDS fell from 16.4 to 13.3.

  scripts/gdn-sass-slack.py KERNEL A.dis [B.dis] [--lines] [--min-diff N]

A.dis, B.dis: `nvdisasm -gi` of a cubin built with -lineinfo (e.g. `nvcc -std=c++17
-arch=sm_90a -O3 -lineinfo -I../.. -cubin -o a.cubin gdn_inst_bf16_s32.cu` in kernels/gdn,
then `nvdisasm -gi -c a.cubin > A.dis`, the layout of the prebuilt sets' lines-*.sass). KERNEL: a substring of the mangled name that picks one
function (e.g. out_bf16_kernelILi32ELi32ELi64ELb1ELb0E). Prints per build the count and mean
slack of each producer kind; with --lines and two builds, the source lines whose mean slack
differs by at least --min-diff instructions (default 2) or that only one build has.

The count is static: a branch or a loop back edge ends the search at 200 instructions, and
it says nothing of how often an instruction runs (scripts/gdn-sass-lines.py joins ncu's
counts for that).
"""
import argparse
import collections
import importlib.util
import re
from pathlib import Path

PRODUCERS = ("LDSM", "LDS", "MUFU")


def load(path, kernel):
    """(line, instruction text without its predicate) of the kernel's instructions, in order,
    from scripts/gdn-sass-lines.py's parser of the same `nvdisasm -gi` layout."""
    spec = importlib.util.spec_from_file_location("gdn_sass_lines", Path(__file__).with_name("gdn-sass-lines.py"))
    lines = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lines)
    return [(where[1] if where else None, re.sub(r"^@!?U?P\w+\s+", "", text))
            for _, where, text in lines.sass_instructions(path, kernel)]


def regs(text):
    return re.findall(r"\bR(\d+)\b", text)


def width(op):
    for suffix, n in ((".128", 4), (".X4", 4), (".64", 2), (".X2", 2)):
        if suffix in op:
            return n
    return 1


def slack(ins):
    """{(producer kind, source line): [slack, ...]}"""
    res = collections.defaultdict(list)
    for i, (line, text) in enumerate(ins):
        op = text.split()[0]
        kind = next((p for p in PRODUCERS if op.startswith(p)), None)
        if kind is None:
            continue
        operands = text[len(op):].split(",")
        dst = regs(operands[0])
        if not dst:
            continue
        base = int(dst[0])
        written = {str(base + k) for k in range(width(op))}
        for j in range(i + 1, min(i + 200, len(ins))):
            parts = ins[j][1].split(None, 1)
            if len(parts) < 2:
                continue
            # a store reads every operand; anything else reads all but its first
            read = set(regs(parts[1])) if parts[0].startswith("ST") else set(regs(",".join(parts[1].split(",")[1:])))
            if read & written:
                res[(kind, line)].append(j - i)
                break
    return res


def mean(v):
    return sum(v) / len(v) if v else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernel")
    ap.add_argument("dumps", nargs="+")
    ap.add_argument("--lines", action="store_true")
    ap.add_argument("--min-diff", type=float, default=2.0)
    a = ap.parse_args()
    if len(a.dumps) > 2:
        ap.error("one or two dumps")
    results = []
    for path in a.dumps:
        ins = load(path, a.kernel)  # (exits unless exactly one function matches)
        r = slack(ins)
        results.append(r)
        kinds = collections.defaultdict(list)
        for (kind, _), v in r.items():
            kinds[kind] += v
        summary = ", ".join(f"{k} {len(v)} x {mean(v):.1f}" for k, v in sorted(kinds.items()))
        print(f"{path}: {len(ins)} instructions; producers (count x mean slack): {summary}")
    if a.lines and len(results) == 2:
        ra, rb = results
        print("kind  line  count/mean in A  count/mean in B")
        for key in sorted(set(ra) | set(rb), key=lambda k: (k[1] or 0, k[0])):
            va, vb = ra.get(key, []), rb.get(key, [])
            if va and vb and abs(mean(va) - mean(vb)) < a.min_diff:
                continue
            fa = f"{len(va)}/{mean(va):.1f}" if va else "-"
            fb = f"{len(vb)}/{mean(vb):.1f}" if vb else "-"
            print(f"{key[0]:5} {key[1]!s:5} {fa:>10} {fb:>10}")


if __name__ == "__main__":
    main()
