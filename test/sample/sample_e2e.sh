#!/usr/bin/env bash
# sample_e2e.sh CASE HYMO_RUN SOURCE_DIR WORK_DIR HYMO_COMPILER
set -uo pipefail
case_=$1 run=$2 src=$3 work=$4 compiler=${5:-OFF}
fail() { echo "FAIL ($case_): $*" >&2; exit 1; }
expect_error() {  # expect_error REGEX ARGS...: exits 1 with REGEX in stderr
  local re=$1; shift
  local err; err=$("$run" sample "$@" 2>&1 >/dev/null); local rc=$?
  [ $rc -ne 0 ] || fail "expected a failure for: sample $*"
  grep -Eq -- "$re" <<< "$err" || fail "expected /$re/ for: sample $*; got: $err"
  echo "ok: $err"
}
ckpt_setup() {
  [ "$compiler" = ON ] || [ -n "${HYMO_OPT:-}" ] || { echo "no compiler: skipped"; exit 77; }
  local dir=$work/run_$case_
  rm -rf "$dir"
  "$run" train --config "$src/models/configs/tiny.yaml" --data default --steps 3 --out "$dir" --save-interval 3 \
    > "$dir.log" 2>&1 || fail "training the tiny config failed: $(tail -5 "$dir.log")"
  ckpt=$dir/checkpoints/step_3.safetensors
  [ -f "$ckpt" ] || fail "no checkpoint $ckpt"
}
case $case_ in
  help)
    out=$("$run" sample --help) || fail "--help failed"
    for opt in --ckpt --prompt --max-new-tokens --temperature --top-k --seed --max-len; do
      grep -q -- "$opt" <<< "$out" || fail "--help lacks $opt"
    done ;;
  missing_ckpt)
    expect_error "ckpt is required" --prompt hi
    expect_error "--ckpt $work/nope.safetensors: no such file or directory" --ckpt "$work/nope.safetensors" --prompt hi ;;
  empty_prompt)
    expect_error "--prompt: the prompt is empty" --ckpt "$work/nope" --prompt "" ;;
  bad_temperature)
    expect_error "--temperature -1.0+: expected a finite number >= 0" --ckpt x --prompt hi --temperature -1
    expect_error "temperature" --ckpt x --prompt hi --temperature abc ;;
  bad_top_k)
    expect_error "--top-k must be >= 0" --ckpt x --prompt hi --top-k -2 ;;
  bad_numbers)
    expect_error "--seed '-1': expected an integer from 0 to 18446744073709551615" --ckpt x --prompt hi --seed -1
    expect_error "--seed '1e23': expected an integer" --ckpt x --prompt hi --seed 1e23
    expect_error "--seed '18446744073709551616': expected an integer" --ckpt x --prompt hi --seed 18446744073709551616
    expect_error "--max-len: Value 0 not in range \\[?1( to | - )" --ckpt x --prompt hi --max-len 0
    expect_error "--max-new-tokens: Value -1 not in range \\[?0( to | - )" --ckpt x --prompt hi --max-new-tokens -1
    expect_error "--threads: Value 0 not in range \\[?1( to | - )1024" --ckpt x --prompt hi --threads 0
    expect_error "--max-new-tokens: expected a decimal integer, got '0x10'" --ckpt x --prompt hi --max-new-tokens 0x10
    expect_error "--max-len: expected a decimal integer, got '1e3'" --ckpt x --prompt hi --max-len 1e3
    # the longest decode cache hymo-opt builds (2^24, kMaxDecodeMaxLen) is refused up front with
    # sample's option names, not hymo-opt's --hymo-decode-max-len; --max-len's range, and the
    # default (prompt + new tokens), before the checkpoint is read
    expect_error "--max-len: Value 16777217 not in range \\[?1( to | - )16777216" --ckpt x --prompt hi --max-len 16777217
    expect_error "prompt \\(2 bytes\\) \\+ --max-new-tokens 16777215 = 16777217 exceed the longest decode cache, 16777216 positions \\(the most --max-len takes\\)" \
      --ckpt x --prompt hi --max-new-tokens 16777215 ;;
  generates)
    ckpt_setup
    a=$("$run" sample --ckpt "$ckpt" --prompt "The " --max-new-tokens 40 --temperature 0.8 --top-k 10 --seed 3 2>"$work/err") \
      || fail "sample failed: $(cat "$work/err")"
    b=$("$run" sample --ckpt "$ckpt" --prompt "The " --max-new-tokens 40 --temperature 0.8 --top-k 10 --seed 3 --no-timing 2>/dev/null) \
      || fail "second sample failed"
    [ "$a" = "$b" ] || fail "same seed, different text: '$a' vs '$b'"
    c=$("$run" sample --ckpt "$ckpt" --prompt "The " --max-new-tokens 040 --temperature 0.8 --top-k 10 --seed 3 --no-timing 2>/dev/null) \
      || fail "sample with --max-new-tokens 040 failed"
    [ "$c" = "$b" ] || fail "--max-new-tokens 040 is not 40 (a leading zero read as octal?): '$c'"
    [ "${a:0:4}" = "The " ] || fail "the output does not start with the prompt: '$a'"
    [ "$(printf %s "$a" | wc -c)" -eq 44 ] || fail "expected 4 + 40 bytes, got '$a'"
    grep -Eq "decode time per token: pos 16: [0-9.]+ ms, pos 1024: [0-9.]+ ms" "$work/err" \
      || fail "no decode timing line: $(cat "$work/err")"
    g1=$("$run" sample --ckpt "$(dirname "$(dirname "$ckpt")")" --prompt "ab" --max-new-tokens 20 --temperature 0 --no-timing 2>/dev/null) \
      || fail "greedy sample from the run directory failed"
    g2=$("$run" sample --ckpt "$ckpt" --prompt "ab" --max-new-tokens 20 --temperature 0 --seed 99 --no-timing 2>/dev/null)
    [ "$g1" = "$g2" ] || fail "greedy output depends on the seed"
    expect_error "exceed --max-len 10" --ckpt "$ckpt" --prompt "hello" --max-new-tokens 6 --max-len 10
    echo "ok: $a" ;;
  decode_too_large)
    # a checkpoint whose config passes hymo-opt's size limits for training but not for a decode
    # cache of 2^24 positions (B * Tmax * kv_lora_rank past 2^40 elements): hymo-opt's refusal
    # names its --hymo-decode-max-len, and sample says which of its options set that
    ckpt_setup
    big=$work/decode_too_large.safetensors
    python3 - "$ckpt" "$big" <<'PY' || fail "could not rewrite the checkpoint's config"
import json, struct, sys
raw = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', raw[:8])[0]
head = json.loads(raw[8:8 + n])
cfg = json.loads(head['__metadata__']['config'])
cfg['model']['mla']['kv_lora_rank'] = 100000
head['__metadata__']['config'] = json.dumps(cfg)
h = json.dumps(head).encode()
h += b' ' * (-len(h) % 8)
open(sys.argv[2], 'wb').write(struct.pack('<Q', len(h)) + h + raw[8 + n:])
PY
    expect_error "--hymo-decode-max-len" --ckpt "$big" --prompt hi --max-len 16777216 --no-timing
    expect_error "sample compiles its decode cache, 16777216 positions, as --hymo-decode-max-len: --max-len, else prompt \\+ --max-new-tokens and at least 1032 for the timing unless --no-timing" \
      --ckpt "$big" --prompt hi --max-len 16777216 --no-timing ;;
  diverged)
    # a diverged checkpoint (huge learning rates, one step): finite parameters whose logits are
    # NaN. Sampling from them printed garbage bytes with exit 0; now an error naming the position,
    # and nothing but sensible text on stdout
    [ "$compiler" = ON ] || [ -n "${HYMO_OPT:-}" ] || { echo "no compiler: skipped"; exit 77; }
    dir=$work/run_$case_
    rm -rf "$dir"
    "$run" train --config "$src/models/configs/tiny.yaml" --data default --steps 1 --out "$dir" \
      --set optimizer.muon_lr=1e3 --set optimizer.adamw_lr=1e3 --set scheduler.warmup_frac=0 \
      --set scheduler.stable_frac=0.85 > "$dir.log" 2>&1 || fail "training failed: $(tail -5 "$dir.log")"
    ckpt=$dir/checkpoints/step_1.safetensors
    expect_error "checkpoint $ckpt: the logits at position 0 \\(token 104 fed\\) are non-finite \\((-?nan|-?inf) for token [0-9]+\\)" \
      --ckpt "$ckpt" --prompt hello --max-new-tokens 10 --no-timing
    out=$("$run" sample --ckpt "$ckpt" --prompt hello --max-new-tokens 10 --no-timing 2>/dev/null) &&
      fail "sample of a diverged checkpoint: exit 0"
    [ -z "$out" ] || fail "sample of a diverged checkpoint printed: $(printf %s "$out" | od -c | head -3)" ;;
  *) fail "unknown case" ;;
esac
