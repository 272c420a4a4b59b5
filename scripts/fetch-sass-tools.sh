#!/usr/bin/env bash
# Installs cuobjdump and nvdisasm from PyPI (NVIDIA's nvidia-cuda-cuobjdump and
# nvidia-cuda-nvdisasm wheels) under /opt/cudatools (or $1), where scripts/gdn-prebuild.sh
# and scripts/gdn-sass-same.sh look for them: this machine's CUDA 13 has nvcc and ptxas but
# neither disassembler. With them, the prebuilt A carries its SASS with source lines (for
# scripts/gdn-sass-lines.py on a device call's ncu source page), and gdn-sass-same.sh can say
# here whether a change leaves the default build's machine code the same.
set -euo pipefail
DEST=${1:-/opt/cudatools}
python3 -m pip install -q --no-deps --target "$DEST" nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
for t in cuobjdump nvdisasm; do
  f=$(ls "$DEST"/nvidia/cu*/bin/$t 2> /dev/null | head -1)
  [ -x "$f" ] || { echo "fetch-sass-tools: $t did not land under $DEST/nvidia/cu*/bin" >&2; exit 1; }
  echo "$f: $("$f" --version | tail -1)"
done
