#!/usr/bin/env python3
"""Write a small clock-stamp record with known times (the gdn_clocks_report test reads it with
scripts/gdn-clocks.py): one kernel (the backward main pass, kernel 4) of two CTAs on SM 7, at
2 GHz: each waits 1 us, runs a 2 us prologue and four chunks of 3, 2, 2 and 4 us (the last with
its epilogue); the second enters when the first exits. In each chunk (the backward main kernel's
phase words of 128-word records): the staging ends 0.2 us after the chunk top, warp w's role 0.5 +
0.1 w us after that (warp 7 last), the tail 0.3 us after the last role. Usage:
make-clocks-example.py OUT"""
import struct
import sys

NK, NC, NW = 5, 4, 128
words = [0] * (NK * NC * NW)
GHZ = 2.0
t_enter_ns = [1_000_000, 1_000_000 + 14_000]  # the second CTA enters at the first's exit
for cta, t0 in enumerate(t_enter_ns):
    base = (4 * NC + cta) * NW
    c0 = 5_000_000 + cta * 28_000  # the SM clock at entry (cycles)
    cyc = lambda us: int(round(us * 1000 * GHZ))  # noqa: E731
    r = words
    r[base + 0] = t0
    r[base + 1] = t0 + 14_000
    r[base + 2] = 7 | (NC << 16) | (1 << 32)
    r[base + 3] = c0
    r[base + 4] = c0 + cyc(1)
    t = 1 + 2
    for k, d in enumerate([3, 2, 2, 4]):
        r[base + 8 + k] = c0 + cyc(t)
        r[base + 32 + k] = c0 + cyc(t + 0.2)  # staged
        for w in range(8):
            r[base + 40 + 8 * k + w] = c0 + cyc(t + 0.2 + 0.5 + 0.1 * w)  # warp w's role end
        r[base + 104 + k] = c0 + cyc(t + 0.2 + 0.5 + 0.7 + 0.3)  # the tail's end
        t += d
    r[base + 5] = c0 + cyc(t)
    r[base + 6] = 4
hdr = [0x31304B4C434E4447, 1, 1024, 2, 32, 32, 4, NK, NC, NW] + [0] * 6
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<16Q", *hdr))
    f.write(struct.pack(f"<{len(words)}Q", *words))
