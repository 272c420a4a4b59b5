#!/usr/bin/env bash
# Parity on fresh inputs: hymo_gdn_test over many seeds, for the default build (A) and for
# each variant of GDN_AB_FLAGS, so that a tolerance met on the test's fixed seeds can be
# checked for margin (the FP32 variant's per-head sums cancel, and one seed in the past missed
# 1e-5). Seed k (1..GDN_SEEDS_N, default 20) runs `hymo_gdn_test --seed 1000k $GDN_SEEDS_ARGS`
# (default "--dtype f32": the FP32 test variant's cases). The summary (scripts/gdn-seeds-summary.py)
# gives, per build and tensor, the largest and the median of the seeds' worst relative errors
# and the seeds that failed; also in $OUT/seeds-summary.txt.
# A: the build of `scripts/device-gdn.sh build` (the prebuilt set when its sources match); the
# variants: prebuilt ones (scripts/gdn-prebuild.sh with GDN_AB_FLAGS) or built here.
# Usage (repo root, on the device): OUT=/some/dir [GDN_AB_FLAGS="-DX=0"] scripts/device-gdn-seeds.sh
set -o pipefail
OUT=${OUT:-/tmp/gdn-out}
mkdir -p "$OUT"
ROOT=$(pwd)
. "$ROOT/scripts/gdn-prebuilt-lib.sh"
if [ ! -s /tmp/gdn-gdir ] || [ ! -x "$(cat /tmp/gdn-gdir)/hymo_gdn_test" ]; then
  OUT="$OUT/a-build" "$ROOT/scripts/device-gdn.sh" build > "$OUT/a-build.log" 2>&1 \
    || { echo "device-gdn-seeds: A's build failed (see $OUT/a-build.log)" >&2; tail -20 "$OUT/a-build.log" >&2; exit 1; }
fi
TESTS=("$(cat /tmp/gdn-gdir)/hymo_gdn_test")
NAMES=(A)
i=0
if [ -n "${GDN_AB_FLAGS:-}" ]; then
  IFS=';' read -r -a VARIANTS <<< "$GDN_AB_FLAGS"
  for flags in "${VARIANTS[@]}"; do
    i=$((i + 1))
    PN=$(prebuilt_name "$flags")
    if [ -n "$PN" ] && PD=$(prebuilt "$PN" "$flags"); then
      BB=$PD
    else
      BB=$ROOT/build-dev-s$i
      cmake -S . -B "$BB" -G Ninja -DHYMO_ENABLE_COMPILER=OFF -DHYMO_ENABLE_CUDA=ON -DHYMO_ENABLE_NCCL=OFF \
        "-DCMAKE_CUDA_FLAGS=$flags" > "$OUT/build-b$i.log" 2>&1 &&
        ninja -C "$BB" -j16 hymo_gdn_test >> "$OUT/build-b$i.log" 2>&1 ||
        { echo "device-gdn-seeds: B$i's build failed" >&2; tail -30 "$OUT/build-b$i.log" >&2; exit 1; }
    fi
    TESTS+=("$(find "$BB" -name hymo_gdn_test -type f | head -1)")
    NAMES+=("B$i")
    echo "== B$i = $flags" | tee -a "$OUT/seeds.log"
  done
fi
for k in $(seq "${GDN_SEEDS_N:-20}"); do
  for j in "${!TESTS[@]}"; do
    "${TESTS[$j]}" --seed $((1000 * k)) ${GDN_SEEDS_ARGS:---dtype f32} > "$OUT/seed-${NAMES[$j]}-$k.log" 2>&1
    rc=$?
    echo "${NAMES[$j]} seed $((1000 * k)) rc=$rc $(grep '^worst relative errors' "$OUT/seed-${NAMES[$j]}-$k.log")" \
      | tee -a "$OUT/seeds.log"
  done
done
python3 "$ROOT/scripts/gdn-seeds-summary.py" "$OUT/seeds.log" | tee "$OUT/seeds-summary.txt"
