#!/usr/bin/env bash
# A/B of compile-time variants of kernels/gdn in one device call. GDN_AB_FLAGS holds one
# or more variants separated by ';', each a set of CUDA defines (a macro the kernel
# headers read behind #ifndef, e.g. "-DHYMO_GDN_STATE_AHEAD=1"). Variant i is built into
# build-dev-b<i> (all such builds at once), its GPU test runs (--quick; GDN_AB_TEST=full runs every case, 0 none), then the main
# build's benchmark (A) and each variant's (B1, B2, ...) run in turn, GDN_AB_ROUNDS times
# (default 3), on the shapes of GDN_AB_SHAPES (default: the default shape), with the
# extra benchmark arguments of GDN_AB_BENCH_ARGS (e.g. "--cps 0,3,8": segment lengths).
# A is the build of `scripts/device-gdn.sh build` (recorded in /tmp/gdn-gdir); without one
# in this machine's session the script runs that build step first (it takes the prebuilt
# A when there is one: run 64 lost its A arm when this was left to the caller). A variant
# prebuilt here with the same flags (scripts/gdn-prebuild.sh with GDN_AB_FLAGS, carried
# as .gdn-prebuilt, under any name there) is not rebuilt.
# The log ends with scripts/gdn-ab-summary.py's table (each arm's median against A's), also
# in $OUT/ab-summary.txt.
# Usage (repo root, on the device): OUT=/some/dir GDN_AB_FLAGS="..." scripts/device-gdn-ab.sh
set -o pipefail
OUT=${OUT:-/tmp/gdn-out}
mkdir -p "$OUT"
ROOT=$(pwd)
. "$ROOT/scripts/gdn-prebuilt-lib.sh"  # prebuilt(): variants from scripts/gdn-prebuild.sh
: "${GDN_AB_FLAGS:?set GDN_AB_FLAGS to the CUDA defines of the variants}"
if [ ! -s /tmp/gdn-gdir ] || [ ! -x "$(cat /tmp/gdn-gdir)/hymo_gdn_bench" ]; then
  echo "== A: no earlier build in this session; running scripts/device-gdn.sh build" | tee -a "$OUT/ab.log"
  OUT="$OUT/a-build" "$ROOT/scripts/device-gdn.sh" build > "$OUT/a-build.log" 2>&1 \
    || { echo "device-gdn-ab: A's build failed (see $OUT/a-build.log)" >&2; tail -20 "$OUT/a-build.log" >&2; exit 1; }
fi
A_BENCH="$(cat /tmp/gdn-gdir)/hymo_gdn_bench"
[ -x "$A_BENCH" ] || { echo "device-gdn-ab: A's benchmark $A_BENCH is missing" >&2; exit 1; }
BINS=("$A_BENCH")
NAMES=(A)
IFS=';' read -r -a VARIANTS <<< "$GDN_AB_FLAGS"
# the variants not prebuilt are configured one after another, then built together (each
# build is a handful of nvcc processes, one an instantiation unit: two or three builds
# fill the machine's 16 cores about as fast as one)
DIRS=()
PIDS=()
i=0
for flags in "${VARIANTS[@]}"; do
  i=$((i + 1))
  BB=$(pwd)/build-dev-b$i
  echo "== B$i = $flags" | tee -a "$OUT/ab.log"
  PN=$(prebuilt_name "$flags")  # the prebuilt set with these flags, whatever its position there
  if [ -n "$PN" ] && PD=$(prebuilt "$PN" "$flags"); then  # built beforehand (scripts/gdn-prebuild.sh)
    echo "== B$i: prebuilt ($PN), no build here" | tee -a "$OUT/ab.log"
    BB=$PD
  else
    cmake -S . -B "$BB" -G Ninja -DHYMO_ENABLE_COMPILER=OFF -DHYMO_ENABLE_CUDA=ON -DHYMO_ENABLE_NCCL=OFF \
      "-DCMAKE_CUDA_FLAGS=$flags" >> "$OUT/ab-build-b$i.log" 2>&1 || { tail -20 "$OUT/ab-build-b$i.log"; exit 1; }
    ninja -C "$BB" -j16 hymo_gdn_bench hymo_gdn_test >> "$OUT/ab-build-b$i.log" 2>&1 &
    PIDS+=("$!:$i")
  fi
  DIRS+=("$BB")
done
for pi in "${PIDS[@]}"; do
  wait "${pi%%:*}" || { echo "device-gdn-ab: B${pi##*:}'s build failed" >&2; tail -40 "$OUT/ab-build-b${pi##*:}.log"; exit 1; }
done
i=0
for BB in "${DIRS[@]}"; do
  i=$((i + 1))
  if [ "${GDN_AB_TEST:-1}" != 0 ]; then
    T=$(find "$BB" -name hymo_gdn_test -type f | head -1)
    Q=--quick
    [ "${GDN_AB_TEST:-1}" = full ] && Q=
    "$T" $Q > "$OUT/ab-test-b$i.log" 2>&1
    echo "B$i test (exit $?): $(tail -1 "$OUT/ab-test-b$i.log")" | tee -a "$OUT/ab.log"
  fi
  BINS+=("$(find "$BB" -name hymo_gdn_bench -type f | head -1)")
  NAMES+=("B$i")
done
for r in $(seq "${GDN_AB_ROUNDS:-3}"); do
  for sh in ${GDN_AB_SHAPES:-4,4096,28,32,32}; do
    for k in "${!BINS[@]}"; do
      "${BINS[$k]}" --json --shape "$sh" $GDN_AB_BENCH_ARGS | grep '^{' | sed "s/^/${NAMES[$k]} /" | tee -a "$OUT/ab.log"
    done
  done
done
# medians against A's (scripts/gdn-ab-summary.py; also runs here on a fetched ab.log)
echo "== summary (median of each arm against A's)" | tee -a "$OUT/ab.log"
python3 "$ROOT/scripts/gdn-ab-summary.py" "$OUT/ab.log" | tee "$OUT/ab-summary.txt" | tee -a "$OUT/ab.log"
