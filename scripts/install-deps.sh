#!/usr/bin/env bash
# Installs what hymo needs on Debian 12 (run as root; CI runs it on a fresh
# machine). CUDA 13 is expected at /usr/local/cuda; without it the CUDA parts
# are skipped at configure time (HYMO_ENABLE_CUDA=AUTO).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs=(
  cmake ninja-build g++ ccache lld git python3 python3-yaml file
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev libopenblas0-pthread
)
# PyTorch (Debian's, CPU) for the cross-check tests and the CPU benchmark.
if [ "${HYMO_WITH_TORCH:-1}" = 1 ]; then
  pkgs+=(python3-torch python3-numpy)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi
