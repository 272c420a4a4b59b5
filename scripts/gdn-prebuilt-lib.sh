# Sourced by scripts/device-gdn.sh and scripts/device-gdn-ab.sh (needs ROOT and OUT).
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
