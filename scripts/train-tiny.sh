#!/usr/bin/env bash
# The README's main job: train the tiny HyMo config on the CPU on the
# built-in default text (data/default.txt) and print the falling loss.
#   bash scripts/train-tiny.sh [OUT_DIR]        (default runs/tiny)
# Each run starts over in OUT_DIR (hymo-run train --overwrite): the run that
# was there before, its metrics.jsonl and checkpoints, is deleted.
# Environment: HYMO_BUILD_DIR (default build), HYMO_STEPS (default 300).
set -euo pipefail
# A relative OUT_DIR is the caller's, not the repository's: resolve it first.
out=${1:-}
if [ -n "$out" ] && [ "${out#/}" = "$out" ]; then out=$PWD/$out; fi
cd "$(dirname "$0")/.."
out=${out:-runs/tiny}
build=${HYMO_BUILD_DIR:-build}
steps=${HYMO_STEPS:-300}
case $steps in
  '' | *[!0-9]*)
    echo "train-tiny: HYMO_STEPS='$steps': expected a whole number of steps" >&2
    exit 1 ;;
esac
run="$build/tools/hymo-run/hymo-run"
if [ ! -x "$run" ]; then
  echo "train-tiny: $run not found: build first (bash scripts/build.sh)" >&2
  exit 1
fi
"$run" train --config models/configs/tiny.yaml --data default --steps "$steps" --out "$out" --overwrite
# Mean loss of the first and the last 10 steps, from metrics.jsonl.
awk -F'"loss":' 'NF > 1 { split($2, a, ","); if (a[1] != "null") v[n++] = a[1] + 0 }
  END {
    if (n < 2) { print "train-tiny: too few steps to compare the loss"; exit 0 }
    k = n < 20 ? int(n / 2) : 10
    for (i = 0; i < k; i++) { f += v[i]; l += v[n - 1 - i] }
    printf "train-tiny: mean loss of the first %d steps %.4f, of the last %d steps %.4f\n", k, f / k, k, l / k
  }' "$out/metrics.jsonl"
