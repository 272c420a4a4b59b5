# Sourced by scripts/device-gdn.sh, device-gdn-ab.sh and device-gdn-seeds.sh (needs ROOT and OUT).
# A set built beforehand on the development machine (scripts/gdn-prebuild.sh, carried as
# .gdn-prebuilt): unpacked and used in place of the build step when it was built from
# these sources with these flags and its benchmark runs here; else the build runs.
# FLAGS holds a line "<name> <flags>" a set (gdn-prebuild.sh).
# prebuilt_flags NAME: the flags set NAME was built with.
prebuilt_flags() { grep "^$1 " "$ROOT/.gdn-prebuilt/FLAGS" 2>/dev/null | head -1 | cut -d' ' -f2-; }
# prebuilt_name FLAGS: the name of the set built with exactly FLAGS (A, B1, ...), or nothing.
prebuilt_name() {
  local n
  [ -f "$ROOT/.gdn-prebuilt/FLAGS" ] || return 0
  for n in $(cut -d' ' -f1 "$ROOT/.gdn-prebuilt/FLAGS"); do
    if [ "$(prebuilt_flags "$n")" = "$1" ]; then echo "$n"; return 0; fi
  done
}
# prebuilt_commit NAME: ", kernels/gdn of commit X" for a set built from another commit ("@REF"
# variants, gdn-prebuild.sh's COMMITS), else nothing.
prebuilt_commit() {
  local c
  c=$(grep "^$1 " "$ROOT/.gdn-prebuilt/COMMITS" 2>/dev/null | head -1 | cut -d' ' -f2)
  [ -z "$c" ] || echo ", kernels/gdn of commit $c"
}
# prebuilt NAME FLAGS: prints the unpacked folder, or fails (messages on stderr).
prebuilt() {
  local P=$ROOT/.gdn-prebuilt d=/tmp/gdn-prebuilt/$1
  [ -f "$P/$1.tar.xz" ] && [ -f "$P/SOURCES.sha256" ] && [ -f "$P/FLAGS" ] || return 1
  if ! (cd "$ROOT" && sha256sum -c --quiet "$P/SOURCES.sha256") > /dev/null 2>&1; then
    echo "== prebuilt $1: built from other kernels/gdn sources: not used" | tee -a "$OUT/log" >&2
    return 1
  fi
  if [ "$(prebuilt_flags "$1")" != "$2" ]; then
    echo "== prebuilt $1: built with other CUDA flags than '$2': not used" | tee -a "$OUT/log" >&2
    return 1
  fi
  rm -rf "$d" && mkdir -p "$d" && tar -C "$d" -xJf "$P/$1.tar.xz" || return 1
  if ! "$d/hymo_gdn_bench" --json --shape 1,64,1,32,32 --iters 1 > "$d/start.log" 2>&1; then
    echo "== prebuilt $1: does not run here ($(tail -1 "$d/start.log")): not used" | tee -a "$OUT/log" >&2
    return 1
  fi
  echo "$d"
}

# ensure_a_build: the default build (A) of this machine's session, recorded in /tmp/gdn-gdir
# by `scripts/device-gdn.sh build` (which takes the prebuilt A when there is one); runs that
# step when there is none yet. Fails with the build log's tail.
ensure_a_build() {  # [LOG]
  if [ ! -s /tmp/gdn-gdir ] || [ ! -x "$(cat /tmp/gdn-gdir)/hymo_gdn_test" ] ||
     [ ! -x "$(cat /tmp/gdn-gdir)/hymo_gdn_bench" ]; then
    echo "== A: no earlier build in this session; running scripts/device-gdn.sh build" | tee -a "${1:-/dev/null}" >&2
    OUT="$OUT/a-build" "$ROOT/scripts/device-gdn.sh" build > "$OUT/a-build.log" 2>&1 \
      || { echo "A's build failed (see $OUT/a-build.log)" >&2; tail -20 "$OUT/a-build.log" >&2; return 1; }
  fi
}

# build_variants LOG: sets VARIANT_DIRS, one folder a variant of GDN_AB_FLAGS (';'-separated
# sets of CUDA defines), in order: the prebuilt set with those flags when there is one, else
# a build here into build-dev-b<i> (hymo_gdn_bench and hymo_gdn_test; the builds not
# prebuilt run at once: each is a handful of nvcc processes, and two or three fill the 16
# cores about as fast as one). Build logs: $OUT/build-b<i>.log; "== B<i> ..." lines to LOG.
build_variants() {
  local log=$1 flags i=0 pi bb pn pd
  local -a pids=() variants=()
  VARIANT_DIRS=()
  IFS=';' read -r -a variants <<< "${GDN_AB_FLAGS:-}"
  for flags in "${variants[@]}"; do
    i=$((i + 1))
    bb=$ROOT/build-dev-b$i
    echo "== B$i = $flags" | tee -a "$log"
    pn=$(prebuilt_name "$flags")  # the prebuilt set with these flags, whatever its position there
    if [ -n "$pn" ] && pd=$(prebuilt "$pn" "$flags"); then
      echo "== B$i: prebuilt ($pn$(prebuilt_commit "$pn")), no build here" | tee -a "$log"
      bb=$pd
    elif [[ $flags == @* ]]; then
      echo "B$i = '$flags' (another commit's kernels/gdn) is built only by scripts/gdn-prebuild.sh" \
        "on the development machine (this one has no history to take it from): no usable prebuilt" \
        "set has it; run that script with the same GDN_AB_FLAGS and carry .gdn-prebuilt" | tee -a "$log" >&2
      for pi in "${pids[@]}"; do kill "${pi%%:*}" 2> /dev/null; done
      return 1
    else
      cmake -S "$ROOT" -B "$bb" -G Ninja -DHYMO_ENABLE_COMPILER=OFF -DHYMO_ENABLE_CUDA=ON \
        -DHYMO_ENABLE_NCCL=OFF "-DCMAKE_CUDA_FLAGS=$flags" >> "$OUT/build-b$i.log" 2>&1 \
        || { echo "B$i's configure failed" >&2; tail -20 "$OUT/build-b$i.log" >&2
             for pi in "${pids[@]}"; do kill "${pi%%:*}" 2> /dev/null; done; return 1; }
      ninja -C "$bb" -j16 hymo_gdn_bench hymo_gdn_test >> "$OUT/build-b$i.log" 2>&1 &
      pids+=("$!:$i")
    fi
    VARIANT_DIRS+=("$bb")
  done
  for pi in "${pids[@]}"; do
    wait "${pi%%:*}" || { echo "B${pi##*:}'s build failed" >&2; tail -40 "$OUT/build-b${pi##*:}.log" >&2; return 1; }
  done
}
