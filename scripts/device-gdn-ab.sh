#!/usr/bin/env bash
# A/B of a compile-time variant of kernels/gdn in one device call: builds the
# benchmark a second time with extra CUDA defines (GDN_AB_FLAGS: a macro the kernel
# headers read behind #ifndef, e.g. "-DHYMO_GDN_SOME_SWITCH=0") into build-dev-b, then runs the main build's
# benchmark (A) and the variant's (B) alternately, GDN_AB_ROUNDS times each, on the
# shapes of GDN_AB_SHAPES (default: the default shape). Run after device-gdn.sh build.
# Usage (repo root, on the device): OUT=/some/dir GDN_AB_FLAGS=... scripts/device-gdn-ab.sh
set -o pipefail
OUT=${OUT:-/tmp/gdn-out}
mkdir -p "$OUT"
: "${GDN_AB_FLAGS:?set GDN_AB_FLAGS to the CUDA defines of the variant}"
A=$(cat /tmp/gdn-gdir)/hymo_gdn_bench
BB=$(pwd)/build-dev-b
echo "== A/B: B = $GDN_AB_FLAGS" | tee -a "$OUT/ab.log"
cmake -S . -B "$BB" -G Ninja -DHYMO_ENABLE_COMPILER=OFF -DHYMO_ENABLE_CUDA=ON -DHYMO_ENABLE_NCCL=OFF \
  "-DCMAKE_CUDA_FLAGS=$GDN_AB_FLAGS" >> "$OUT/ab-build.log" 2>&1 || { tail -20 "$OUT/ab-build.log"; exit 1; }
ninja -C "$BB" -j16 hymo_gdn_bench >> "$OUT/ab-build.log" 2>&1 || { tail -40 "$OUT/ab-build.log"; exit 1; }
B=$(find "$BB" -name hymo_gdn_bench -type f | head -1)
for r in $(seq "${GDN_AB_ROUNDS:-3}"); do
  for sh in ${GDN_AB_SHAPES:-4,4096,28,32,32}; do
    echo "A $("$A" --json --shape "$sh" | grep '^{')" | tee -a "$OUT/ab.log"
    echo "B $("$B" --json --shape "$sh" | grep '^{')" | tee -a "$OUT/ab.log"
  done
done
