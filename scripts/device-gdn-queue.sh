#!/usr/bin/env bash
# The queued device calls of docs/kernels/gdn.md ("Left to do" item 0a), one call each, so that a
# session's run command is one short line and runs what the docs say. Each call leaves one archive,
# $OUT/run<CALL>.tar.xz, with its logs (the device tool returns at most 8 files from $OUT). The
# inner timeouts keep each call under the tool's 600 s. Edit the calls here when the queue changes,
# and item 0a with them.
# Usage (repo root, on the device, carrying .gdn-prebuilt and .whl): OUT=$OUT scripts/device-gdn-queue.sh CALL
#   210  the default build: test, benchmark sweep, SASS, racecheck and memcheck (T <= 320), ncu
#        durations, the probe; then the A/B of B1 (@9be453a, the kernels before gdn_frag.h) and B2
#        (HYMO_GDN_OUT5, HYMO_GDN_TRAIN3, HYMO_GDN_ADJ_MINB=5) at four shapes with the full tests;
#        then A and B2 at segments of 4, 8 and 16 chunks (about 560 s)
#   211  the head-pair state pass (HYMO_GDN_STATE_PAIR): racecheck (BF16 cases, T <= 320), three
#        rounds of one head against head pairs at four shapes in one process (pair.log: read it
#        with scripts/gdn-ab-summary.py pair.log --arm-by state_pair), ncu durations with pairs
#        (about 250 s)
#   212  the PyTorch and FLA table (bench/gdn/bench_gdn.py --quick; about 300 s warm)
set -o pipefail
CALL=${1:-}
case "$CALL" in
  210 | 211 | 212) ;;
  *)
    echo "device-gdn-queue: no queued call '$CALL' (210, 211 or 212: docs/kernels/gdn.md item 0a)" >&2
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
  210)
    OUT=$O GDN_SAN_TOOLS="racecheck memcheck" GDN_SAN_TIMEOUT=120 GDN_SAN_ARGS=--no-repro timeout 220 \
      scripts/device-gdn.sh build test bench sass san ncut probe > "$O/console.log" 2>&1
    OUT=$O GDN_AB_FLAGS="@9be453a;-DHYMO_GDN_OUT5=1 -DHYMO_GDN_TRAIN3=1 -DHYMO_GDN_ADJ_MINB=5" GDN_AB_TEST=full \
      GDN_AB_SHAPES="$SHAPES4" timeout 280 scripts/device-gdn-ab.sh >> "$O/console.log" 2>&1
    for b in $(cat /tmp/gdn-gdir) /tmp/gdn-prebuilt/B2; do
      timeout 20 "$b/hymo_gdn_bench" --json --quick --cps 0,4,16
    done > "$O/cps.log" 2>&1
    ;;
  211)
    OUT=$O GDN_SAN_TOOLS=racecheck GDN_SAN_TIMEOUT=100 GDN_SAN_ARGS="--no-repro --dtype bf16 --state-pair 1" \
      timeout 130 scripts/device-gdn.sh build san > "$O/console.log" 2>&1
    SH=()
    for s in $SHAPES4; do SH+=(--shape "$s"); done
    for r in 1 2 3; do
      timeout 40 "$(cat /tmp/gdn-gdir)/hymo_gdn_bench" --json --state-pair 0,1 "${SH[@]}"
    done > "$O/pair.log" 2>&1
    python3 scripts/gdn-ab-summary.py "$O/pair.log" --arm-by state_pair > "$O/pair-summary.txt" 2>&1
    OUT=$O NCU_BENCH_ARGS="--state-pair 1" timeout 90 scripts/device-gdn.sh build ncut >> "$O/console.log" 2>&1
    ;;
  212)
    OUT=$O GDN_PY_ARGS=--quick GDN_PY_TIMEOUT=400 timeout 480 scripts/device-gdn.sh build py > "$O/console.log" 2>&1
    ;;
esac
rc=$?
tar -C "$O" -cJf "$OUT/run$CALL.tar.xz" .
echo "device-gdn-queue: call $CALL done (last step's exit $rc); $OUT/run$CALL.tar.xz"
tail -30 "$O/console.log"
[ -f "$O/pair-summary.txt" ] && cat "$O/pair-summary.txt"
exit 0
