#!/usr/bin/env bash
# End-to-end tests of `hymo-run eval`, `train --eval-data` and `hymo-run
# report` on the tiny config (docs/eval.md). Needs hymo-opt: exits 77 (ctest
# skip) on a build without the compiler.
#   eval_e2e.sh CASE HYMO_RUN SOURCE_DIR WORK_DIR COMPILER(ON|OFF)
set -uo pipefail
case_name=$1 run=$2 src=$3 work=$4 compiler=$5
if [ "$compiler" != "ON" ] && [ -z "${HYMO_OPT:-}" ]; then
  echo "SKIP: the compiler (hymo-opt) is not built; end-to-end eval tests need it"
  exit 77
fi
cfg=$src/models/configs/tiny.yaml
data=$src/data/default.txt
heldout=/usr/share/common-licenses/GPL-3
[ -f "$heldout" ] || heldout=$src/README.md
w=$work/$case_name
rm -rf "$w" && mkdir -p "$w"
cd "$w"

. "$src/test/lib/expect.sh"
json_field() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p" | tail -1; }
# with_metadata SRC DST KEY VALUE: DST is checkpoint SRC with its metadata KEY set to VALUE
with_metadata() {
  python3 - "$@" <<'PY' || fail "python3 failed"
import json, struct, sys
src, dst, key, value = sys.argv[1:5]
raw = open(src, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
head["__metadata__"][key] = value
text = json.dumps(head).encode()
text += b" " * (-len(text) % 8)
open(dst, "wb").write(struct.pack("<Q", len(text)) + text + raw[8 + n:])
PY
}

case $case_name in
  eval)
    "$run" train --config "$cfg" --data "$data" --steps 6 --out run > log.txt 2>&1 || fail "train: $(cat log.txt)"
    out=$("$run" eval --ckpt run/checkpoints/step_6.safetensors --data "$heldout" --max-tokens 2000 2>err.txt) ||
      fail "eval failed: $(cat err.txt)"
    echo "$out"
    grep -q '^eval .*loss_main [0-9.]* *perplexity' <<< "$out" || fail "no text line"
    grep -q "plan run/plan.json (next to the checkpoint)" err.txt || fail "did not reuse run/plan.json: $(cat err.txt)"
    loss=$(echo "$out" | tail -1 | json_field loss_main)
    ppl=$(echo "$out" | tail -1 | json_field perplexity)
    awk -v l="$loss" -v p="$ppl" 'BEGIN { d = exp(l) - p; if (d < 0) d = -d; exit !(l > 1 && l < 6 && d < 1e-6 * p) }' ||
      fail "loss $loss / perplexity $ppl implausible"
    # 2000 tokens: 31 rows of 64 (the tail is dropped), 16 batches of 2 (one padded row).
    tail -1 <<< "$out" | grep -q '"predictions":1953,"tokens":1984,' || fail "wrong token count"
    tail -1 <<< "$out" | grep -q '"padded_rows":1' || fail "expected one padded row"
    # --json: only the JSON line; a run directory picks its latest checkpoint; the same numbers.
    j=$("$run" eval --ckpt run --data "$heldout" --max-tokens 2000 --json 2>/dev/null) || fail "eval --json failed"
    [ "$(echo "$j" | wc -l)" -eq 1 ] || fail "--json printed more than one line: $j"
    [ "$(echo "$j" | json_field loss_main)" = "$loss" ] || fail "--json loss differs"
    # Without the plan next to it: compiled from the checkpoint's config, same loss.
    mkdir -p lone && cp run/checkpoints/step_6.safetensors lone/
    j2=$("$run" eval --ckpt lone/step_6.safetensors --data "$heldout" --max-tokens 2000 2>err2.txt) ||
      fail "eval of a lone checkpoint failed: $(cat err2.txt)"
    grep -q "compiled from the checkpoint's config" err2.txt || fail "expected a recompile: $(cat err2.txt)"
    [ "$(echo "$j2" | tail -1 | json_field loss_main)" = "$loss" ] || fail "recompiled plan gives another loss"
    ;;
  train_eval)
    "$run" train --config "$cfg" --data "$data" --steps 10 --out run --eval-data "$heldout" --eval-interval 4 \
      --eval-max-tokens 1024 > log.txt 2>&1 || fail "train failed: $(cat log.txt)"
    cat log.txt
    n=$(grep -c '"eval_loss":' run/metrics.jsonl)
    [ "$n" -eq 3 ] || fail "expected eval_loss on steps 4, 8, 10, found $n lines"
    grep '"step":8,' run/metrics.jsonl | grep -q '"eval_ppl":' || fail "step 8 lacks eval_ppl"
    grep -q '^eval step 10: eval_loss' log.txt || fail "no eval progress line"
    # The logged eval loss equals hymo-run eval on the final checkpoint.
    a=$(grep '"step":10,' run/metrics.jsonl | json_field eval_loss)
    b=$("$run" eval --ckpt run --data "$heldout" --max-tokens 1024 --json | json_field loss_main)
    [ "$a" = "$b" ] || fail "train's eval_loss $a != eval's $b"
    expect_error "eval-data without interval" "--eval-data needs --eval-interval" \
      "$run" train --config "$cfg" --data "$data" --steps 1 --out x --eval-data "$heldout"
    expect_error "interval without eval-data" "need --eval-data" \
      "$run" train --config "$cfg" --data "$data" --steps 1 --out x --eval-interval 3
    ;;
  report)
    "$run" train --config "$cfg" --data "$data" --steps 30 --out run --eval-data "$heldout" --eval-interval 10 \
      --eval-max-tokens 1024 > log.txt 2>&1 || fail "train failed: $(cat log.txt)"
    "$run" report run > rep.txt 2>&1 || fail "report failed: $(cat rep.txt)"
    cat rep.txt
    for f in loss lr grad_norm tokens_per_s; do
      [ -s run/report/$f.svg ] || fail "no $f.svg"
      head -1 run/report/$f.svg | grep -q '^<svg xmlns="http://www.w3.org/2000/svg"' || fail "$f.svg is not SVG"
      tail -1 run/report/$f.svg | grep -q '^</svg>$' || fail "$f.svg is truncated"
      grep -q '<polyline' run/report/$f.svg || fail "$f.svg has no line"
    done
    grep -q 'eval loss_main' run/report/loss.svg || fail "loss.svg lacks the eval series"
    grep -q '<circle' run/report/loss.svg || fail "loss.svg lacks eval markers"
    grep -q 'lr_adamw' run/report/lr.svg || fail "lr.svg lacks lr_adamw"
    grep -q '^steps: *30 records, steps 1..30' run/report/summary.txt || fail "summary: steps"
    grep -q '^eval loss last: *[0-9.]* (step 30), perplexity' run/report/summary.txt || fail "summary: eval"
    grep -q '^skipped micro-batches: 0' run/report/summary.txt || fail "summary: skipped"
    grep -q '^tokens/s mean: *[0-9]' run/report/summary.txt || fail "summary: tokens/s"
    # No eval: still a report, with a note.
    "$run" train --config "$cfg" --data "$data" --steps 3 --out noeval > /dev/null 2>&1 || fail "train (no eval)"
    "$run" report noeval/ > /dev/null 2>&1 || fail "report without eval failed"
    grep -q '^eval: *none' noeval/report/summary.txt || fail "summary without eval lacks the note"
    ;;
  bad_inputs)
    "$run" train --config "$cfg" --data "$data" --steps 1 --out run > /dev/null 2>&1 || fail "train failed"
    ck=run/checkpoints/step_1.safetensors
    for c in eval report; do "$run" $c --help | grep -q "Usage: hymo-run $c" || fail "$c --help"; done
    "$run" eval --help | grep -q -- "--max-tokens" || fail "eval --help lacks --max-tokens"
    expect_error "eval without --ckpt" "--ckpt is required" "$run" eval --data "$heldout"
    expect_error "missing ckpt" "--ckpt nope.safetensors: no such file" "$run" eval --ckpt nope.safetensors --data "$heldout"
    mkdir -p empty
    expect_error "dir without checkpoints" "without step_N.safetensors" "$run" eval --ckpt empty --data "$heldout"
    head -c 3000 $ck > trunc.safetensors
    expect_error "truncated ckpt" "trunc.safetensors.*truncated" "$run" eval --ckpt trunc.safetensors --data "$heldout"
    printf 'not a checkpoint at all, just text padding padding' > garbage.safetensors
    expect_error "garbage ckpt" "garbage.safetensors" "$run" eval --ckpt garbage.safetensors --data "$heldout"
    # a parameter holding NaN (head.weight's first value): refused at load, named
    python3 - $ck nan.safetensors <<'PY' || fail "python3 failed"
import json, struct, sys
raw = bytearray(open(sys.argv[1], "rb").read())
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
off = 8 + n + head["head.weight"]["data_offsets"][0]
raw[off:off + 4] = struct.pack("<f", float("nan"))
open(sys.argv[2], "wb").write(raw)
PY
    expect_error "a NaN parameter" "parameter head.weight holds a non-finite value at element 0" \
      "$run" eval --ckpt nan.safetensors --data "$heldout"
    expect_error "missing data" "nope.txt" "$run" eval --ckpt $ck --data nope.txt
    expect_error "data from a device" "data file /dev/zero: is a device, expected a file" \
      timeout 60 "$run" eval --ckpt $ck --data /dev/zero
    printf 'too short' > short.txt
    expect_error "data too short" "holds 9 tokens, fewer than one row of seq_len 64" "$run" eval --ckpt $ck --data short.txt
    expect_error "--max-tokens below a row" "--max-tokens 10 is less than one row" \
      "$run" eval --ckpt $ck --data "$heldout" --max-tokens 10
    expect_error "--max-tokens negative" "--max-tokens: Value -5 not in range \\[?1( to | - )" \
      "$run" eval --ckpt $ck --data "$heldout" --max-tokens -5
    expect_error "--max-tokens not a number" "max-tokens" "$run" eval --ckpt $ck --data "$heldout" --max-tokens abc
    expect_error "--max-tokens 0" "--max-tokens: Value 0 not in range \\[?1( to | - )" \
      "$run" eval --ckpt $ck --data "$heldout" --max-tokens 0
    expect_error "train --eval-max-tokens below a row" "--eval-max-tokens 10 is less than one row" \
      "$run" train --config "$cfg" --data "$data" --eval-data "$heldout" --eval-interval 1 --eval-max-tokens 10 \
      --steps 1 --out evalrow
    expect_error "--max-tokens in hex" "--max-tokens: expected a decimal integer, got '0x100'" \
      "$run" eval --ckpt $ck --data "$heldout" --max-tokens 0x100
    # --max-tokens with a leading zero: decimal (CLI11 alone read 0100 as octal 64)
    j=$("$run" eval --ckpt $ck --data "$heldout" --max-tokens 0200 --json 2>/dev/null) || fail "--max-tokens 0200 failed"
    grep -q '"tokens":192,' <<< "$j" || fail "--max-tokens 0200 is not 200 tokens (3 rows of 64): $j"
    # --save-logits never writes over the checkpoint, nor over a file unasked
    cp $ck keep.safetensors
    expect_error "--save-logits onto the checkpoint" "is the checkpoint being evaluated" \
      "$run" eval --ckpt $ck --data "$heldout" --max-tokens 256 --save-logits $ck --overwrite
    cmp -s $ck keep.safetensors || fail "--save-logits changed the checkpoint"
    echo keep > kept.npy
    expect_error "--save-logits onto a file" "kept.npy: the file exists; name another file, or pass --overwrite" \
      "$run" eval --ckpt $ck --data "$heldout" --max-tokens 256 --save-logits kept.npy
    [ "$(cat kept.npy)" = keep ] || fail "--save-logits wrote over an existing file"
    "$run" eval --ckpt $ck --data "$heldout" --max-tokens 256 --save-logits kept.npy --overwrite --json > /dev/null 2>&1 ||
      fail "--save-logits --overwrite failed"
    head -c 6 kept.npy | grep -q NUMPY || fail "--save-logits --overwrite did not write the logits"
    # ... and, even with --overwrite, never over its --data or a file of the checkpoint's run that
    # eval does not own (another checkpoint, plan.json, metrics.jsonl), however the path is spelled
    cp -r run own && cp own/checkpoints/step_1.safetensors own/checkpoints/step_0.safetensors && cp "$heldout" held.txt
    for f in own/checkpoints/step_0.safetensors own/plan.json own/metrics.jsonl held.txt; do
      sum=$(sha256sum < $f)
      expect_error "--save-logits --overwrite onto $f" "--save-logits \./$f: is the same file as [^:]* $f, " \
        "$run" eval --ckpt own --data held.txt --max-tokens 256 --save-logits ./$f --overwrite
      [ "$(sha256sum < $f)" = "$sum" ] || fail "--save-logits --overwrite replaced $f"
    done
    # A path that is not UTF-8 (byte 0xff): the JSON line stays valid JSON with
    # U+FFFD for the byte, and a note says so (dumping it threw after the work).
    odd=$(printf 'odd\377dir') && mkdir -p "$odd" && cp $ck "$odd/"
    out=$("$run" eval --ckpt "$odd" --data "$heldout" --max-tokens 256 --json 2>err.txt) ||
      fail "eval of a non-UTF-8 path failed: $(cat err.txt)"
    python3 -c '
import json, sys
lines = sys.stdin.buffer.read().decode("utf-8").splitlines()
assert len(lines) == 1, lines
assert json.loads(lines[0])["ckpt"] == "odd\ufffddir/step_1.safetensors", lines[0]' <<< "$out" ||
      fail "eval of a non-UTF-8 path: not one JSON line with U+FFFD: $out"
    grep -q "note: the ckpt path is not valid UTF-8; the JSON line writes each invalid byte of it as U+FFFD" err.txt ||
      fail "eval of a non-UTF-8 path: no note: $(cat err.txt)"
    expect_error "--device cuda" "CUDA backend is not built yet" "$run" eval --ckpt $ck --data "$heldout" --device cuda
    expect_error "--device tpu" "expected cpu or cuda" "$run" eval --ckpt $ck --data "$heldout" --device tpu
    expect_error "report without dir" "dir is required" "$run" report
    expect_error "report on a missing dir" "nodir: no such directory" "$run" report nodir
    expect_error "report without metrics" "holds no metrics.jsonl" "$run" report empty
    mkdir -p corrupt && head -1 run/metrics.jsonl > corrupt/metrics.jsonl && echo '{"step": 2, "loss": 1.0' >> corrupt/metrics.jsonl
    expect_error "report on a corrupt line" "metrics.jsonl:2: not a JSON object" "$run" report corrupt
    mkdir -p nostep && echo '{"loss": 1.0}' > nostep/metrics.jsonl
    expect_error "report on a record without step" "metrics.jsonl:1: a record without 'step'" "$run" report nostep
    mkdir -p emptym && : > emptym/metrics.jsonl
    expect_error "report on an empty metrics.jsonl" "is empty" "$run" report emptym
    mkdir -p fracstep && echo '{"step": 1.5, "loss": 1.0}' > fracstep/metrics.jsonl
    expect_error "report on a fractional step" "metrics.jsonl:1: step 1.5 is not a step count" "$run" report fracstep
    # Steps that repeat or go back (train logs each once, in order): refused, naming both lines.
    mkdir -p backstep && printf '{"step": 1, "loss": 1.0}\n{"step": 3, "loss": 1.0}\n\n{"step": 2, "loss": 1.0}\n' \
      > backstep/metrics.jsonl
    expect_error "report on a step that goes back" \
      "backstep/metrics.jsonl:4: step 2 comes after step 3 of line 2 \(train logs steps once each, in increasing order" \
      "$run" report backstep
    [ -e backstep/report ] && fail "a refused report wrote backstep/report"
    mkdir -p negstep && echo '{"step": -1, "loss": 1.0}' > negstep/metrics.jsonl
    expect_error "report on a negative step" "metrics.jsonl:1: step -1 is not a step count" "$run" report negstep
    mkdir -p wrapstep && echo '{"step": 9223372036854775809, "loss": 1.0}' > wrapstep/metrics.jsonl
    expect_error "report on a step past int64" "metrics.jsonl:1: step 9223372036854775809 is not a step count" \
      "$run" report wrapstep
    mkdir -p dupstep && printf '{"step": 1, "loss": 1.0}\n{"step": 1, "loss": 2.0}\n' > dupstep/metrics.jsonl
    expect_error "report on a repeated step" "dupstep/metrics.jsonl:2: step 1 repeats step 1 of line 1" \
      "$run" report dupstep
    mkdir -p dirm/metrics.jsonl
    expect_error "report on a metrics directory" "dirm/metrics.jsonl is a directory" "$run" report dirm
    # A diverged value far beyond any axis: left out of the chart, no NaN coordinates.
    mkdir -p huge && sed '2s/"loss":[^,]*/"loss":1e300/' run/metrics.jsonl > huge/metrics.jsonl
    "$run" report huge > /dev/null 2>&1 || fail "report with a 1e300 loss failed"
    ! grep -qi nan huge/report/loss.svg || fail "loss.svg holds NaN coordinates"
    # A checkpoint of another format version is refused, naming the version.
    with_metadata "$ck" v9.safetensors format_version 9
    expect_error "checkpoint format version 9" "v9.safetensors: format_version '9', this hymo-run reads version 1" \
      "$run" eval --ckpt v9.safetensors --data "$heldout"
    # The metadata's precision against its config and the tensors' dtypes: an
    # fp32 checkpoint relabelled fp64 (metadata and config) used to be widened
    # without a word; now the first tensor stored otherwise is named.
    with_metadata "$ck" prec64.safetensors precision fp64
    expect_error "metadata precision unlike its config" \
      "prec64.safetensors: metadata precision = 'fp64' but its config's training.precision is 'fp32'" \
      "$run" eval --ckpt prec64.safetensors --data "$heldout"
    python3 - prec64.safetensors both64.safetensors <<'PY' || fail "python3 failed"
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
config = json.loads(head["__metadata__"]["config"])
config["training"]["precision"] = "fp64"
head["__metadata__"]["config"] = json.dumps(config)
text = json.dumps(head).encode()
text += b" " * (-len(text) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(text)) + text + raw[8 + n:])
PY
    expect_error "F32 tensors under precision fp64" \
      "both64.safetensors: tensor [a-z0-9_.]+ is stored as F32, but the metadata's precision fp64 stores this f64 buffer as F64" \
      "$run" eval --ckpt both64.safetensors --data "$heldout"
    with_metadata "$ck" prec8.safetensors precision fp8
    expect_error "metadata precision fp8" "prec8.safetensors: metadata precision = 'fp8' is not fp32, fp64 or bf16" \
      "$run" eval --ckpt prec8.safetensors --data "$heldout"
    # A true fp64 checkpoint (F64 tensors, its F32 MoE counts) evaluates, and
    # --init of an fp32 run converts it.
    "$run" train --config "$cfg" --data "$data" --steps 1 --precision fp64 --out run64 > /dev/null 2>&1 ||
      fail "fp64 train failed"
    "$run" eval --ckpt run64 --data "$heldout" --max-tokens 256 --json > /dev/null 2>err.txt ||
      fail "eval of an fp64 checkpoint failed: $(cat err.txt)"
    "$run" train --config "$cfg" --data "$data" --steps 1 --init run64/checkpoints/step_1.safetensors --out init32 \
      > /dev/null 2>err.txt || fail "--init of fp32 from fp64 failed: $(cat err.txt)"
    # A malformed step in the metadata is refused before the evaluation runs;
    # a step_N name whose N is not a step count is not taken for a checkpoint.
    with_metadata "$ck" badstep.safetensors step -3
    expect_error "checkpoint step -3" "badstep.safetensors: metadata step = '-3' is not a non-negative integer" \
      "$run" eval --ckpt badstep.safetensors --data "$heldout"
    mkdir -p oddnames && cp $ck oddnames/step_2.safetensors
    cp $ck oddnames/step_99999999999999999999.safetensors && cp $ck oddnames/step_-7.safetensors
    out=$("$run" eval --ckpt oddnames --data "$heldout" --max-tokens 2000 --json 2>&1) || fail "eval of oddnames: $out"
    grep -q '"ckpt":"oddnames/step_2.safetensors"' <<< "$out" || fail "oddnames: not step_2: $out"
    # Directories and binary bytes where files are expected.
    expect_error "inspect a directory" "plan file 'emptym' is a directory" "$run" inspect emptym
    head -c 2000 /dev/urandom | tr '{' 'x' > binary.json
    out=$("$run" inspect binary.json 2>&1) && fail "inspect of random bytes succeeded"
    LC_ALL=C grep -q '[^[:print:][:space:]]' <<< "$out" && fail "raw bytes in the message: $out"
    grep -q "binary.json: plan: not valid JSON" <<< "$out" || fail "random bytes: $out"
    printf '1e999' > huge.json
    expect_error "a number beyond double" "huge.json: plan: not valid JSON: .*out_of_range" "$run" inspect huge.json
    ;;
  report_values)
    # Values at the edges of double (no training needed): every chart keeps a
    # sane axis with a bounded number of ticks and no NaN/inf coordinates.
    # report_ok DIR: the report succeeds (fast: a tick loop that does not
    # advance used to allocate until std::bad_alloc), writing clean SVGs.
    report_ok() {
      local out
      out=$(ulimit -v 4000000; timeout 60 "$run" report "$1" 2>&1) || fail "report $1 failed: $out"
      for f in loss lr grad_norm tokens_per_s; do
        tail -1 "$1/report/$f.svg" | grep -q '^</svg>$' || fail "$1: $f.svg is truncated"
        ! grep -qiE 'nan|inf' "$1/report/$f.svg" || fail "$1: $f.svg holds NaN or inf: $(grep -iE -m1 'nan|inf' "$1/report/$f.svg")"
        local n
        n=$(grep -c 'text-anchor="end">' "$1/report/$f.svg")
        [ "$n" -le 41 ] || fail "$1: $f.svg has $n y ticks"
      done
      ! grep -qi nan "$1/report/summary.txt" || fail "$1: summary.txt prints nan: $(cat "$1/report/summary.txt")"
      echo "ok: report $1"
    }
    # A series spanning one ULP (a constant loss whose moving mean is 1 ULP off), in each plotted field.
    for f in loss loss_main grad_norm tokens_per_s eval_loss; do
      mkdir -p ulp_$f && printf '{"step":1,"%s":1}\n{"step":2,"%s":1.0000000000000002}\n' $f $f > ulp_$f/metrics.jsonl
      report_ok ulp_$f
    done
    grep -q '<polyline' ulp_loss/report/loss.svg || fail "ulp_loss: loss.svg has no line"
    # Denormals, huge and tiny magnitudes, constants, a span of one step near 10^12.
    for v in 4.9e-324 2.2250738585072014e-308 1e-200 9e99 -9e99 0 1e12; do
      mkdir -p "mag$v" && printf '{"step":1,"loss":%s,"grad_norm":%s,"lr_muon":%s,"tokens_per_s":%s}\n{"step":2,"loss":%s}\n' \
        $v $v $v $v $v > "mag$v/metrics.jsonl"
      report_ok "mag$v"
    done
    grep -q 'points="78.0,[0-9.]* 736.0,[0-9.]* "' mag4.9e-324/report/loss.svg || fail "denormal loss: no line drawn"
    mkdir -p bigstep && printf '{"step":999999999999,"loss":1}\n{"step":1000000000000,"loss":2}\n' > bigstep/metrics.jsonl
    report_ok bigstep
    mkdir -p span && printf '{"step":1,"loss":1e-300,"lr_adamw":1e-300}\n{"step":2,"loss":9e99,"lr_adamw":1e300}\n' \
      > span/metrics.jsonl
    report_ok span
    n=$(grep -c 'text-anchor="end">1e' span/report/lr.svg)
    [ "$n" -le 13 ] || fail "lr.svg over 600 decades: $n tick labels"
    # Every step skipped: no values to average, said so (not "nan").
    mkdir -p allskip && printf '{"step":1,"loss":null,"tokens_per_s":null,"skipped":2,"is_update":false}\n{"step":2,"loss":null,"skipped":2,"is_update":false}\n' \
      > allskip/metrics.jsonl
    report_ok allskip
    grep -q '^loss last 10 mean: - (no values)$' allskip/report/summary.txt || fail "summary: loss mean: $(cat allskip/report/summary.txt)"
    grep -q '^tokens/s mean: *- (no values)$' allskip/report/summary.txt || fail "summary: tokens/s mean"
    grep -q '^loss last: *- (no values)$' allskip/report/summary.txt || fail "summary: loss last"
    grep -q '^skipped micro-batches: 4 (steps without an update: 2)' allskip/report/summary.txt || fail "summary: skipped"
    # Fields of the wrong type: refused, naming the file, line and field.
    mkdir -p badupdate && printf '{"step":1,"loss":1}\n{"step":2,"loss":1,"is_update":"x"}\n' > badupdate/metrics.jsonl
    expect_error "report on is_update \"x\"" "badupdate/metrics.jsonl:2: field 'is_update' is not a boolean: \"x\"" \
      "$run" report badupdate
    for v in -5 1.5; do
      mkdir -p "badskip$v" && printf '{"step":1,"loss":1,"skipped":%s}\n' $v > "badskip$v/metrics.jsonl"
      expect_error "report on skipped $v" "badskip$v/metrics.jsonl:1: field 'skipped' is not a count of micro-batches" \
        "$run" report "badskip$v"
      [ -e "badskip$v/report" ] && fail "a refused report wrote badskip$v/report"
    done
    ;;
  diverged)
    # A diverged checkpoint: finite parameters whose logits overflow (huge learning rates, one
    # step). Its loss is no result: an error naming the non-finite loss and the checkpoint, exit
    # non-zero, no result line and no --save-logits file (before: loss_main -nan, null, exit 0).
    "$run" train --config "$cfg" --data "$data" --steps 1 --out run --set optimizer.muon_lr=1e3 \
      --set optimizer.adamw_lr=1e3 --set scheduler.warmup_frac=0 --set scheduler.stable_frac=0.85 \
      > log.txt 2>&1 || fail "train: $(cat log.txt)"
    ck=run/checkpoints/step_1.safetensors
    expect_error "eval of a diverged checkpoint" \
      "checkpoint $ck: the loss on $data is non-finite \((-?nan|-?inf)\), first at row 0 position 0, where the logits hold NaN or infinity" \
      "$run" eval --ckpt $ck --data "$data" --max-tokens 256 --save-logits logits.npy
    out=$("$run" eval --ckpt $ck --data "$data" --max-tokens 256 --json 2> /dev/null) && fail "eval --json: exit 0"
    [ -z "$out" ] || fail "eval of a diverged checkpoint printed a result: $out"
    [ ! -e logits.npy ] || fail "eval of a diverged checkpoint wrote --save-logits"
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "PASS ($case_name)"
