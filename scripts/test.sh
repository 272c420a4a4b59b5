#!/usr/bin/env bash
# Installs, builds and runs every test (lit + ctest). GPU tests skip with a
# message where no device is present. Exits non-zero when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
build=${HYMO_BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure -j"${HYMO_JOBS:-$(nproc)}"
