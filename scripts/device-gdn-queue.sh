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
#   238  the clock stamps of a profiling build (-DHYMO_GDN_CLOCKS=1; prebuilt as A with
#        GDN_CUDA_FLAGS=-DHYMO_GDN_CLOCKS=1 scripts/gdn-prebuild.sh, or built here in about 70 s):
#        scripts/gdn-clocks.py's report, with the backward main kernel's phases (each warp's role,
#        its wait at the roles' barrier, the staging and the tail; docs/kernels/gdn-bwd-plan.md
#        measurement 1) and how far apart the two CTAs an SM run (about 20 s)
#   246  HYMO_GDN_TAIL (session 49): a build with -DHYMO_GDN_TAIL=1 (prebuilt as B1 with
#        GDN_AB_FLAGS=-DHYMO_GDN_TAIL=1 scripts/gdn-prebuild.sh, or built here): its full test, an
#        A/B against the default at --tail 0 (the placement's own cost), its benchmark at --tail
#        0,1,2,3 on six shapes and, with the plain forward split too (--tail-plain), at 0,1,2 on
#        two, two rounds each (scripts/gdn-ab-summary.py --arm-by tail: each split count against
#        none) (about 300 s; every step bounded so that all end by 540 s); the exit printed is the
#        worst step's
#   247  the clock stamps of that build at the default shape, unsplit and with one segment split
#        (--tail 0,1; -DHYMO_GDN_TAIL=1 -DHYMO_GDN_CLOCKS=1, prebuilt as a variant with GDN_AB_FLAGS
#        "-DHYMO_GDN_TAIL=1;-DHYMO_GDN_TAIL=1 -DHYMO_GDN_CLOCKS=1", or built here in about 70 s):
#        whether the passes' SMs end closer together, and what the short CTAs cost; then memcheck
#        and racecheck of the -DHYMO_GDN_TAIL=1 build on the test's split cases (91 on) with T <=
#        320 (about 150 s; bounded as 246)
# (Sessions 43-45 ran the calls queued before: 210-212 as runs 210-214, 215 and 216 as runs 215 and
# 216; session 47 ran 227 as run 227 (the backward main kernel's tail and key pairs skipped, timing
# only), 228 as run 228 (HYMO_GDN_BWD_KTAIL: slower, removed; its seeds call was dropped) and 229
# as run 229 (the query warps' parts skipped, timing only); session 48 ran 238 as runs 238 and 244 and
# 218 as run 243; session 49 got no device and queued 246;
# docs/kernels/gdn.md item 0a and notes/gdn-measurements.md.)
set -o pipefail
CALL=${1:-}
case "$CALL" in
  218 | 219 | 238 | 246 | 247) ;;
  *)
    echo "device-gdn-queue: no queued call '$CALL' (218, 219, 238, 246 or 247: docs/kernels/gdn.md item 0a)" >&2
    exit 2
    ;;
esac
: "${OUT:?set OUT to the directory the device tool returns}"
[ -f kernels/gdn/gdn.h ] || { echo "device-gdn-queue: run from the repository root" >&2; exit 2; }
O=/tmp/gdn-queue-$CALL
rm -rf "$O"
mkdir -p "$O" "$OUT"
# bounded N CMD...: CMD under timeout, N seconds or fewer, so that the call's steps end by 540 s
# after its start (the archive below must still be written within the tool's 600 s); once the
# time is up, CMD is skipped (exit 124, as a timeout)
T0=$(date +%s)
bounded() {
  local n=$1 left=$((T0 + 540 - $(date +%s)))
  shift
  [ "$left" -lt "$n" ] && n=$left
  if [ "$n" -le 0 ]; then
    echo "device-gdn-queue: skipped, the call's time is up: $*"
    return 124
  fi
  timeout -k 5 "$n" "$@"
}
# the default build's folder (/tmp/gdn-gdir, which device-gdn-ab.sh takes as its A): the calls
# that build a variant through device-gdn.sh put it back afterwards
GDIR_SAVED=$(cat /tmp/gdn-gdir 2> /dev/null || true)
case "$CALL" in
  218)
    OUT=$O timeout 400 scripts/device-gdn.sh build test bench ncut > "$O/console.log" 2>&1
    ;;
  219)
    OUT=$O GDN_PY_ARGS=--quick GDN_PY_TIMEOUT=480 timeout 540 scripts/device-gdn.sh build py > "$O/console.log" 2>&1
    ;;
  238)
    OUT=$O GDN_CUDA_FLAGS=-DHYMO_GDN_CLOCKS=1 timeout 300 scripts/device-gdn.sh build clocks > "$O/console.log" 2>&1
    ;;
  247)
    (
      worst=0
      note() { [ "$1" -gt "$worst" ] && worst=$1; }
      OUT=$O/clk GDN_CUDA_FLAGS="-DHYMO_GDN_TAIL=1 -DHYMO_GDN_CLOCKS=1" \
        GDN_CLOCKS_ARGS="--shape 4,4096,28,32,32 --tail 0,1 --iters 30" bounded 240 scripts/device-gdn.sh build clocks
      note $?
      rm -f /tmp/gdn-gdir
      OUT=$O/b1 GDN_CUDA_FLAGS=-DHYMO_GDN_TAIL=1 bounded 120 scripts/device-gdn.sh build
      rc=$?
      note $rc
      T=$(cat /tmp/gdn-gdir 2> /dev/null)/hymo_gdn_test
      if [ "$rc" != 0 ] || [ ! -x "$T" ]; then
        echo "device-gdn-queue: the -DHYMO_GDN_TAIL=1 build failed (exit $rc): no sanitizer runs"
        note 1
      else
        for tool in memcheck racecheck; do  # (the split cases, 91 on, with T <= 320)
          bounded 100 compute-sanitizer --tool $tool "$T" --from 91 --max-t 320 --no-repro > "$O/$tool.log" 2>&1
          rc=$?
          note $rc
          echo "$tool (exit $rc): $(tail -1 "$O/$tool.log")"
        done
      fi
      exit $worst
    ) > "$O/console.log" 2>&1
    ;;
  246)
    (
      worst=0
      note() { [ "$1" -gt "$worst" ] && worst=$1; }
      OUT=$O/ab GDN_AB_FLAGS=-DHYMO_GDN_TAIL=1 GDN_AB_TEST=full GDN_AB_TEST_TIMEOUT=150 GDN_AB_ROUNDS=3 \
        GDN_AB_BENCH_ARGS="--tail 0" GDN_AB_SHAPES="4,4096,28,32,32 4,4096,64,32,32" bounded 240 scripts/device-gdn-ab.sh
      note $?
      BB=$(head -1 "$O/ab/variant-dirs.txt" 2> /dev/null)
      BB=$(find "${BB:-/nonexistent}" -name hymo_gdn_bench -type f 2> /dev/null | head -1)
      [ -x "$BB" ] || { echo "device-gdn-queue: B1's benchmark not found"; exit 1; }
      echo "== the split counts with $BB"
      for r in 1 2; do
        for sh in 4,4096,28,32,32 4,4096,64,32,32 4,2048,28,32,32 4,4096,28,32,16 1,4096,28,32,32 4,4096,16,32,32; do
          bounded 40 "$BB" --json --shape "$sh" --tail 0,1,2,3 | grep '^{' >> "$O/tail.log"
          note "${PIPESTATUS[0]}"
        done
        for sh in 4,4096,28,32,32 4,2048,28,32,32; do
          bounded 40 "$BB" --json --shape "$sh" --tail 0,1,2 --tail-plain | grep '^{' >> "$O/tail-plain.log"
          note "${PIPESTATUS[0]}"
        done
      done
      bounded 20 python3 scripts/gdn-ab-summary.py "$O/tail.log" --arm-by tail | tee "$O/tail-summary.txt"
      echo "== the plain forward split too (--tail-plain)"
      bounded 20 python3 scripts/gdn-ab-summary.py "$O/tail-plain.log" --arm-by tail --fields fwd_ms |
        tee "$O/tail-plain-summary.txt"
      exit $worst
    ) > "$O/console.log" 2>&1
    ;;
esac
rc=$?
case "$CALL" in
  238 | 247)  # (their builds took /tmp/gdn-gdir)
    if [ -n "$GDIR_SAVED" ]; then echo "$GDIR_SAVED" > /tmp/gdn-gdir; else rm -f /tmp/gdn-gdir; fi
    ;;
esac
tar -C "$O" -cJf "$OUT/run$CALL.tar.xz" .
echo "device-gdn-queue: call $CALL done (exit $rc: its step's, or for 246 and 247 the worst of theirs); $OUT/run$CALL.tar.xz"
tail -30 "$O/console.log"
exit 0
