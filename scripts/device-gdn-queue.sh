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
#   250  HYMO_GDN_TAIL's rule (session 50) against the code before it: the default build's full
#        test, memcheck, synccheck and initcheck (T <= 320; the last two since session 53), then
#        an A/B against 7514cba (prebuilt as B1 with GDN_AB_FLAGS=@7514cba
#        scripts/gdn-prebuild.sh; the device cannot build it) on nine shapes,
#        three rounds, summarised by the --cps and --nseg asked (--by-asked: the arms' segment
#        counts differ) (about 190 s; memcheck took 6 s and synccheck with initcheck 11 s in
#        session 53's runs 264 and 265)
#   305  the plain forward's output pass profiled (session 60): ncu's full set and per-instruction
#        stall samples of its first launch at the default shape (`ncuk`, NCU_KERNEL=out_bf16: the
#        benchmark runs the plain forward first), then the stall ratios of every output pass
#        launch (`ncus`); read here with scripts/gdn-sass-lines.py (the prebuilt A brings the
#        SASS with source lines). The forward is the default shape's nearest target (0.1040 ms
#        held on the H200 in run 327 against 0.10); run as run 305 (session 61, an H100;
#        notes/runs/gdn-2026-12-06j-run305-ncu-out-plain.txt) and run 328 (session 71, an H200;
#        notes/runs/gdn-2026-12-07i-run328-*) (about 60 s)
# Call 250 carries a prebuilt set with the @7514cba arm (about 14.5 MB since session 52's
# HYMO_GDN_SASS_ONLY; A about 7):
#   GDN_AB_FLAGS=@7514cba scripts/gdn-prebuild.sh
# Several calls in one device call: GDN_QUEUE_END=<epoch seconds> ends each call's steps by then
# (default: 540 s after the call's start), e.g. E=$(($(date +%s)+560)); for c in 218 250; do
# GDN_QUEUE_END=$E OUT=$OUT scripts/device-gdn-queue.sh $c; done.
# (Sessions 43-45 ran the calls queued before: 210-212 as runs 210-214, 215 and 216 as runs 215 and
# 216; session 47 ran 227 as run 227 (the backward main kernel's tail and key pairs skipped, timing
# only), 228 as run 228 (HYMO_GDN_BWD_KTAIL: slower, removed; its seeds call was dropped) and 229
# as run 229 (the query warps' parts skipped, timing only); session 48 ran 238 as runs 238 and 244 and
# 218 as run 243; session 49 got no device and queued 246 and 247; session 50 ran them as runs 246
# and 247 (the switch on by default since, with its rule; the calls removed, commit 815fa8c has them)
# and queued 250 after runs 248 and 249, and 252; session 51 got no device and queued 253; session 52
# ran 254 as run 252 (every segment merged, even), 218 as run 253 and 253 as run 254 (HYMO_GDN_BWD_PAIR2:
# slower, removed; the call removed, commit 19e0946 has it), then rewrote 254; session 53 ran 254
# as run 256 (HYMO_GDN_OUT_MERGE: slower, removed), 218 as 257, 252 as 258 (HYMO_GDN_STATE_GRID:
# even, removed; both calls removed, commit 3fbdc17 has them), 250 as 259 and 219 as 260;
# session 54 ran 218 and 219 as run 269 (an H200), and wrote 271 (HYMO_GDN_BWD_BCEARLY) and ran it
# as run 271 (slower, removed; commit 0f19299 has the call); session 56 wrote 285
# (HYMO_GDN_OUT_RANGES) and ran it as run 285 (slower, removed; commit 9f15488 has the call);
# session 57 wrote 293 and 294 (HYMO_GDN_OUT_EARLY) and ran them as runs 293 and 294 (faster, on
# by default; commits f28ddbf and c2aeee3 have the calls), then wrote 295 and 296 (no machine
# came); session 58 ran them as runs 295 and 296 (both faster, on by default since; commit bec1456
# has the calls), wrote 298 and ran it as run 298 (the new default checked; commit 147b2f6 has
# the call), then wrote 299; session 59 ran 299 as run 299 (the default checked; commit 4c868ab
# has the call), wrote 300 (out_min_ctas), ran it shortened as runs 300 and 301 (the device
# time left: commit f2eccc8 has the call as written) and wrote 302; session 60 wrote 303
# (HYMO_GDN_BWD_MTAIL) and ran it as run 303 (slower, removed), ran 302 as run 302
# (HYMO_GDN_OUT_MINB64=5 faster, on by default since; HYMO_GDN_ADJ_MINB64 slower, removed) and
# checked the first as run 304 (commit 8bbecda has both calls), then wrote 305; session 61 ran 305
# as run 305 and 218 as run 306 (an H100), wrote 306 (three switches for the plain output pass) and ran
# it as run 307 on an H200 (all slower, removed; commit 9b90f28 has the call), then 218 and 219 as runs
# 308 and 309 (the same H200), and wrote 307 (session 71 ran it, with 218 and 305, as runs 326-328 on an
# H200; the call removed, commit a73a509 has it); session 68 wrote 322 (HYMO_GDN_PGRAD_FOLD) and session
# 69 ran it as run 322 (an H100: within noise, removed; commit 3eeda3b has the call); session 72 wrote
# 331 (no device time was left to run it; session 73 replaced it by 332, with two more switches, and ran
# it as run 332 (all four even, removed; commit 191cb99 has the call); docs/kernels/gdn.md item 0a and notes/gdn-measurements.md.)
set -o pipefail
CALL=${1:-}
case "$CALL" in
  218 | 219 | 238 | 250 | 305) ;;
  *)
    echo "device-gdn-queue: no queued call '$CALL' (218, 219, 238, 250 or 305: docs/kernels/gdn.md item 0a)" >&2
    exit 2
    ;;
esac
: "${OUT:?set OUT to the directory the device tool returns}"
[[ ${GDN_QUEUE_END:-0} =~ ^[0-9]+$ ]] || {
  echo "device-gdn-queue: GDN_QUEUE_END='$GDN_QUEUE_END' is not a time in epoch seconds (date +%s)" >&2; exit 2; }
[ -f kernels/gdn/gdn.h ] || { echo "device-gdn-queue: run from the repository root" >&2; exit 2; }
O=/tmp/gdn-queue-$CALL
rm -rf "$O"
mkdir -p "$O" "$OUT"
# bounded N CMD...: CMD under timeout, N seconds or fewer, so that the call's steps end by 540 s
# after its start (the archive below must still be written within the tool's 600 s); once the
# time is up, CMD is skipped (exit 124, as a timeout)
T0=$(date +%s)
T_END=${GDN_QUEUE_END:-$((T0 + 540))}
bounded() {
  local n=$1 left=$((T_END - $(date +%s)))
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
restore_gdir() { if [ -n "$GDIR_SAVED" ]; then echo "$GDIR_SAVED" > /tmp/gdn-gdir; else rm -f /tmp/gdn-gdir; fi; }
# the worst of a call's steps and verdicts (call 250): note RC keeps the largest
worst=0
note() { [ "$1" -gt "$worst" ] && worst=$1; }
# test_san BOUND SAN_TIMEOUT TOOLS: the default build's GPU test and the sanitizers TOOLS into
# $O/t, each verdict noted (device-gdn.sh exits non-zero only where its build fails: the test's
# and the sanitizers' verdicts are in their logs)
test_san() {
  OUT=$O/t GDN_SAN_TOOLS="$3" GDN_SAN_TIMEOUT=$2 bounded "$1" scripts/device-gdn.sh build test san
  note $?
  grep -q "PASSED: 0 of" "$O/t/test.log" 2> /dev/null || { echo "device-gdn-queue: the GPU test did not pass"; note 1; }
  local tool
  for tool in $3; do
    grep -q "^exit 0" "$O/t/san-$tool.log" 2> /dev/null || { echo "device-gdn-queue: $tool did not pass"; note 1; }
  done
}
case "$CALL" in
  218)
    OUT=$O bounded 400 scripts/device-gdn.sh build test bench ncut > "$O/console.log" 2>&1
    ;;
  219)
    OUT=$O GDN_PY_ARGS=--quick GDN_PY_TIMEOUT=480 bounded 540 scripts/device-gdn.sh build py > "$O/console.log" 2>&1
    ;;
  238)
    OUT=$O GDN_CUDA_FLAGS=-DHYMO_GDN_CLOCKS=1 bounded 300 scripts/device-gdn.sh build clocks > "$O/console.log" 2>&1
    ;;
  250)
    (
      # (memcheck, synccheck and initcheck take seconds each; racecheck, about 90 s, runs apart:
      # OUT=$OUT/t GDN_SAN_TOOLS=racecheck scripts/device-gdn.sh build san)
      test_san 250 60 "memcheck synccheck initcheck"
      OUT=$O/ab GDN_AB_FLAGS=@7514cba GDN_AB_TEST=0 GDN_AB_ROUNDS=3 GDN_AB_SUMMARY_ARGS=--by-asked \
        GDN_AB_SHAPES="4,4096,28,32,32 4,4096,64,32,32 4,2048,28,32,32 4,4096,28,32,16 1,4096,28,32,32 4,4096,16,32,32 4,4096,24,32,32 4,4096,20,32,32 4,4096,32,32,32" \
        bounded 280 scripts/device-gdn-ab.sh
      note $?
      exit $worst
    ) > "$O/console.log" 2>&1
    ;;
  305)
    OUT=$O NCU_KERNEL=out_bf16 bounded 300 scripts/device-gdn.sh build ncuk ncus > "$O/console.log" 2>&1
    ;;
esac
rc=$?
case "$CALL" in
  238)  # (its build took /tmp/gdn-gdir)
    restore_gdir
    ;;
esac
tar -C "$O" -cJf "$OUT/run$CALL.tar.xz" .
echo "device-gdn-queue: call $CALL done (exit $rc: its step's, or for 250 the worst of its steps and verdicts); $OUT/run$CALL.tar.xz"
tail -40 "$O/console.log"
exit 0
