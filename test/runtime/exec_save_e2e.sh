#!/usr/bin/env bash
# hymo-run exec --save never writes over the plan it runs or an --input file
# (--overwrite or not), nor, unless --overwrite, over an existing file that is
# not a .npy; an existing .npy is replaced (docs/plan-format.md).
#   exec_save_e2e.sh HYMO_RUN SOURCE_DIR WORK_DIR
set -uo pipefail
case_name=exec_save run=$1 src=$2 w=$3
rm -rf "$w" && mkdir -p "$w"
cd "$w"

. "$src/test/lib/expect.sh"
cp "$src/test/runtime/plans/tiny_forward.json" plan.json
ex() { "$run" exec plan.json --function forward "$@"; }
tv="--value tokens=1,5,9,3,15,0"
gv="--value targets=5,9,3,15,0,7"
sum=$(sha256sum < plan.json)
expect_error "--save onto the plan" \
  "--save loss=\./plan\.json: is the same file as the plan plan\.json, which this command reads" \
  ex $tv $gv --save loss=./plan.json --overwrite
ln -s plan.json link.json
expect_error "--save onto the plan through a link" "--save loss=link\.json: is the same file as the plan plan\.json" \
  ex $tv $gv --save loss=link.json --overwrite
[ "$(sha256sum < plan.json)" = "$sum" ] || fail "--save replaced the plan"
ex $tv $gv --save tokens=tokens.npy > /dev/null 2>&1 || fail "--save tokens.npy failed"
sum=$(sha256sum < tokens.npy)
expect_error "--save onto an --input" "--save tokens=tokens\.npy: is the same file as --input tokens tokens\.npy" \
  ex --input tokens=tokens.npy $gv --save tokens=tokens.npy --overwrite
[ "$(sha256sum < tokens.npy)" = "$sum" ] || fail "--save replaced its --input"
printf 'a checkpoint, say\n' > ck.safetensors
sum=$(sha256sum < ck.safetensors)
expect_error "--save onto a file that is not a .npy" \
  "--save loss=ck\.safetensors: the file exists and is not a \.npy; name another file, or pass --overwrite" \
  ex $tv $gv --save loss=ck.safetensors
[ "$(sha256sum < ck.safetensors)" = "$sum" ] || fail "--save replaced a file that is not a .npy"
expect_error "two --save onto one file" "--save targets=\./t\.npy: the same file as an earlier --save \(t\.npy\)" \
  ex $tv $gv --save tokens=t.npy --save targets=./t.npy
[ ! -e t.npy ] || fail "a refused exec wrote t.npy"
# An existing .npy is replaced; --overwrite lets --save replace another file.
ex $tv $gv --save targets=tokens.npy > /dev/null 2>&1 || fail "--save over an existing .npy failed"
ex $tv $gv --save loss=ck.safetensors --overwrite > /dev/null 2>&1 || fail "--save --overwrite failed"
head -c 6 ck.safetensors | grep -q NUMPY || fail "--save --overwrite did not write the .npy"
echo "PASS ($case_name)"
