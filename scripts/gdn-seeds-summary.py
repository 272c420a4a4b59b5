#!/usr/bin/env python3
"""Summarise scripts/device-gdn-seeds.sh's log: per build and tensor, the largest and the
median of the seeds' worst relative errors, the seeds whose test failed and those where a
check passed only at the bound for ill-conditioned instances ("ok*"; docs/kernels/gdn.md,
"Parity").

Log lines: "<build> seed <n> rc=<rc> [ok*=<k>] worst relative errors (seed <n>): <dtype> <tensor> <err>; ..."
Usage: gdn-seeds-summary.py seeds.log
"""
import re
import statistics
import sys
from collections import defaultdict


def main(path):
    errs = defaultdict(lambda: defaultdict(list))  # build -> tensor -> [err per seed]
    failed = defaultdict(list)
    cond = defaultdict(list)  # build -> [(seed, ok* checks)]
    seeds = defaultdict(int)
    pat = re.compile(r'^(\S+) seed (\d+) rc=(\d+)(.*)$')
    for line in open(path):
        m = pat.match(line.strip())
        if not m:
            continue
        build, seed, rc, rest = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        seeds[build] += 1
        if rc != 0:
            failed[build].append(seed)
        mc = re.match(r'\s*ok\*=(\d+)', rest)
        if mc and int(mc.group(1)) > 0:
            cond[build].append((seed, int(mc.group(1))))
        body = rest.split(':', 1)[1] if ':' in rest else ''
        for item in body.split(';'):
            parts = item.split()
            if len(parts) == 3:
                errs[build][parts[0] + ' ' + parts[1]].append(float(parts[2]))
    if not seeds:
        print('no seed lines in', path)
        return 1
    for build in sorted(seeds):
        print(f'{build}: {seeds[build]} seeds, failed: {failed[build] or "none"}')
        if cond[build]:
            print('  passed only at the bound for ill-conditioned instances (seed: checks): '
                  + ', '.join(f'{sd}: {k}' for sd, k in cond[build]))
        for t in sorted(errs[build]):
            v = errs[build][t]
            print(f'  {t:20s} max {max(v):.2e}  median {statistics.median(v):.2e}  ({len(v)} seeds)')
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
