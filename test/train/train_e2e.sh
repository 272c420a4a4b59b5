#!/usr/bin/env bash
# End-to-end tests of `hymo-run train` / `hymo-run compile` on the tiny
# config (docs/training.md). Needs hymo-opt: exits 77 (ctest skip) on a build
# without the compiler.
#   train_e2e.sh CASE HYMO_RUN SOURCE_DIR WORK_DIR COMPILER(ON|OFF)
set -uo pipefail
case_name=$1 run=$2 src=$3 work=$4 compiler=$5
if [ "$compiler" != "ON" ] && [ -z "${HYMO_OPT:-}" ]; then
  echo "SKIP: the compiler (hymo-opt) is not built; end-to-end training tests need it"
  exit 77
fi
cfg=$src/models/configs/tiny.yaml
data=$src/data/default.txt
w=$work/$case_name
rm -rf "$w" && mkdir -p "$w"
cd "$w"

. "$src/test/lib/expect.sh"
train() { "$run" train --config "$cfg" --data "$data" "$@"; }

case $case_name in
  trains)
    # Loss falls clearly within 40 steps; metrics.jsonl has every field.
    train --steps 40 --out run --save-interval 20 > log.txt 2>&1 || fail "train failed: $(cat log.txt)"
    cat log.txt
    [ "$(wc -l < run/metrics.jsonl)" -eq 40 ] || fail "expected 40 metrics lines"
    for k in step loss loss_main grad_norm lr_muon lr_adamw is_update skipped tokens_per_s; do
      head -1 run/metrics.jsonl | grep -q "\"$k\":" || fail "metrics.jsonl lacks $k"
    done
    [ -f run/checkpoints/step_20.safetensors ] && [ -f run/checkpoints/step_40.safetensors ] ||
      fail "checkpoints step_20 and step_40 expected: $(ls run/checkpoints)"
    awk -F'"loss":' '{ split($2, a, ","); v[NR] = a[1] + 0 }
      END { for (i = 1; i <= 10; i++) { f += v[i]; l += v[NR + 1 - i] }
            printf "first 10 steps %.4f, last 10 steps %.4f\n", f / 10, l / 10
            exit !(l / 10 < f / 10 - 1.0) }' run/metrics.jsonl || fail "loss did not fall by 1.0"
    grep -q '^step 40/40 loss' log.txt || fail "no plain progress line for the last step"
    # Steps past scheduler.total_steps run on at the final learning rate, with a note saying so.
    train --set scheduler.total_steps=2 --steps 3 --out past > log.txt 2>&1 || fail "train past total_steps failed"
    grep -q "note: steps 3..3 run past scheduler.total_steps = 2" log.txt || fail "no note of the steps past: $(cat log.txt)"
    ;;
  resume)
    # 6 steps straight == 3 + resume + 3, bit for bit (FP32 CPU).
    train --steps 6 --out straight --save-interval 3 > /dev/null 2>&1 || fail "straight run failed"
    train --steps 3 --out split > /dev/null 2>&1 || fail "first half failed"
    "$run" train --data "$data" --steps 3 --out split --resume split > log.txt 2>&1 ||
      fail "resume failed: $(cat log.txt)"
    grep -q "resumed from split/checkpoints/step_3.safetensors (step 3, micro-step 3)" log.txt ||
      fail "no resume line: $(cat log.txt)"
    cmp straight/checkpoints/step_6.safetensors split/checkpoints/step_6.safetensors ||
      fail "resumed checkpoint differs from the straight run's"
    cmp straight/checkpoints/step_3.safetensors split/checkpoints/step_3.safetensors ||
      fail "step 3 checkpoints differ"
    [ "$(wc -l < split/metrics.jsonl)" -eq 6 ] || fail "split metrics.jsonl should hold 6 steps"
    strip() { sed -E 's/,"tokens_per_s":[^,}]*//; s/,"step_s":[^,}]*//' "$1"; }
    diff <(strip straight/metrics.jsonl) <(strip split/metrics.jsonl) || fail "metrics differ"
    # With --config too (same config): also fine, and a second resume of a
    # finished run with --steps 0 changes nothing.
    "$run" train --config "$cfg" --data "$data" --steps 0 --out split --resume split > /dev/null 2>&1 ||
      fail "resume with --config failed"
    cmp straight/checkpoints/step_6.safetensors split/checkpoints/step_6.safetensors || fail "steps 0 changed it"
    # With gradient accumulation (G = 2): 4 straight == 2 + resume + 2.
    g2="--set training.gradient_accumulation_steps=2"
    train $g2 --steps 4 --out g2straight > /dev/null 2>&1 || fail "G=2 straight run failed"
    train $g2 --steps 2 --out g2split > /dev/null 2>&1 || fail "G=2 first half failed"
    train $g2 --steps 2 --out g2split --resume g2split > log.txt 2>&1 || fail "G=2 resume failed: $(cat log.txt)"
    grep -q "(step 2, micro-step 4)" log.txt || fail "G=2: the data position is micro-step 4: $(cat log.txt)"
    cmp g2straight/checkpoints/step_4.safetensors g2split/checkpoints/step_4.safetensors ||
      fail "G=2 resumed checkpoint differs"
    # metrics.jsonl on a resume: a corrupt line is an error and the file stays as it was; a torn
    # last line (no newline: a crash mid-write) is dropped with a note
    # refused_resume DIR SED WHAT PATTERN: a copy of split/ whose metrics.jsonl SED edits; a
    # resume there fails naming PATTERN, leaves metrics.jsonl as it was and writes no --save-init
    refused_resume() {
      cp -r split "$1" && sed -i "$2" "$1/metrics.jsonl" && cp "$1/metrics.jsonl" "$1.before"
      expect_error "$3" "$4" \
        "$run" train --data "$data" --steps 1 --out "$1" --resume "$1" --save-init "$1/init.safetensors"
      cmp -s "$1/metrics.jsonl" "$1.before" || fail "$3: the refused resume rewrote $1/metrics.jsonl"
      if [ -e "$1/init.safetensors" ]; then fail "$3: the refused resume wrote --save-init"; fi
    }
    refused_resume bad '2s/.*/garbage{{{/' "resume over a corrupt metrics line" \
      "bad/metrics.jsonl:2: not a metrics record"
    # a step that repeats or goes back (report refuses such a file; train logs each step once, in
    # order): refused as report does, naming both lines, before anything is written
    refused_resume back '2{h;d};3G' "resume over a step that goes back" \
      "back/metrics.jsonl:3: step 2 comes after step 3 of line 2 \(train logs steps once each, in increasing order.*; fix or remove the line, then resume again"
    refused_resume dup '5p' "resume over a repeated step" "dup/metrics.jsonl:6: step 5 repeats step 5 of line 5"
    # a step that is no step count (report's check, shared): a negative one, and one past int64
    # (read as int64 it wrapped to a negative) were kept; refused before anything is written
    refused_resume neg '1s/"step":1,/"step":-1,/' "resume over a negative step" \
      "neg/metrics.jsonl:1: step -1 is not a step count \(an integer from 0 to 10\^12\); fix or remove the line"
    refused_resume wrap '1s/"step":1,/"step":9223372036854775809,/' "resume over a step past int64" \
      "wrap/metrics.jsonl:1: step 9223372036854775809 is not a step count \(an integer from 0 to 10\^12\)"
    # the step three ways (file name, metadata, the train.step counter) must agree
    cp -r straight renamed && mv renamed/checkpoints/step_3.safetensors renamed/checkpoints/step_9.safetensors
    expect_error "resume from a renamed checkpoint" "step_9.safetensors: named step 9 but its metadata says step 3" \
      "$run" train --data "$data" --steps 1 --out renamed --resume renamed
    cp -r split torn && head -c -20 split/metrics.jsonl > torn/metrics.jsonl
    "$run" train --data "$data" --steps 0 --out torn --resume torn > log.txt 2>&1 || fail "resume over a torn line: $(cat log.txt)"
    grep -q "torn/metrics.jsonl:6: dropped a torn last line" log.txt || fail "no note of the torn line: $(cat log.txt)"
    [ "$(wc -l < torn/metrics.jsonl)" -eq 5 ] || fail "torn: expected the 5 whole records kept"
    echo "ok: resume is bit-exact"
    ;;
  init)
    # --save-init then --init gives the same run; --steps 0 writes no checkpoint.
    train --steps 0 --out a --save-init a/init.safetensors > /dev/null 2>&1 || fail "save-init failed"
    [ -f a/init.safetensors ] || fail "no init file"
    [ -z "$(ls a/checkpoints)" ] || fail "--steps 0 wrote a checkpoint"
    train --steps 2 --out b > /dev/null 2>&1 || fail "b failed"
    train --steps 2 --out c --init a/init.safetensors > /dev/null 2>&1 || fail "c failed"
    cmp b/checkpoints/step_2.safetensors c/checkpoints/step_2.safetensors || fail "--init run differs"
    # An init of another config: the error names the tensor.
    train --steps 0 --out d --set model.dim=32 --set model.ffn_hidden=64 --save-init d/init.safetensors \
      > /dev/null 2>&1 || fail "save-init dim 32 failed"
    expect_error "init of another config" "tensor embed.weight has shape \[256, 32\], the plan needs \[256, 64\]" \
      train --steps 1 --out e --init d/init.safetensors
    expect_error "init and resume" "--init and --resume exclude each other" \
      train --steps 1 --out e --init a/init.safetensors --resume b
    expect_error "resume from an init file" "holds no training state" \
      bash -c "mkdir -p f/checkpoints && cp a/init.safetensors f/checkpoints/step_0.safetensors &&
               '$run' train --data '$data' --out f --resume f"
    ;;
  compile)
    # compile + train --plan == train --config.
    "$run" compile --config "$cfg" -o plan.json || fail "compile failed"
    "$run" train --plan plan.json --data "$data" --steps 2 --out p > /dev/null 2>&1 || fail "train --plan failed"
    train --steps 2 --out q > /dev/null 2>&1 || fail "train --config failed"
    cmp p/checkpoints/step_2.safetensors q/checkpoints/step_2.safetensors || fail "--plan run differs"
    # --plan with --set recompiles (the compiler is built here).
    "$run" train --plan plan.json --set training.seed=3 --data "$data" --steps 1 --out r > log.txt 2>&1 ||
      fail "--plan --set failed: $(cat log.txt)"
    grep -q '"seed": *3' r/plan.json || fail "the recompiled plan lacks seed 3"
    expect_error "compile fp16" "fp16 is not supported" "$run" compile --config "$cfg" --precision fp16 -o x.json
    # A config too large to run (10^8 x 64 rows pass the int sizes CBLAS takes;
    # docs/configs.md, size limits), a missing directory, a non-file output:
    # clear errors, and the plan already there stays as it was.
    sum=$(md5sum < plan.json)
    expect_error "compile of an unrunnable config" \
      "training.micro_batch_size \* training.seq_len: expected a product of at most 2\^31 - 1 = 2147483647 \(the rows of every linear layer.*got 100000000 \* 64 = 6400000000" \
      "$run" compile --config "$cfg" --set training.micro_batch_size=100000000 -o plan.json
    [ "$(md5sum < plan.json)" = "$sum" ] || fail "a failed compile replaced plan.json"
    ls plan.json.tmp.* > /dev/null 2>&1 && fail "a failed compile left a temporary file"
    out=$("$run" compile --config "$cfg" -o nodir/p.json 2>&1) && fail "compile into a missing directory succeeded"
    grep -q "plan output nodir/p.json: cannot write in nodir/: No such file or directory" <<< "$out" ||
      fail "missing directory: $out"
    [ "${#out}" -lt 500 ] || fail "missing directory: a ${#out}-byte message"
    mkdir -p adir
    expect_error "compile onto a directory" "plan output adir: exists and is not a regular file \(a directory\)" \
      "$run" compile --config "$cfg" -o adir
    # -o never replaces the --config it reads (even with --overwrite, through
    # another spelling), nor unasked an existing file that is not a plan; an
    # existing plan is replaced.
    cp "$cfg" cfg.yaml && sum=$(sha256sum < cfg.yaml)
    expect_error "compile onto its --config" "-o \./cfg\.yaml: is the same file as --config cfg\.yaml, which this command reads" \
      "$run" compile --config cfg.yaml -o ./cfg.yaml --overwrite
    [ "$(sha256sum < cfg.yaml)" = "$sum" ] || fail "compile replaced its --config"
    cp "$cfg" other.yaml
    expect_error "compile onto a file that is not a plan" \
      "-o other\.yaml: the file exists and is not a hymo plan; name another file, or pass --overwrite" \
      "$run" compile --config "$cfg" -o other.yaml
    [ "$(sha256sum < other.yaml)" = "$sum" ] || fail "compile replaced a file that is not a plan"
    "$run" compile --config "$cfg" -o other.yaml --overwrite > /dev/null 2>&1 || fail "compile --overwrite failed"
    "$run" inspect other.yaml > /dev/null 2>&1 || fail "compile --overwrite wrote no plan"
    "$run" compile --config "$cfg" -o plan.json > /dev/null 2>&1 || fail "compile over an existing plan failed"
    # A refused resume (another config) leaves the run's plan.json, and no
    # temporary file, behind.
    sum=$(md5sum < q/plan.json)
    expect_error "resume with another config" "model.dim: 64 in the checkpoint, 32 now" \
      train --set model.dim=32 --steps 1 --out q --resume q
    [ "$(md5sum < q/plan.json)" = "$sum" ] || fail "a refused resume replaced q/plan.json"
    [ -z "$(ls -A q | grep -v -x -e plan.json -e metrics.jsonl -e checkpoints)" ] || fail "left in q: $(ls -A q)"
    "$run" train --data "$data" --steps 1 --out q --resume q > /dev/null 2>&1 || fail "resume without a config failed"
    [ -z "$(ls -A q | grep -v -x -e plan.json -e metrics.jsonl -e checkpoints)" ] || fail "left in q: $(ls -A q)"
    # A compiler-less hymo-run: $HYMO_OPT cannot help a build without one,
    # so simulate by pointing it at something that is not executable.
    expect_error "bad HYMO_OPT" "HYMO_OPT is '/nonexistent/hymo-opt', which is not an executable file" \
      env HYMO_OPT=/nonexistent/hymo-opt "$run" compile --config "$cfg" -o y.json
    # A failing hymo-opt that prints 3 MB: the error shows its head and tail
    # and counts what it left out (3000052 bytes printed, 5000 shown).
    printf '#!/bin/sh\necho "first line of the failure" >&2\nhead -c 3000000 /dev/zero | tr "\\000" x >&2\necho >&2\necho "last line of the failure" >&2\nexit 1\n' > noisy-opt
    chmod +x noisy-opt
    out=$(env HYMO_OPT="$PWD/noisy-opt" "$run" compile --config "$cfg" -o z.json 2>&1) && fail "a failing hymo-opt: exit 0"
    for pat in "first line of the failure" "last line of the failure" "\.\.\. \(2995052 bytes of hymo-opt's output left out\) \.\.\."; do
      grep -q -E -- "$pat" <<< "$out" || fail "a failing hymo-opt: expected /$pat/ in: ${out:0:300}"
    done
    [ "${#out}" -lt 5500 ] || fail "a failing hymo-opt: a ${#out}-byte message"
    [ ! -e z.json ] || fail "a failing hymo-opt left z.json"
    ;;
  nan)
    # Huge LRs make the loss non-finite after the first update: those
    # micro-batches are skipped (loss null), and 5 in a row stop the run.
    expect_error "consecutive NaN limit" \
      "5 consecutive micro-batches with a non-finite loss \(training.consecutive_nan_limit = 5\).*the last checkpoint is run/checkpoints/step_5.safetensors" \
      train --steps 20 --out run --save-interval 1 --set optimizer.adamw_lr=1e9 --set optimizer.muon_lr=1e9 \
      --set scheduler.warmup_frac=0 --set scheduler.stable_frac=0.85
    [ "$(wc -l < run/metrics.jsonl)" -eq 5 ] || fail "expected 5 metrics lines"
    sed -n 2p run/metrics.jsonl | grep -q '"loss":null' || fail "a skipped step logs loss null"
    sed -n 2p run/metrics.jsonl | grep -q '"skipped":1' || fail "a skipped step logs skipped 1"
    sed -n 2p run/metrics.jsonl | grep -q '"is_update":false' || fail "a skipped step is not an update"
    [ ! -f run/checkpoints/step_6.safetensors ] || fail "no checkpoint after the abort"
    ;;
  overwrite)
    # A fresh run into a directory that holds a run is refused before
    # anything there changes; --overwrite starts over; --resume continues.
    train --steps 3 --out run --save-interval 1 > /dev/null 2>&1 || fail "first run failed"
    sum_before=$(cat run/metrics.jsonl run/plan.json run/checkpoints/* | md5sum)
    expect_error "fresh run into a run" \
      "--out run already holds a run: run/metrics.jsonl \(3 records\) and 3 checkpoints \(newest run/checkpoints/step_3.safetensors\)\. Continue it with --resume run.*--overwrite" \
      train --steps 2 --out run
    train --steps 1 --out other > /dev/null 2>&1 || fail "other run failed"
    expect_error "resumed from another run into a run" "--out run already holds a run" \
      train --steps 1 --out run --resume other
    [ "$(cat run/metrics.jsonl run/plan.json run/checkpoints/* | md5sum)" = "$sum_before" ] ||
      fail "a refused run changed run/"
    # The same directory written another way is still a continuation.
    train --steps 1 --out ./run/ --resume run > /dev/null 2>&1 || fail "resume via ./run/ failed"
    [ "$(wc -l < run/metrics.jsonl)" -eq 4 ] || fail "resume should append a fourth record"
    train --steps 2 --out run --overwrite > log.txt 2>&1 || fail "--overwrite failed: $(cat log.txt)"
    grep -q -- "--overwrite: deleted the earlier run in run: run/metrics.jsonl (4 records) and 4 checkpoints" log.txt ||
      fail "--overwrite should say what it deleted: $(cat log.txt)"
    [ "$(ls run/checkpoints)" = "step_2.safetensors" ] || fail "--overwrite left: $(ls run/checkpoints)"
    [ "$(wc -l < run/metrics.jsonl)" -eq 2 ] || fail "--overwrite should leave 2 records"
    head -1 run/metrics.jsonl | grep -q '"step":1,' || fail "--overwrite: records should restart at step 1"
    # --overwrite never deletes the checkpoint the run starts from.
    expect_error "--overwrite of its own --init" \
      "--overwrite would delete run/checkpoints/step_2.safetensors, which this run starts from \(--init\)" \
      train --steps 1 --out run --overwrite --init run/checkpoints/step_2.safetensors
    [ -f run/checkpoints/step_2.safetensors ] || fail "the refused --overwrite deleted its --init"
    # --save-init never replaces a file unless asked.
    sum=$(md5sum < run/checkpoints/step_2.safetensors)
    expect_error "--save-init onto a checkpoint" \
      "--save-init run/checkpoints/step_2.safetensors: the file exists; name another file, or pass --overwrite" \
      train --steps 0 --out other2 --save-init run/checkpoints/step_2.safetensors
    [ "$(md5sum < run/checkpoints/step_2.safetensors)" = "$sum" ] || fail "--save-init replaced a checkpoint"
    # --overwrite keeps the --save-init file it writes, even among the checkpoints.
    train --steps 1 --out run --overwrite --save-init run/checkpoints/step_0.safetensors > /dev/null 2>&1 ||
      fail "--overwrite with --save-init failed"
    [ "$(ls run/checkpoints | tr '\n' ' ')" = "step_0.safetensors step_1.safetensors " ] ||
      fail "--overwrite with --save-init left: $(ls run/checkpoints)"
    # No output is one of the run's inputs, --overwrite or not, however the path is spelled
    # (compared by filesystem identity): refused before anything is written.
    train --steps 3 --out self --save-interval 3 > /dev/null 2>&1 || fail "self run failed"
    sum=$(sha256sum < self/checkpoints/step_3.safetensors)
    expect_error "--save-init onto its --resume checkpoint" \
      "--save-init self/checkpoints/\.\./checkpoints/step_3\.safetensors: is the same file as --resume's checkpoint self/checkpoints/step_3\.safetensors, which this command reads" \
      "$run" train --resume self --out self --save-init self/checkpoints/../checkpoints/step_3.safetensors \
      --overwrite --data "$data" --steps 0
    [ "$(sha256sum < self/checkpoints/step_3.safetensors)" = "$sum" ] || fail "--save-init replaced its --resume checkpoint"
    cp self/checkpoints/step_3.safetensors A.safetensors && ln -s A.safetensors linkA.safetensors
    expect_error "--save-init onto its --init (through a link)" \
      "--save-init linkA\.safetensors: is the same file as --init A\.safetensors, which this command reads" \
      train --steps 0 --out selfinit --init A.safetensors --save-init linkA.safetensors --overwrite
    [ "$(sha256sum < A.safetensors)" = "$sum" ] || fail "--save-init replaced its --init"
    "$run" compile --config "$cfg" -o P.json > /dev/null 2>&1 || fail "compile failed"
    sum=$(sha256sum < P.json)
    expect_error "--save-init onto its --plan" "--save-init \./P\.json: is the same file as --plan P\.json" \
      "$run" train --plan P.json --data "$data" --steps 0 --out selfplan --save-init ./P.json --overwrite
    [ "$(sha256sum < P.json)" = "$sum" ] || fail "--save-init replaced its --plan"
    sum=$(sha256sum < self/metrics.jsonl)
    expect_error "--data is the metrics.jsonl the run rewrites" \
      "--out self/metrics\.jsonl: is the same file as --data self/metrics\.jsonl" \
      "$run" train --data self/metrics.jsonl --steps 0 --out self --resume self
    [ "$(sha256sum < self/metrics.jsonl)" = "$sum" ] || fail "a refused run rewrote its --data"
    # A run that stopped before its first checkpoint cannot be resumed: the
    # refusal does not suggest it.
    mkdir -p nockpt && head -2 run/metrics.jsonl > nockpt/metrics.jsonl
    out=$(train --steps 1 --out nockpt 2>&1) && fail "a run into nockpt was not refused"
    grep -q "already holds a run: nockpt/metrics.jsonl (1 record)\. Choose another --out" <<< "$out" ||
      fail "nockpt: $out"
    # A directory with only an empty metrics file (a --steps 0 run) holds no run.
    train --steps 0 --out zero > /dev/null 2>&1 || fail "--steps 0 failed"
    train --steps 1 --out zero > /dev/null 2>&1 || fail "a run after --steps 0 was refused"
    # One run at a time in an --out: its directory is locked (flock) for the run. Another holder
    # of the lock (flock(1) here, as a running train would) makes a second run stop, unwritten.
    if command -v flock > /dev/null; then
      mkdir -p busy
      flock -o busy sleep 10 > /dev/null 2>&1 & holder=$!
      for _ in $(seq 100); do flock -n busy true || break; sleep 0.05; done
      expect_error "a second run in a busy --out" "--out busy: another hymo-run train is running in it" \
        train --steps 1 --out busy
      kill $holder 2> /dev/null; wait $holder 2> /dev/null
      [ -z "$(ls -A busy)" ] || fail "the refused run wrote into busy: $(ls -A busy)"
    fi
    ;;
  bad_inputs)
    expect_error "missing data" "data file $w/nope.txt: No such file or directory" \
      "$run" train --config "$cfg" --data "$w/nope.txt" --steps 1 --out o
    : > empty.txt
    expect_error "empty data" "data file empty.txt: is empty" "$run" train --config "$cfg" --data empty.txt --steps 1 --out o
    printf 'short' > short.txt
    expect_error "short data" "holds 5 tokens, fewer than one row of seq_len 64" \
      "$run" train --config "$cfg" --data short.txt --steps 1 --out o
    # A shard holding token 300 for a 256-token vocabulary.
    python3 - <<'EOF' || fail "python3 failed"
import struct
toks = [1] * 200 + [300] + [2] * 100
open("big.shard", "wb").write(struct.pack("<256i", 20240520, 1, len(toks), *([0] * 253)) + struct.pack("<%dH" % len(toks), *toks))
open("cut.shard", "wb").write(open("big.shard", "rb").read()[:-3])
EOF
    expect_error "token >= vocab" "token id 300 at position 200 is >= the model's vocab_size 256" \
      "$run" train --config "$cfg" --data big.shard --steps 1 --out o
    expect_error "truncated shard" "token shard header says 301 tokens .*truncated or corrupt" \
      "$run" train --config "$cfg" --data cut.shard --steps 1 --out o
    expect_error "fp16" "fp16 is not supported" train --precision fp16 --steps 1 --out o
    expect_error "cuda" "the CUDA backend is not built yet; use --device cpu" train --device cuda --steps 1 --out o
    expect_error "bad --set" "--set 'dim=3': expected section.key=value" train --set dim=3 --steps 1 --out o
    expect_error "unknown key" "model.dimm: unknown key" train --set model.dimm=3 --steps 1 --out o
    expect_error "no config" "train needs --config" "$run" train --data "$data" --out o
    # (CLI11 versions word ranges as "1 to 1024" or "[1 - 1024]")
    expect_error "--threads 0" "--threads: Value 0 not in range \\[?1( to | - )1024" train --threads 0 --steps 1 --out o
    expect_error "--threads too many" "--threads: Value 5000 not in range \\[?1( to | - )1024" train --threads 5000 --steps 1 --out o
    expect_error "HYMO_NUM_THREADS" "HYMO_NUM_THREADS='abc': expected an integer from 1 to 1024" \
      env HYMO_NUM_THREADS=abc "$run" train --config "$cfg" --data "$data" --steps 1 --out o
    v=$(HYMO_NUM_THREADS=abc "$run" --version 2>&1) || fail "--version with a bad HYMO_NUM_THREADS failed: $v"
    grep -q "cpu threads: HYMO_NUM_THREADS is not a thread count" <<< "$v" || fail "--version: $v"
    HYMO_NUM_THREADS= "$run" --version > /dev/null 2>&1 || fail "an empty HYMO_NUM_THREADS is not 'unset'"
    # Checkpoints: truncated, of another config, not a checkpoint at all.
    train --steps 2 --out good > /dev/null 2>&1 || fail "good run failed"
    mkdir -p trunc/checkpoints
    head -c 5000 good/checkpoints/step_2.safetensors > trunc/checkpoints/step_2.safetensors
    expect_error "truncated checkpoint" "checkpoint trunc/checkpoints/step_2.safetensors: truncated" \
      train --steps 1 --out trunc --resume trunc
    expect_error "checkpoint of another config" "model.dim: 64 in the checkpoint, 32 now" \
      train --set model.dim=32 --steps 1 --out good2 --resume good
    expect_error "another config (first line)" "checkpoint good/checkpoints/step_2.safetensors was trained with another config:" \
      train --set model.dim=32 --steps 1 --out good2 --resume good
    # hymo-opt's errors on a resumed run's config name the checkpoint, not a temporary file.
    expect_error "resume --set of an unknown key" \
      "the config of checkpoint good/checkpoints/step_2.safetensors: model.dimm: unknown key" \
      "$run" train --data "$data" --steps 1 --out good --resume good --set model.dimm=3
    mkdir -p junk/checkpoints && echo "hello, not a checkpoint" > junk/checkpoints/step_1.safetensors
    expect_error "junk checkpoint" "checkpoint junk/checkpoints/step_1.safetensors: header length .* implausible" \
      train --steps 1 --out junk --resume junk
    expect_error "resume from nowhere" "--resume nowhere2: no such directory" train --steps 1 --out o --resume nowhere2
    mkdir -p empty_run
    expect_error "no checkpoints" "--resume empty_run: no checkpoints directory" train --steps 1 --out o --resume empty_run
    # A corrupt plan: the loader's error names the field.
    "$run" compile --config "$cfg" -o plan.json > /dev/null 2>&1 || fail "compile failed"
    sed 's/"arena_bytes": *[0-9]*/"arena_bytes": -5/' plan.json > badplan.json
    expect_error "corrupt plan" "plan: arena_bytes" "$run" train --plan badplan.json --data "$data" --steps 1 --out o
    echo '{"format": "hymo-plan", "version": 1' > cutplan.json
    expect_error "truncated plan" "cutplan.json" "$run" train --plan cutplan.json --data "$data" --steps 1 --out o
    # A plan whose config disagrees with its graph (edited by hand) would write
    # checkpoints that eval, sample and --resume cannot load: refused.
    sed 's/"dim": *64,/"dim": 32,/' plan.json > dimplan.json
    cmp -s plan.json dimplan.json && fail "the sed did not change model.dim"
    expect_error "plan config vs graph" \
      "plan dimplan.json: its config says model.dim = 32, but its buffer embed.weight is \[256, 64\]: the plan's config and graph disagree" \
      "$run" train --plan dimplan.json --data "$data" --steps 1 --out o
    expect_error "plan and config" "--plan and --config exclude each other" \
      "$run" train --plan plan.json --config "$cfg" --data "$data" --steps 1 --out o
    ;;
  corrupt_state)
    # A resume checks the optimizer and train state it restores (finite; second moments >= 0;
    # counters non-negative integers): a corrupt value is an error naming the tensor, before
    # anything is written (it used to train on, log loss null and save NaN parameters, exit 0).
    train --steps 3 --out run --save-interval 3 > /dev/null 2>&1 || fail "run failed"
    # corrupt DST TENSOR VALUE: DST is a copy of run whose step_3 has every element of TENSOR set to VALUE
    corrupt() {
      cp -r run "$1" && python3 - "$1/checkpoints/step_3.safetensors" "$2" "$3" <<'PY' || fail "python3 failed"
import json, struct, sys
path, name, value = sys.argv[1], sys.argv[2], float(sys.argv[3])
data = bytearray(open(path, "rb").read())
n = struct.unpack("<Q", data[:8])[0]
t = json.loads(data[8:8 + n])[name]
a, b = t["data_offsets"]
fmt = {"F32": "f", "F64": "d"}[t["dtype"]]
count = (b - a) // struct.calcsize(fmt)
data[8 + n + a:8 + n + b] = struct.pack("<%d%s" % (count, fmt), *([value] * count))
open(path, "wb").write(data)
PY
    }
    i=0
    while read -r tensor value pat; do
      i=$((i + 1))
      corrupt c$i "$tensor" "$value"
      before=$(cat c$i/metrics.jsonl c$i/plan.json c$i/checkpoints/* | md5sum)
      expect_error "resume with $tensor = $value" \
        "checkpoint c$i/checkpoints/step_3.safetensors: state $tensor holds $pat" \
        "$run" train --data "$data" --steps 2 --out c$i --resume c$i
      [ "$(ls c$i/checkpoints)" = "step_3.safetensors" ] || fail "$tensor: the refused resume wrote $(ls c$i/checkpoints)"
      [ "$(cat c$i/metrics.jsonl c$i/plan.json c$i/checkpoints/* | md5sum)" = "$before" ] ||
        fail "$tensor: the refused resume changed c$i"
    done <<'CASES'
adamw.v.embed.weight nan a non-finite value at element 0
adamw.v.embed.weight -0.5 -0.5 at element 0 \(a second moment is >= 0\)
normuon.v.layers.0.mixer.W_o.weight -1 -1 at element 0 \(a second moment is >= 0\)
normuon.momentum.layers.0.mixer.W_o.weight nan a non-finite value at element 0
adamw.m.head.weight inf a non-finite value at element 0
acc.embed.weight nan a non-finite value at element 0
train.adamw_t nan a non-finite value at element 0
train.adamw_t -1 -1 at element 0 \(a counter is a non-negative integer\)
train.adamw_t 2.5 2.5 at element 0 \(a counter is a non-negative integer\)
train.loss_sum nan a non-finite value at element 0
train.n_ok -1 -1 at element 0 \(a counter is a non-negative integer\)
CASES
    [ "$i" -eq 11 ] || fail "ran $i corruptions, expected 11"
    # Train never writes a checkpoint that a resume would refuse: a plan whose init overflows
    # embed.weight to infinity (edited by hand) stops at the first save with an error naming the
    # parameter, writing no checkpoint (nor a temporary file) and no --save-init.
    python3 - run/plan.json infplan.json <<'PY' || fail "python3 failed"
import json, sys
p = json.load(open(sys.argv[1]))
for b in p["buffers"]:
    if b["name"] == "embed.weight":
        b["init"] = {"fill": 1e39}
json.dump(p, open(sys.argv[2], "w"))
PY
    expect_error "a checkpoint with an infinite parameter" \
      "checkpoint inf/checkpoints/step_1.safetensors not written: parameter embed.weight holds a non-finite value at element 0; training stopped at step 1 \(no checkpoint was written\)" \
      "$run" train --plan infplan.json --data "$data" --steps 2 --save-interval 1 --out inf
    [ -z "$(ls -A inf/checkpoints)" ] || fail "the refused save left: $(ls -A inf/checkpoints)"
    expect_error "--save-init with an infinite parameter" \
      "checkpoint init.safetensors not written: parameter embed.weight holds a non-finite value at element 0" \
      "$run" train --plan infplan.json --data "$data" --steps 0 --out inf2 --save-init init.safetensors
    [ ! -e init.safetensors ] || fail "a non-finite --save-init was written"
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "PASS: $case_name"
