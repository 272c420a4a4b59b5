#!/bin/sh
# Copies the header-only libraries the runtime needs (nlohmann/json, CLI11)
# into .carry/include (ignored by git), for machines without a package
# registry (the GPU machine): carry .carry/include there and configure as
# usual; runtime/cmake/HeaderDeps.cmake falls back to it (HYMO_CARRY_INCLUDE).
# Usage: scripts/carry-headers.sh [DEST]   (default: <repo>/.carry/include)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-"$root/.carry/include"}
mkdir -p "$dest"
for dir in nlohmann CLI; do
  src=/usr/include/$dir
  if [ ! -d "$src" ]; then
    echo "carry-headers: $src not found (install nlohmann-json3-dev and libcli11-dev)" >&2
    exit 1
  fi
  rm -rf "${dest:?}/$dir"
  cp -R "$src" "$dest/$dir"
  echo "carry-headers: copied $src -> $dest/$dir"
done
