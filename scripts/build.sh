#!/usr/bin/env bash
# Configures and builds hymo into build/ (or $HYMO_BUILD_DIR) with ninja,
# ccache and lld. Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${HYMO_BUILD_DIR:-build}
jobs=${HYMO_JOBS:-$(nproc)}
cmake -S . -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  -DLLVM_USE_LINKER=lld \
  "$@"
ninja -C "$build" -j"$jobs"
