#!/usr/bin/env bash
# Does a change to kernels/gdn leave the kernels' machine code as it was? Compiles every
# instantiation unit (BF16 S = 16, 32, 64, 128; FP32 S = 16, 32, 64) of the working tree and of
# a reference commit to cubins HERE (no GPU needed), disassembles them with cuobjdump, and
# compares the SASS, each instruction's encoding and address column dropped (branch targets are
# kept: code that moves shows). The units compile as the library's build does (C++17, -O3,
# -lineinfo, sm_90a) plus any extra nvcc flags given. With GDN_SAME_PARAMS=1 the kernel
# parameters' constant-bank offsets (c[0x0][...]) are masked too: a change that adds or drops a
# KParams field moves them and nothing else. GDN_SAME_SED, a sed -E script, is applied to both
# sides' SASS too (after GDN_SAME_DROP): e.g. a kernel that gained a defaulted template parameter changes its mangled
# name only (e.g. 's/(state_bf16_kernel.*)ELi2EEEvNS1_7KParams/\1EEEvNS1_7KParams/' masked an
# int parameter NB = 2 added last to state_bf16_kernel's list in session 39). What a refactor (a
# removed switch, a moved helper) must show before it is committed without a device run.
# GDN_SAME_DROP, a Python regular expression: the functions whose mangled names match it are left
# out on both sides (kernels a change adds beside the old ones: e.g. session 43's head-pair state
# pass, 'HeadMapILi1ELi1EEELb[01]ELb1EEEvNS1_7KParams'); the old kernels must still be the same.
# GDN_SAME_BYFUNC=1 compares the functions in name order rather than in the cubin's: a change that
# adds an instantiation can reorder the others in the cubin (session 52's merging scan did), which
# the positional comparison shows as thousands of differing lines.
# Usage (repo root): scripts/gdn-sass-same.sh [REF (default HEAD)] [extra nvcc flags...]
# Exit status: 0 every unit the same, 1 a unit differs (its diff's first lines printed), 2 an
# error (a unit failed to compile, a tool missing).
set -euo pipefail
ROOT=$(pwd)
[ -f "$ROOT/kernels/gdn/gdn.h" ] || { echo "gdn-sass-same: run from the repository root" >&2; exit 2; }
REF=${1:-HEAD}
[ $# -gt 0 ] && shift
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUOBJDUMP=$(command -v cuobjdump || true)
for c in /usr/local/cuda/bin/cuobjdump /opt/cudatools/nvidia/cu13/bin/cuobjdump /tmp/nvd/nvidia/cu13/bin/cuobjdump; do
  [ -n "$CUOBJDUMP" ] || { [ -x "$c" ] && CUOBJDUMP=$c; } || true
done
[ -x "$NVCC" ] || { echo "gdn-sass-same: nvcc not found (set NVCC)" >&2; exit 2; }
[ -n "$CUOBJDUMP" ] || {
  echo "gdn-sass-same: cuobjdump not found (pip install --target DIR nvidia-cuda-cuobjdump, then put" \
    "DIR/nvidia/cu13/bin on PATH)" >&2
  exit 2
}
git rev-parse --verify -q "$REF^{commit}" > /dev/null || { echo "gdn-sass-same: no commit '$REF'" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
UNITS="bf16_s16 bf16_s32 bf16_s64 bf16_s128 f32_s16 f32_s32 f32_s64"
EXTRA=("$@")
# The two factors of an FFMA (FMUL, ...) may swap places between builds of different source text
# (seen in session 37: the same product, R18 * R20 or R20 * R18); sorted here, as they commute.
COMMUTE='
import re, sys
OPS = {"FFMA", "FMUL", "FADD", "DFMA", "DMUL", "DADD", "HFMA2", "HMUL2", "HADD2", "IMAD", "IADD3"}
PRED = re.compile(r"!?U?P(T|\d+)$")
for line in sys.stdin:
    m = re.match(r"(\s*(?:@!?U?P\w+\s+)?)([A-Z0-9]+)((?:\.[A-Z0-9_]+)*)\s+(.*?)\s*;(.*)$", line.rstrip("\n"))
    if m and m.group(2) in OPS:
        ops = [o.strip() for o in m.group(4).split(",")]
        i = 1  # the first source: after the destination and any predicate outputs (IADD3 carries)
        while i < len(ops) and PRED.match(ops[i]):
            i += 1
        if i + 2 <= len(ops):
            ops[i:i + 2] = sorted(ops[i:i + 2])
        line = "%s%s%s %s ;%s\n" % (m.group(1), m.group(2), m.group(3), ", ".join(ops), m.group(5))
    sys.stdout.write(line)
'
# GDN_SAME_DROP's filter: a function's section runs from its "Function :" line to the next one
DROP='
import os, re, sys
pat = re.compile(os.environ["GDN_SAME_DROP"])
skip = False
for line in sys.stdin:
    m = re.match(r"\s*Function : (\S+)", line)
    if m:
        skip = bool(pat.search(m.group(1)))
    if not skip:
        sys.stdout.write(line)
'
# GDN_SAME_BYFUNC's filter: the text before the first function, then each function's section (from
# its "Function :" line to the next one) in the order of the names
BYFUNC='
import re, sys
head, secs, cur = [], {}, None
for line in sys.stdin:
    m = re.match(r"\s*Function : (\S+)", line)
    if m:
        cur = m.group(1)
        secs[cur] = []
    (secs[cur] if cur else head).append(line)
sys.stdout.write("".join(head))
for k in sorted(secs):
    sys.stdout.write("".join(secs[k]))
'
# build SIDE: every unit's SASS from the sources now in $WORK/src (both sides compile at the same
# path: nvcc's output depends on it, e.g. the operand order of a commuted FFMA), encodings and
# addresses (with GDN_SAME_PARAMS=1 parameter offsets too) masked; two units at a time
build() {
  local side=$1 pids=() u
  mkdir -p "$WORK/$side"
  for u in $UNITS; do
    (
      "$NVCC" -std=c++17 -O3 -lineinfo -arch=sm_90a -cubin -I"$WORK/src/kernels/gdn" ${EXTRA[@]+"${EXTRA[@]}"} \
        -o "$WORK/$side/$u.cubin" "$WORK/src/kernels/gdn/gdn_inst_$u.cu" 2> "$WORK/$side/$u.err" ||
        { echo "gdn-sass-same: $u failed to compile ($side):" >&2; cat "$WORK/$side/$u.err" >&2; exit 1; }
      "$CUOBJDUMP" -sass "$WORK/$side/$u.cubin" |
        sed -E 's|/\* *0x[0-9a-f]+ *\*/||g; s|^([[:space:]]*)/\*[0-9a-f]+\*/|\1|; s/[[:space:]]+$//' |
        python3 -c "$COMMUTE" |
        if [ -n "${GDN_SAME_DROP:-}" ]; then python3 -c "$DROP"; else cat; fi |
        if [ "${GDN_SAME_PARAMS:-0}" = 1 ]; then sed -E 's/c\[0x0\]\[0x[0-9a-f]+\]/c[0x0][P]/g'; else cat; fi |
        if [ -n "${GDN_SAME_SED:-}" ]; then sed -E "$GDN_SAME_SED"; else cat; fi |
        if [ "${GDN_SAME_BYFUNC:-0}" = 1 ]; then python3 -c "$BYFUNC"; else cat; fi \
          > "$WORK/$side/$u.sass"
    ) &
    pids+=($!)
    if [ ${#pids[@]} -eq 2 ]; then
      wait_all "${pids[@]}"
      pids=()
    fi
  done
  [ ${#pids[@]} -eq 0 ] || wait_all "${pids[@]}"
}
# wait_all PID...: every one, then exit 2 if any failed (none left running under the EXIT trap)
wait_all() {
  local ok=1 p
  for p in "$@"; do wait "$p" || ok=0; done
  [ $ok = 1 ] || exit 2
}
mkdir -p "$WORK/src"
git archive "$REF" kernels/gdn | tar -x -C "$WORK/src"
build ref
rm -rf "$WORK/src/kernels"
mkdir -p "$WORK/src/kernels"
cp -r "$ROOT/kernels/gdn" "$WORK/src/kernels/"
build cur
fail=0
for u in $UNITS; do
  n=$(grep -c . "$WORK/cur/$u.sass" || true)
  if [ "$n" -lt 100 ] || [ "$(grep -c . "$WORK/ref/$u.sass" || true)" -lt 100 ]; then
    echo "gdn-sass-same: $u: no SASS came out of cuobjdump" >&2
    exit 2
  fi
  if cmp -s "$WORK/ref/$u.sass" "$WORK/cur/$u.sass"; then
    echo "same      $u ($n lines)"
  else
    echo "DIFFERENT $u: $(diff "$WORK/ref/$u.sass" "$WORK/cur/$u.sass" | grep -c '^[<>]' || true) lines differ"
    diff "$WORK/ref/$u.sass" "$WORK/cur/$u.sass" | head -20 || true
    fail=1
  fi
done
exit $fail
