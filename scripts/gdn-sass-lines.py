#!/usr/bin/env python3
"""Per-source-line instruction counts and stall samples of one kernel.

Joins ncu's per-SASS-instruction source page (`scripts/device-gdn.sh ncuk` writes it as
ncuk-sass.csv) with `nvdisasm -gi` of the same build's cubin (which names the source
line of every instruction) on the offset from the kernel's first instruction, and
prints, per line of the kernel's own file (an inlined call counts at its call site),
the share of executed warp instructions and of stall samples.

  scripts/gdn-sass-lines.py lines.sass ncuk-sass.csv KERNEL [--top N] [--source F --range A-B]
      [--regions NAME=A-B,NAME=A-B,... [--per N] [--stalls K]] [--wavefronts]

--wavefronts prints, per line, the shared-memory wavefronts ncu counted (ideal, actual and
excessive: bank conflicts and uncoalesced accesses) instead, the lines with the most excessive
wavefronts first (the L1 pipe's load; session 34).

--inner counts each instruction at its innermost inlined frame instead (any file: e.g.
cuda_bf16.hpp's conversions, gdn.cuh's mma wrapper), the breakdown of a call site's share.

--regions sums the lines A..B of the kernel's own file (e.g. one role's branch) per named
region instead: share of the warp instructions and stall samples, and with --per N the warp
instructions divided by N (e.g. chunks x warps of that role: instructions a warp and chunk).
With --stalls, each region's line also gives its largest stall reasons (ncu's stall_* columns,
all samples), each as a share of the region's own samples.

KERNEL: a substring of the kernel's mangled name that picks one function in lines.sass
(e.g. out_bf16_kernelILi32ELi32ELi64ELb1ELb0E). With --source and --range, prints that
file's lines A..B annotated instead of the top list.
"""
import argparse
import collections
import csv
import re
import sys


def sass_instructions(path, kernel, inner=False):
    """[(offset, (file, line), instruction text)] of the one function matching, in order, the
    line that of the outermost frame (inner: the innermost). Also used by
    scripts/gdn-sass-slack.py."""
    text = open(path).read().split('\n')
    # (the function's code section: a dump without -c also heads its .nv.info and constant
    # sections with the name)
    heads = [i for i, l in enumerate(text) if l.startswith('//-----') and '.text.' in l and kernel in l]
    if len(heads) != 1:
        sys.exit(f'gdn-sass-lines: {len(heads)} functions in {path} match {kernel!r}; need exactly one')
    out, cur, fresh = [], None, True
    for l in text[heads[0] + 1:]:
        if l.startswith('//-----'):
            break
        m = re.match(r'\s*//## File "([^"]+)", line (\d+)', l)
        if m:  # nvdisasm prints the inlined frame first, the call site last
            if fresh or not inner:
                cur = (m.group(1).split('/')[-1], int(m.group(2)))
            fresh = False
            continue
        fresh = True
        m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?);', l)
        if m:
            out.append((int(m.group(1), 16), cur, m.group(2)))
    return out


def sass_lines(path, kernel, inner=False):
    """offset -> ((file, line), opcode) for the one function matching (sass_instructions)."""
    return {off: (where, text.split()[0] if text else '') for off, where, text in sass_instructions(path, kernel, inner)}


def ncu_rows(path):
    rows = list(csv.reader(open(path)))
    hdr = next(r for r in rows if 'Address' in r)
    body = rows[rows.index(hdr) + 1:]
    ia, isrc = hdr.index('Address'), hdr.index('Source')
    ie = hdr.index('Instructions Executed')
    isamp = hdr.index('Warp Stall Sampling (All Samples)')
    iw = [hdr.index(n) if n in hdr else None
          for n in ('L1 Wavefronts Shared Ideal', 'L1 Wavefronts Shared', 'L1 Wavefronts Shared Excessive')]
    # the stall reasons' columns over all samples (not the "(Not Issued)" ones)
    ist = [(i, n[len('stall_'):]) for i, n in enumerate(hdr) if n.startswith('stall_') and '(' not in n]

    def num(r, i):
        try:
            return int(r[i]) if i is not None and r[i] else 0
        except ValueError:
            return 0
    out, base = [], None
    for r in body:
        try:
            a, e, s = int(r[ia], 16), int(r[ie]), int(r[isamp])
        except (ValueError, IndexError):
            continue
        base = a if base is None else base
        out.append((a - base, e, s, r[isrc].strip(), tuple(num(r, i) for i in iw),
                    {n: num(r, i) for i, n in ist}))
    if not out:
        sys.exit(f'gdn-sass-lines: no instruction rows in {path}')
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('sass')
    ap.add_argument('csv')
    ap.add_argument('kernel')
    ap.add_argument('--top', type=int, default=40)
    ap.add_argument('--source')
    ap.add_argument('--range')
    ap.add_argument('--regions', help='NAME=A-B,...: per-region sums over lines of the kernel\'s file')
    ap.add_argument('--per', type=float, help='with --regions: also print warp instructions / PER')
    ap.add_argument('--stalls', type=int, metavar='K',
                    help="with --regions: also each region's K largest stall reasons")
    ap.add_argument('--wavefronts', action='store_true',
                    help='per line: shared-memory wavefronts (ideal, actual, excessive)')
    ap.add_argument('--inner', action='store_true',
                    help='count each instruction at its innermost inlined frame (any file)')
    a = ap.parse_args()
    where = sass_lines(a.sass, a.kernel, a.inner)
    rows = ncu_rows(a.csv)
    mismatched = sum(1 for off, _, _, src, _, _ in rows[:200]
                     if where.get(off, (None, '?'))[1] != (src.split()[0] if src else ''))
    if mismatched > 20:
        sys.exit(f'gdn-sass-lines: {mismatched} of the first 200 opcodes differ: not the same build?')
    tot_e = sum(r[1] for r in rows) or 1
    tot_s = sum(r[2] for r in rows) or 1
    ins, smp = collections.Counter(), collections.Counter()
    wf = collections.defaultdict(lambda: [0, 0, 0])
    why = collections.defaultdict(collections.Counter)  # line -> stall reason -> samples
    for off, e, s, _, w, st in rows:
        key = where.get(off, ((None, 0), ''))[0] or ('?', 0)
        ins[key] += e
        smp[key] += s
        for i in range(3):
            wf[key][i] += w[i]
        why[key].update(st)
    print(f'{tot_e} warp instructions, {tot_s} stall samples; {mismatched} opcode mismatches in the first 200')
    if a.wavefronts:
        tw = [sum(v[i] for v in wf.values()) for i in range(3)]
        print(f'shared-memory wavefronts: {tw[1]} ({tw[0]} ideal, {tw[2]} excessive)')
        print('  ideal    actual  excess  excess%  line')
        for k, v in sorted(wf.items(), key=lambda kv: -kv[1][2])[:a.top]:
            if not v[1]:
                break
            print(f'{v[0]:7d} {v[1]:9d} {v[2]:7d} {100 * v[2] / max(tw[2], 1):7.1f}  {k[0]}:{k[1]}')
        return
    if a.regions:
        own = collections.Counter(k[0] for k in ins if k[0] != '?').most_common(1)[0][0]
        print(f'region                        inst%  samp%' + ('   inst/per' if a.per else '') + f'   (lines of {own})')
        for spec in a.regions.split(','):
            name, _, rng = spec.rpartition('=')
            lo, hi = (int(x) for x in rng.split('-'))
            e = sum(v for k, v in ins.items() if k[0] == own and lo <= k[1] <= hi)
            s_ = sum(v for k, v in smp.items() if k[0] == own and lo <= k[1] <= hi)
            extra = f' {e / a.per:10.0f}' if a.per else ''
            if a.stalls:
                c = collections.Counter()
                for k, v in why.items():
                    if k[0] == own and lo <= k[1] <= hi:
                        c.update(v)
                n = sum(c.values()) or 1
                extra += '   ' + ' '.join(f'{r} {100 * v / n:.0f}%' for r, v in c.most_common(a.stalls) if v)
            print(f'{name[:28]:28s} {100 * e / tot_e:6.1f} {100 * s_ / tot_s:6.1f}{extra}   {lo}-{hi}')
        return
    if a.source and a.range:
        lo, hi = (int(x) for x in a.range.split('-'))
        name = a.source.split('/')[-1]
        src = open(a.source).read().split('\n')
        for n in range(lo, min(hi, len(src)) + 1):
            k = (name, n)
            tag = f'{100 * ins[k] / tot_e:5.1f} {100 * smp[k] / tot_s:5.1f}' if ins[k] or smp[k] else ' ' * 11
            print(f'{tag} {n:5d} {src[n - 1]}')
        return
    print(' inst%  samp%  line')
    for k, e in ins.most_common(a.top):
        print(f'{100 * e / tot_e:6.1f} {100 * smp[k] / tot_s:6.1f}  {k[0]}:{k[1]}')


if __name__ == '__main__':
    main()
