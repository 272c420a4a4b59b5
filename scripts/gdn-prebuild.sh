#!/usr/bin/env bash
# Build kernels/gdn's GPU test and benchmark HERE (no GPU needed) for the GPU machine, so
# that a device call skips its own build (about 70 s of device time on a fresh machine,
# most of a short call). The device scripts use the set only when it was built from the
# same kernels/gdn sources and its programs run there; otherwise they build as before.
#
# Output, .gdn-prebuilt/ (git-ignored; carry it: run(..., carry=[".gdn-prebuilt"])):
#   A.tar.xz             the default build (GDN_CUDA_FLAGS, default none)
#   B1.tar.xz, B2, ...   one for each variant of GDN_AB_FLAGS (';'-separated sets of CUDA
#                        defines, as scripts/device-gdn-ab.sh takes them)
#   FLAGS                "<name> <flags>" a line
#   COMMITS              "<name> <commit>" for each "@REF" variant (below)
#   SOURCES.sha256       the sources they were built from (sha256sum -c in the repo root)
# Each archive holds hymo_gdn_test, hymo_gdn_bench, hymo_gdn_cpu_test and libhymo_gdn.so
# (HYMO_GDN_SHARED: one copy of the device code, the CUDA runtime linked in statically;
# the programs find the library beside them; HYMO_GDN_SASS_ONLY: sm_90a SASS alone, its fat
# binary uncompressed so that xz packs it, about 7 MB an archive instead of 15), and in A
# (every set with GDN_PREBUILD_SASS=all)
# lines-bf16_s32.sass.xz (the default unit's SASS with source lines, for
# scripts/gdn-sass-lines.py) when nvdisasm is here.
# A variant written "@REF [defines]" is built from commit REF's kernels/gdn (with the defines, if
# any) and the working tree's other files: an A/B of a change to the kernels' code (a refactor,
# a rewrite) against the code before it, with no compile-time switch kept for it. Only this
# script builds such a variant (the device has no history to take REF from): give the device
# scripts the same GDN_AB_FLAGS and carry the set.
# This machine's nvcc must be the device's major.minor (13.0): check `nvcc --version`.
# Usage (repo root): [GDN_CUDA_FLAGS=...] [GDN_AB_FLAGS="-DX=1;-DY=1"] scripts/gdn-prebuild.sh
set -euo pipefail
ROOT=$(pwd)
[ -f "$ROOT/kernels/gdn/gdn.h" ] || { echo "gdn-prebuild: run from the repository root" >&2; exit 2; }
OUTD=$ROOT/.gdn-prebuilt
NVDISASM=$(command -v nvdisasm || ls /opt/cudatools/nvidia/cu13/bin/nvdisasm 2>/dev/null || true)
CUOBJDUMP=$(command -v cuobjdump || ls /opt/cudatools/nvidia/cu13/bin/cuobjdump 2>/dev/null || true)
# "@REF" variants: every REF must name a commit with kernels/gdn before the old set is removed
# ref_of SPEC: REF of "@REF [defines]"
ref_of() { local r=${1%% *}; echo "${r#@}"; }
check_ref() {  # spec
  [[ $1 == @* ]] || return 0
  local ref
  ref=$(ref_of "$1")
  git -C "$ROOT" cat-file -e "$ref^{commit}:kernels/gdn/gdn.h" 2> /dev/null || {
    echo "gdn-prebuild: '$1': '$ref' is not a commit of this repository with kernels/gdn" >&2
    exit 1; }
}
check_ref "${GDN_CUDA_FLAGS:-}"
if [ -n "${GDN_AB_FLAGS:-}" ]; then
  IFS=';' read -r -a VARIANTS <<< "$GDN_AB_FLAGS"
  for flags in "${VARIANTS[@]}"; do check_ref "$flags"; done
fi
rm -rf "$OUTD"
mkdir -p "$OUTD"
# the sources' hashes before the builds (checked again after them: an edit during the
# builds would otherwise label binaries with sources they were not built from)
hash_sources() {
  (cd "$ROOT" && sha256sum kernels/gdn/*.cu kernels/gdn/*.cuh kernels/gdn/*.h kernels/gdn/*.cc \
     kernels/gdn/CMakeLists.txt)
}
hash_sources > "$OUTD/SOURCES.sha256.pending"

build_one() {  # name flags ("@REF [defines]": REF's kernels/gdn)
  local name=$1 spec=$2 flags=$2 src=$ROOT bd=$ROOT/build-prebuilt-$1
  local lg=$bd/prebuild.log
  local targets=(hymo_gdn_test hymo_gdn_bench hymo_gdn_cpu_test hymo_gdn_layout_test)  # built and carried
  mkdir -p "$bd"
  if [[ $spec == @* ]]; then
    local commit
    flags=""
    [[ $spec == *" "* ]] && flags=${spec#* }
    commit=$(git -C "$ROOT" rev-parse --verify -q "$(ref_of "$spec")^{commit}")  # (check_ref: it is one)
    src=$bd/src
    rm -rf "$src" && mkdir -p "$src"
    (cd "$ROOT" && git ls-files -z | tar --null -T - -cf -) | tar -x -C "$src"
    rm -rf "$src/kernels/gdn"
    git -C "$ROOT" archive "$commit" kernels/gdn | tar -x -C "$src"
    echo "$name $commit" >> "$OUTD/COMMITS"
    echo "== $name: kernels/gdn of commit $commit, the working tree's other files"
  fi
  # a build folder configured from another source tree (an "@REF" variant before, or the working
  # tree before an "@REF" one) is started afresh: cmake refuses to switch sources
  if [ -f "$bd/CMakeCache.txt" ] && ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$src" "$bd/CMakeCache.txt"; then
    find "$bd" -mindepth 1 -maxdepth 1 ! -name src -exec rm -rf {} +
  fi
  echo "== $name: building (CUDA flags: '${flags}')"
  cmake -S "$src" -B "$bd" -G Ninja -DHYMO_ENABLE_COMPILER=OFF -DHYMO_ENABLE_CUDA=ON -DHYMO_ENABLE_NCCL=OFF \
    -DHYMO_GDN_SHARED=ON -DHYMO_GDN_SASS_ONLY=ON "-DCMAKE_CUDA_FLAGS=$flags" > "$lg" 2>&1 || { tail -20 "$lg"; rm -rf "$OUTD"; exit 1; }
  ninja -C "$bd" -j"$(nproc)" "${targets[@]}" >> "$lg" 2>&1 \
    || { tail -40 "$lg"; rm -rf "$OUTD"; exit 1; }  # (no partial set left to carry)
  local g=$bd/kernels/gdn extra=()
  # the SASS with source lines for A only (GDN_PREBUILD_SASS=all: every set): a variant's
  # adds about 0.9 MB, and four sets with it do not fit the device tool's 64 MiB carry
  if [ -n "$NVDISASM" ] && [ -n "$CUOBJDUMP" ] && { [ "$name" = A ] || [ "${GDN_PREBUILD_SASS:-A}" = all ]; }; then
    local x
    x=$(mktemp -d)
    if (cd "$x" && "$CUOBJDUMP" -xelf all "$g/CMakeFiles/hymo_gdn.dir/gdn_inst_bf16_s32.cu.o" > /dev/null); then
      "$NVDISASM" -gi -c "$x"/*.cubin | xz -T0 -6 > "$g/lines-bf16_s32.sass.xz"
      extra=(lines-bf16_s32.sass.xz)
    fi
    rm -rf "$x"
  fi
  tar -C "$g" -cJf "$OUTD/$name.tar.xz" "${targets[@]}" libhymo_gdn.so "${extra[@]}"
  echo "$name $spec" >> "$OUTD/FLAGS"
  echo "== $name: $(du -h "$OUTD/$name.tar.xz" | cut -f1)"
}

build_one A "${GDN_CUDA_FLAGS:-}"
if [ -n "${GDN_AB_FLAGS:-}" ]; then
  IFS=';' read -r -a VARIANTS <<< "$GDN_AB_FLAGS"
  i=0
  for flags in "${VARIANTS[@]}"; do
    i=$((i + 1))
    build_one "B$i" "$flags"
  done
fi
if ! hash_sources | cmp -s - "$OUTD/SOURCES.sha256.pending"; then
  rm -rf "$OUTD"
  echo "gdn-prebuild: kernels/gdn changed during the builds: the set is removed; run it again" >&2
  exit 1
fi
mv "$OUTD/SOURCES.sha256.pending" "$OUTD/SOURCES.sha256"
du -sh "$OUTD"
if [ "$(du -sm "$OUTD" | cut -f1)" -gt 56 ]; then
  echo "gdn-prebuild: .gdn-prebuilt is over 56 MB: the device tool carries 64 MiB in all, the working tree and .whl included; build fewer variants" >&2
  exit 1
fi
