#!/usr/bin/env python3
"""Static instruction counts of one kernel per source line, for one build or two compared.

Counts the kernel's SASS instructions whose opcode matches --op (a regular expression; default
every instruction) per source line of the kernel's own file (an inlined call counts at its call
site, as in scripts/gdn-sass-lines.py, whose parser of `nvdisasm -gi` this uses), and with a
second build prints the lines whose counts differ. No GPU and no profile are needed: it says
what the compiler emitted, not how often it runs (a rolled loop's body counts once; ncu's counts
through scripts/gdn-sass-lines.py say that).

  scripts/gdn-sass-sites.py KERNEL A.dis [B.dis] [--op REGEX] [--top N]

A.dis, B.dis: `nvdisasm -gi -c` of cubins built with -lineinfo (the layout that
scripts/gdn-sass-slack.py describes). Two builds are compared line by line, so they should come
from the same source text (a switch on and off, `-DHYMO_GDN_X=1`): an edit moves the lines. KERNEL: a substring of the mangled name that picks one
function (e.g. bwd_bf16_kernelILi32ELi32ELi64ELb1E).

Session 39 used it to ask whether the split products' repeated ldmatrix loads (hi * hi, lo * hi,
hi * lo, each term loading the shared operand again through volatile asm) reach the SASS:
`--op '^LDSM'` showed ptxas had already merged them wherever no shared-memory store came between
(mm_split3's second term and the middle one of three warp_mm_nt calls have no LDSM of their own).
"""
import argparse
import collections
import importlib.util
import re
import signal
import sys
from pathlib import Path


def load(path, kernel):
    spec = importlib.util.spec_from_file_location("gdn_sass_lines", Path(__file__).with_name("gdn-sass-lines.py"))
    lines = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lines)
    return lines.sass_instructions(path, kernel)


def counts(path, kernel, op):
    """{(file, line): {opcode: count}} of the instructions whose opcode matches op."""
    res = collections.defaultdict(collections.Counter)
    for _, where, text in load(path, kernel):
        code = re.sub(r"^@!?U?P\w+\s+", "", text).split()
        if code and op.search(code[0]):
            res[where or ("?", 0)][code[0]] += 1
    return res


def label(where):
    return f"{where[0]}:{where[1]}"


def mix(c, n=5):
    return " ".join(f"{o}:{k}" for o, k in c.most_common(n))


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernel")
    ap.add_argument("a")
    ap.add_argument("b", nargs="?")
    ap.add_argument("--op", default=".", help="regular expression on the opcode (e.g. '^LDSM', '^(LDL|STL)')")
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args()
    try:
        op = re.compile(a.op)
    except re.error as e:
        sys.exit(f"gdn-sass-sites: --op {a.op!r}: {e}")
    ca = counts(a.a, a.kernel, op)
    ta = sum(sum(c.values()) for c in ca.values())
    if not a.b:
        print(f"{ta} instructions match {a.op!r} in {a.a}")
        for where, c in sorted(ca.items(), key=lambda x: -sum(x[1].values()))[: a.top]:
            n = sum(c.values())
            print(f"{n:6d} {100 * n / max(ta, 1):5.1f}%  {label(where):28s} {mix(c)}")
        return
    cb = counts(a.b, a.kernel, op)
    tb = sum(sum(c.values()) for c in cb.values())
    print(f"{ta} -> {tb} instructions match {a.op!r} ({a.a} -> {a.b})")
    diff = []
    for where in set(ca) | set(cb):
        na, nb = sum(ca[where].values()), sum(cb[where].values())
        if na != nb:
            diff.append((nb - na, where, na, nb))
    diff.sort(key=lambda x: (-abs(x[0]), x[1]))
    for d, where, na, nb in diff[: a.top]:
        print(f"{na:6d} -> {nb:6d} ({d:+d})  {label(where):28s} {mix(cb[where] if nb else ca[where])}")
    if not diff:
        print("every line the same")


if __name__ == "__main__":
    main()
