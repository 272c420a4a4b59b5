#!/usr/bin/env bash
# The queued device calls of docs/kernels/gdn.md ("Left to do" item 0a), one call each, so that a
# session's run command is one short line and runs what the docs say. Each call leaves one archive,
# $OUT/run<CALL>.tar.xz, with its logs (the device tool returns at most 8 files from $OUT). The
# inner timeouts keep each call under the tool's 600 s. Edit the calls here when the queue changes,
# and item 0a with them.
# Usage (repo root, on the device, carrying .gdn-prebuilt and .whl): OUT=$OUT scripts/device-gdn-queue.sh CALL
#   218  the default build (prebuilt A, or built here): the full test, the benchmark's sweep (the
#        published table) and ncu's durations a kernel (about 150 s)
#   219  the PyTorch and FLA baselines beside ours at the default shape and T = 256 (bench_gdn.py
#        --quick; about 300 s)
#   222  HYMO_GDN_STATE_SCAN and HYMO_GDN_ADJ_SCAN (session 46: the forward's segment scan in its
#        state pass, the backward's in its adjoint pass): the full test (its repro runs take the
#        other forms: the same bits), the test with both on first, three rounds of --state-scan
#        0,1 and three of --adj-scan 0,1 at four shapes, racecheck and memcheck with both on, ncu
#        (about 360 s)
# (Sessions 43-45 ran the calls queued before: 210-212 as runs 210-214, 215 and 216 as runs 215 and
# 216; docs/kernels/gdn.md item 0a and notes/gdn-measurements.md.)
set -o pipefail
CALL=${1:-}
case "$CALL" in
  218 | 219 | 222) ;;
  *)
    echo "device-gdn-queue: no queued call '$CALL' (218, 219 or 222: docs/kernels/gdn.md item 0a)" >&2
    exit 2
    ;;
esac
: "${OUT:?set OUT to the directory the device tool returns}"
[ -f kernels/gdn/gdn.h ] || { echo "device-gdn-queue: run from the repository root" >&2; exit 2; }
O=/tmp/gdn-queue-$CALL
rm -rf "$O"
mkdir -p "$O" "$OUT"
case "$CALL" in
  218)
    OUT=$O timeout 400 scripts/device-gdn.sh build test bench ncut > "$O/console.log" 2>&1
    ;;
  219)
    OUT=$O GDN_PY_ARGS=--quick GDN_PY_TIMEOUT=480 timeout 540 scripts/device-gdn.sh build py > "$O/console.log" 2>&1
    ;;
  222)
    SHAPES4="4,4096,28,32,32 4,4096,64,32,32 4,4096,28,32,16 4,2048,28,32,32"
    OUT=$O timeout 150 scripts/device-gdn.sh build test > "$O/console.log" 2>&1
    tar -C "$O" -cJf "$OUT/run$CALL.tar.xz" .  # (what there is so far, should the call be cut short)
    SH=()
    for s in $SHAPES4; do SH+=(--shape "$s"); done
    for r in 1 2 3; do
      timeout 40 "$(cat /tmp/gdn-gdir)/hymo_gdn_bench" --json --state-scan 0,1 "${SH[@]}"
    done > "$O/scan.log" 2>&1
    python3 scripts/gdn-ab-summary.py "$O/scan.log" --arm-by state_scan > "$O/scan-summary.txt" 2>&1
    for r in 1 2 3; do
      timeout 40 "$(cat /tmp/gdn-gdir)/hymo_gdn_bench" --json --adj-scan 0,1 "${SH[@]}"
    done > "$O/ascan.log" 2>&1
    python3 scripts/gdn-ab-summary.py "$O/ascan.log" --arm-by adj_scan >> "$O/scan-summary.txt" 2>&1
    tar -C "$O" -cJf "$OUT/run$CALL.tar.xz" .
    timeout 60 "$(cat /tmp/gdn-gdir)/hymo_gdn_test" --state-scan 1 --adj-scan 1 --dtype bf16 --no-repro \
      > "$O/test-scan1.log" 2>&1
    echo "test --state-scan 1 --adj-scan 1: exit $?" >> "$O/console.log"
    tar -C "$O" -cJf "$OUT/run$CALL.tar.xz" .
    OUT=$O GDN_SAN_TOOLS="racecheck memcheck" GDN_SAN_TIMEOUT=50 \
      GDN_SAN_ARGS="--no-repro --dtype bf16 --state-scan 1 --adj-scan 1" timeout 110 scripts/device-gdn.sh san \
      >> "$O/console.log" 2>&1
    OUT=$O NCU_BENCH_ARGS="--state-scan 1 --adj-scan 1" timeout 60 scripts/device-gdn.sh ncut >> "$O/console.log" 2>&1
    ;;
esac
rc=$?
tar -C "$O" -cJf "$OUT/run$CALL.tar.xz" .
echo "device-gdn-queue: call $CALL done (last step's exit $rc); $OUT/run$CALL.tar.xz"
tail -30 "$O/console.log"
[ -f "$O/scan-summary.txt" ] && cat "$O/scan-summary.txt"
exit 0
