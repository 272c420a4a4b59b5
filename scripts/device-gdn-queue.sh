#!/usr/bin/env bash
# The queued device calls of docs/kernels/gdn.md ("Left to do" item 0a), one call each, so that a
# session's run command is one short line and runs what the docs say. Each call leaves one archive,
# $OUT/run<CALL>.tar.xz, with its logs (the device tool returns at most 8 files from $OUT). The
# inner timeouts keep each call under the tool's 600 s. Edit the calls here when the queue changes,
# and item 0a with them.
# Usage (repo root, on the device, carrying .gdn-prebuilt and .whl): OUT=$OUT scripts/device-gdn-queue.sh CALL
#   215  the default build's quick test; then the A/B of HYMO_GDN_CP_L2=128 (B1) and =256 (B2), L2's
#        prefetch size on every cp.async, at four shapes with their full tests (about 300 s)
#   216  the head-pair adjoint pass (HYMO_GDN_ADJ_PAIR; the default build, prebuilt A or built here): the
#        full test (each eligible case's second run takes the other layout: the same bits), three
#        rounds of one head against head pairs at four shapes in one process (pair.log:
#        scripts/gdn-ab-summary.py pair.log --arm-by adj_pair), two rounds of the default shape at
#        7, 8 and 10 segments a (b, h) (nseg.log), then racecheck and memcheck with
#        --adj-pair 1 (BF16 cases, T <= 320) and ncu durations with pairs (about 200-560 s; the
#        archive is written after the test and after the benchmark too)
# (Session 43 ran calls 210-212 of the queue before, as runs 210-213: docs/kernels/gdn.md item 0a.)
set -o pipefail
CALL=${1:-}
case "$CALL" in
  215 | 216) ;;
  *)
    echo "device-gdn-queue: no queued call '$CALL' (215 or 216: docs/kernels/gdn.md item 0a)" >&2
    exit 2
    ;;
esac
: "${OUT:?set OUT to the directory the device tool returns}"
[ -f kernels/gdn/gdn.h ] || { echo "device-gdn-queue: run from the repository root" >&2; exit 2; }
O=/tmp/gdn-queue-$CALL
rm -rf "$O"
mkdir -p "$O" "$OUT"
SHAPES4="4,4096,28,32,32 4,4096,64,32,32 4,4096,28,32,16 4,2048,28,32,32"
case "$CALL" in
  215)
    OUT=$O timeout 150 scripts/device-gdn.sh build test > "$O/console.log" 2>&1
    OUT=$O GDN_AB_FLAGS="-DHYMO_GDN_CP_L2=128;-DHYMO_GDN_CP_L2=256" GDN_AB_TEST=full \
      GDN_AB_SHAPES="$SHAPES4" timeout 330 scripts/device-gdn-ab.sh >> "$O/console.log" 2>&1
    ;;
  216)
    OUT=$O timeout 170 scripts/device-gdn.sh build test > "$O/console.log" 2>&1
    tar -C "$O" -cJf "$OUT/run$CALL.tar.xz" .  # (likewise)
    SH=()
    for s in $SHAPES4; do SH+=(--shape "$s"); done
    for r in 1 2 3; do
      timeout 40 "$(cat /tmp/gdn-gdir)/hymo_gdn_bench" --json --adj-pair 0,1 "${SH[@]}"
    done > "$O/pair.log" 2>&1
    python3 scripts/gdn-ab-summary.py "$O/pair.log" --arm-by adj_pair > "$O/pair-summary.txt" 2>&1
    # the segment counts around the default's 8 (cps 10, 8, 7 at 7, 8, 10): fwd_train_ms is the
    # training forward alone, fwd_bwd_ms - fwd_train_ms the backward (session 45: at 7 the
    # training output pass's 784 CTAs are 1.98 waves of its 3 an SM, at 8 its 896 are 2.26)
    for r in 1 2; do
      timeout 25 "$(cat /tmp/gdn-gdir)/hymo_gdn_bench" --json --nseg 7,8,10 --shape 4,4096,28,32,32
    done > "$O/nseg.log" 2>&1
    tar -C "$O" -cJf "$OUT/run$CALL.tar.xz" .  # (what there is so far, should the call be cut short)
    OUT=$O GDN_SAN_TOOLS="racecheck memcheck" GDN_SAN_TIMEOUT=80 GDN_SAN_ARGS="--no-repro --dtype bf16 --adj-pair 1" \
      timeout 170 scripts/device-gdn.sh san >> "$O/console.log" 2>&1
    OUT=$O NCU_BENCH_ARGS="--adj-pair 1" timeout 80 scripts/device-gdn.sh ncut >> "$O/console.log" 2>&1
    ;;
esac
rc=$?
tar -C "$O" -cJf "$OUT/run$CALL.tar.xz" .
echo "device-gdn-queue: call $CALL done (last step's exit $rc); $OUT/run$CALL.tar.xz"
tail -30 "$O/console.log"
[ -f "$O/pair-summary.txt" ] && cat "$O/pair-summary.txt"
exit 0
