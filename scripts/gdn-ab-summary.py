#!/usr/bin/env python3
"""Summarise an A/B log of scripts/device-gdn-ab.sh.

The log has one line per benchmark run, "<arm> {json}", arm A (the default build) or B1,
B2, ... (the variants of GDN_AB_FLAGS), the JSON object being hymo_gdn_bench --json's. For
each shape and time field this prints A's values (sorted) and, per variant, the change of
its median against A's median, with the variant's own range, e.g.

    4,4096,28,32,32 fwd_ms        A 0.1425 0.1429 0.1434 | B1 -1.2% (0.1406..0.1418)

The log's "== B1 = FLAGS" lines, where present, are printed first as a legend.

bwd_ms is derived: fwd_bwd_ms - fwd_train_ms of the same benchmark run (both medians of that
run's calls), the backward's share, for variants that change only backward kernels.

--arm-by FIELD reads a plain hymo_gdn_bench --json log instead (no arm names): a line's arm is A
where its FIELD is 0, else B<FIELD> (e.g. --arm-by state_pair: the one-head state pass against
the head-pair one of `hymo_gdn_bench --state-pair 0,1`, both in one process). Rows are by shape
and segment count, except with --arm-by tail (`hymo_gdn_bench --tail 0,1,..`, whose arms differ in
their counts by design): by shape and the --cps and --nseg asked ("cps=0 nseg=0": the automatic rule).
--by-asked rows an A/B log the same way, for arms whose layouts differ (a change of the segment
rule: A's automatic count 9 against B1's 8 would otherwise sit in two rows, neither compared).

Usage: scripts/gdn-ab-summary.py LOG [--fields fwd_ms,fwd_held_ms,fwd_train_ms,fwd_bwd_ms,fwd_bwd_held_ms,bwd_ms] [--arm-by FIELD] [--by-asked]
LOG: ab.log, or the directory holding it (the call's $OUT, unpacked)
"""
import argparse
import collections
import json
import os
import re
import signal
import statistics
import sys

LINE = re.compile(r'^(A|B[0-9]+) (\{.*\})\s*$')
BARE = re.compile(r'^()(\{.*\})\s*$')  # --arm-by: a benchmark line without an arm
ARM = re.compile(r'^== (B[0-9]+) = (.*?)\s*$')


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('log', help="device-gdn-ab.sh's ab.log, or the directory holding it")
    ap.add_argument('--fields', default='fwd_ms,fwd_held_ms,fwd_train_ms,fwd_bwd_ms,fwd_bwd_held_ms,bwd_ms',
                    help='comma-separated time fields of the JSON objects (bwd_ms: derived; the _held '
                         'ones, since session 55, where the log has them)')
    ap.add_argument('--arm-by', metavar='FIELD',
                    help='plain benchmark lines: arm A where FIELD is 0, else B<FIELD>')
    ap.add_argument('--by-asked', action='store_true',
                    help='rows by shape and the --cps and --nseg asked, not the segment count')
    args = ap.parse_args()
    fields = [f for f in args.fields.split(',') if f]
    runs = collections.defaultdict(lambda: collections.defaultdict(list))  # shape -> (arm, field) -> values
    arms = set()
    legend = {}
    if os.path.isdir(args.log):
        args.log = os.path.join(args.log, 'ab.log')
    try:
        fh = open(args.log)
    except OSError as e:
        sys.exit(f'gdn-ab-summary: cannot read {args.log}: {e.strerror}')
    with fh:
        for n, line in enumerate(fh, 1):
            a = ARM.match(line)
            if a:
                legend[a.group(1)] = a.group(2)
                continue
            m = (BARE if args.arm_by else LINE).match(line)
            if not m:
                continue
            try:
                j = json.loads(m.group(2))
                arm = m.group(1)
                if args.arm_by:
                    k = int(j[args.arm_by])
                    arm = 'A' if k == 0 else f'B{k}'
                    legend.setdefault(arm, f'{args.arm_by} {k}')
                shape = ','.join(str(j[k]) for k in ('B', 'T', 'H', 'D', 'S'))
                if args.arm_by == 'tail' or args.by_asked:  # (the arms' own counts differ: rows by the --cps and --nseg asked)
                    shape += f' cps={j.get("cps", 0)} nseg={j.get("nseg", 0)}'
                elif 'segments' in j:  # (a --nseg sweep: each count its own row)
                    shape += f' seg={j["segments"]}'
            except (ValueError, KeyError) as e:
                sys.exit(f'gdn-ab-summary: {args.log}:{n}: not a benchmark object ({e})')
            arms.add(arm)
            if 'fwd_bwd_ms' in j and 'fwd_train_ms' in j:
                j['bwd_ms'] = float(j['fwd_bwd_ms']) - float(j['fwd_train_ms'])
            for f in fields:
                if f in j:
                    runs[shape][(arm, f)].append(float(j[f]))
    if not runs:
        sys.exit(f'gdn-ab-summary: {args.log}: no ' + ('benchmark lines' if args.arm_by else '"<arm> {json}" benchmark lines'))
    if 'A' not in arms:
        sys.exit(f'gdn-ab-summary: {args.log}: no A lines to compare against')
    variants = sorted((a for a in arms if a != 'A'), key=lambda a: int(a[1:]))
    for b in variants:
        if b in legend:
            print(f'{b} = {legend[b]}')
    for shape, d in runs.items():
        for f in fields:
            a = sorted(d.get(('A', f), []))
            if not a:
                continue
            am = statistics.median(a)
            parts = [f'{shape} {f:<13} A ' + ' '.join(f'{x:.4f}' for x in a)]
            for b in variants:
                v = sorted(d.get((b, f), []))
                if v:
                    parts.append(f'{b} {100 * (statistics.median(v) / am - 1):+.1f}% ({v[0]:.4f}..{v[-1]:.4f})')
            print(' | '.join(parts))


if __name__ == '__main__':
    main()
