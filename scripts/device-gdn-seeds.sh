#!/usr/bin/env bash
# Parity on fresh inputs: hymo_gdn_test over many seeds, for the default build (A) and for
# each variant of GDN_AB_FLAGS, so that a tolerance met on the test's fixed seeds can be
# checked for margin (the FP32 variant's per-head sums cancel, and one seed in the past missed
# 1e-5). Seed k (1..GDN_SEEDS_N, default 20) runs `hymo_gdn_test --seed 1000k $GDN_SEEDS_ARGS`
# (default "--dtype f32": the FP32 test variant's cases). The summary (scripts/gdn-seeds-summary.py)
# gives, per build and tensor, the largest and the median of the seeds' worst relative errors
# and the seeds that failed; also in $OUT/seeds-summary.txt.
# A: the build of `scripts/device-gdn.sh build` (the prebuilt set when its sources match); the
# variants: prebuilt ones (scripts/gdn-prebuild.sh with GDN_AB_FLAGS) or built here, all at
# once (gdn-prebuilt-lib.sh's build_variants, shared with device-gdn-ab.sh).
# Usage (repo root, on the device): OUT=/some/dir [GDN_AB_FLAGS="-DX=0"] scripts/device-gdn-seeds.sh
set -o pipefail
OUT=${OUT:-/tmp/gdn-out}
mkdir -p "$OUT"
ROOT=$(pwd)
. "$ROOT/scripts/gdn-prebuilt-lib.sh"
ensure_a_build "$OUT/seeds.log" || { echo "device-gdn-seeds: no A" >&2; exit 1; }
TESTS=("$(cat /tmp/gdn-gdir)/hymo_gdn_test")
NAMES=(A)
build_variants "$OUT/seeds.log" || { echo "device-gdn-seeds: a variant's build failed" >&2; exit 1; }
i=0
for BB in "${VARIANT_DIRS[@]}"; do
  i=$((i + 1))
  TESTS+=("$(find "$BB" -name hymo_gdn_test -type f | head -1)")
  NAMES+=("B$i")
done
for k in $(seq "${GDN_SEEDS_N:-20}"); do
  for j in "${!TESTS[@]}"; do
    "${TESTS[$j]}" --seed $((1000 * k)) ${GDN_SEEDS_ARGS:---dtype f32} > "$OUT/seed-${NAMES[$j]}-$k.log" 2>&1
    rc=$?
    echo "${NAMES[$j]} seed $((1000 * k)) rc=$rc ok*=$(grep -c '^  ok\*' "$OUT/seed-${NAMES[$j]}-$k.log")" \
      "$(grep '^worst relative errors' "$OUT/seed-${NAMES[$j]}-$k.log")" \
      | tee -a "$OUT/seeds.log"
  done
done
python3 "$ROOT/scripts/gdn-seeds-summary.py" "$OUT/seeds.log" | tee "$OUT/seeds-summary.txt"
