#!/usr/bin/env bash
# Downloads the wheels of flash-linear-attention's kernel package (fla-core, MIT) and
# einops into .whl/ (git-ignored), for the GPU machine, which cannot reach PyPI: carry
# .whl there (the device tool's `carry`); scripts/device-gdn.sh's `py` step installs them
# into a scratch directory and bench_gdn.py then times FLA's Triton chunk_gla side by side.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .whl
python3 -m pip download --no-deps -d .whl fla-core==0.6.0 einops==0.8.1
ls -l .whl
