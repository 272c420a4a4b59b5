#!/usr/bin/env bash
# A/B of compile-time variants of kernels/gdn in one device call. GDN_AB_FLAGS holds one
# or more variants separated by ';', each a set of CUDA defines (a macro the kernel
# headers read behind #ifndef, e.g. "-DHYMO_GDN_STATE_AHEAD=1"). Variant i is built into
# build-dev-b<i> (all such builds at once; gdn-prebuilt-lib.sh's build_variants), its GPU
# test runs (--quick; GDN_AB_TEST=full runs every case, 0 none; stopped after
# GDN_AB_TEST_TIMEOUT s, default 300, and the variant left out of the benchmark, as a hung
# variant would otherwise hold the device), then the main build's benchmark (A) and each
# variant's (B1, B2, ...) run in turn, GDN_AB_ROUNDS times (default 3), on the shapes of
# GDN_AB_SHAPES (default: the default shape), with the extra benchmark arguments of
# GDN_AB_BENCH_ARGS (e.g. "--cps 0,3,8": segment lengths).
# A is the build of `scripts/device-gdn.sh build` (recorded in /tmp/gdn-gdir); without one
# in this machine's session the script runs that build step first (it takes the prebuilt
# A when there is one: run 64 lost its A arm when this was left to the caller). A variant
# prebuilt here with the same flags (scripts/gdn-prebuild.sh with GDN_AB_FLAGS, carried
# as .gdn-prebuilt, under any name there) is not rebuilt.
# The log ends with scripts/gdn-ab-summary.py's table (each arm's median against A's), also
# in $OUT/ab-summary.txt (GDN_AB_SUMMARY_ARGS: its arguments, e.g. --by-asked where the arms'
# segment rules differ); $OUT/variant-dirs.txt names the variants' build folders, a line each.
# Usage (repo root, on the device): OUT=/some/dir GDN_AB_FLAGS="..." scripts/device-gdn-ab.sh
set -o pipefail
OUT=${OUT:-/tmp/gdn-out}
mkdir -p "$OUT"
ROOT=$(pwd)
. "$ROOT/scripts/gdn-prebuilt-lib.sh"  # prebuilt(): variants from scripts/gdn-prebuild.sh
: "${GDN_AB_FLAGS:?set GDN_AB_FLAGS to the CUDA defines of the variants}"
ensure_a_build "$OUT/ab.log" || { echo "device-gdn-ab: no A" >&2; exit 1; }
A_BENCH="$(cat /tmp/gdn-gdir)/hymo_gdn_bench"
[ -x "$A_BENCH" ] || { echo "device-gdn-ab: A's benchmark $A_BENCH is missing" >&2; exit 1; }
BINS=("$A_BENCH")
NAMES=(A)
build_variants "$OUT/ab.log" || { echo "device-gdn-ab: a variant's build failed" >&2; exit 1; }
DIRS=("${VARIANT_DIRS[@]}")
printf '%s\n' "${DIRS[@]}" > "$OUT/variant-dirs.txt"  # (B1's folder first: for a caller's own steps)
i=0
for BB in "${DIRS[@]}"; do
  i=$((i + 1))
  if [ "${GDN_AB_TEST:-1}" != 0 ]; then
    T=$(find "$BB" -name hymo_gdn_test -type f | head -1)
    Q=--quick
    [ "${GDN_AB_TEST:-1}" = full ] && Q=
    timeout "${GDN_AB_TEST_TIMEOUT:-300}" "$T" $Q > "$OUT/ab-test-b$i.log" 2>&1
    rc=$?
    echo "B$i test (exit $rc): $(tail -1 "$OUT/ab-test-b$i.log")" | tee -a "$OUT/ab.log"
    if [ "$rc" = 124 ]; then  # (its benchmark would hang the same way)
      echo "B$i: the test timed out; B$i is left out of the benchmark" | tee -a "$OUT/ab.log"
      continue
    fi
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
python3 "$ROOT/scripts/gdn-ab-summary.py" "$OUT/ab.log" ${GDN_AB_SUMMARY_ARGS:-} | tee "$OUT/ab-summary.txt" | tee -a "$OUT/ab.log"
