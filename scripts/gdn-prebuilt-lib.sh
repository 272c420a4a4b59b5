# Sourced by scripts/device-gdn.sh and scripts/device-gdn-ab.sh (needs ROOT and OUT).
# A set built beforehand on the development machine (scripts/gdn-prebuild.sh, carried as
# .gdn-prebuilt): unpacked and used in place of the build step when it was built from
# these sources with these flags and its benchmark runs here; else the build runs.
# prebuilt NAME FLAGS: prints the unpacked folder, or fails (messages on stderr).
prebuilt() {
  local P=$ROOT/.gdn-prebuilt d=/tmp/gdn-prebuilt/$1
  [ -f "$P/$1.tar.xz" ] && [ -f "$P/SOURCES.sha256" ] && [ -f "$P/FLAGS" ] || return 1
  if ! (cd "$ROOT" && sha256sum -c --quiet "$P/SOURCES.sha256") > /dev/null 2>&1; then
    echo "== prebuilt $1: built from other kernels/gdn sources: not used" | tee -a "$OUT/log" >&2
    return 1
  fi
  if [ "$(grep "^$1 " "$P/FLAGS" | head -1 | cut -d' ' -f2-)" != "$2" ]; then
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
