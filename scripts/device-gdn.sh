#!/usr/bin/env bash
# Build, test and benchmark kernels/gdn on the GPU machine in one call.
# Usage (repo root, on the device): OUT=/some/dir scripts/device-gdn.sh [steps...]
# steps: build test bench py sass ncu ncut ncus ncuk san clocks probe (default: build test bench py sass). Logs go under $OUT.
# ncuk leaves one archive, ncuk-<kernel>.tar.xz (the ncu details, the per-instruction CSV and the
# unit's SASS with source lines: scripts/gdn-sass-lines.py joins the last two); NCU_KERNEL
# (a name regex) and NCU_ARGS (more ncu arguments) pick the launch.
# san: the GPU test's cases with T <= GDN_SAN_MAXT (default 320) under compute-sanitizer's
# memcheck, racecheck, synccheck and initcheck (GDN_SAN_TOOLS), GDN_SAN_TIMEOUT s each;
# GDN_SAN_ARGS adds test arguments (e.g. "--from 69": only the cases from the 70th on).
# NCU_CACHE (ncu, ncut): ncu's --cache-control, all (the default: caches flushed before each
# profiled kernel) or none. With the flush a pass reads its inputs from DRAM where, in the
# benchmark's loop, the kernel before it left them in L2: a change can weigh less under ncu
# than in the loop (run 100, docs/kernels/gdn.md).
# NCU_BENCH_ARGS (ncut): more benchmark arguments for the profiled call (e.g. "--nseg 16": one count).
# GDN_CUDA_FLAGS: CUDA defines for the build (a switch's variant, e.g. "-DHYMO_GDN_STATE_AHEAD=1").
# GDN_PY_TIMEOUT: seconds for the python baselines (default 480; torch.compile on a cold
# machine once took more than 300, run 33).
set -o pipefail
OUT=${OUT:-/tmp/gdn-out}
mkdir -p "$OUT"
STEPS=${*:-build test bench py sass}
ROOT=$(pwd)
BUILD=$ROOT/build-dev
log() { echo "== $*" | tee -a "$OUT/log"; }
has() { [[ " $STEPS " == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv 2>&1 | tee -a "$OUT/log"
. "$ROOT/scripts/gdn-prebuilt-lib.sh"  # prebuilt(): a set from scripts/gdn-prebuild.sh
# the prebuilt set built with these flags: A (the default) or a variant B1, B2, ...
PNAME=$(prebuilt_name "${GDN_CUDA_FLAGS:-}")
if has build && [ -n "$PNAME" ] && PD=$(prebuilt "$PNAME" "${GDN_CUDA_FLAGS:-}"); then
  log "prebuilt $PNAME$(prebuilt_commit "$PNAME") (.gdn-prebuilt, flags '${GDN_CUDA_FLAGS:-}'): no build here"
  echo "$PD" > /tmp/gdn-gdir
elif has build && [[ ${GDN_CUDA_FLAGS:-} == @* ]]; then
  log "GDN_CUDA_FLAGS='$GDN_CUDA_FLAGS' names another commit's kernels/gdn, which only scripts/gdn-prebuild.sh builds (this machine has no history): no usable prebuilt set has it"
  exit 2
elif has build; then
  log "configure (whole project)"
  if cmake -S . -B "$BUILD" -G Ninja -DHYMO_ENABLE_COMPILER=OFF -DHYMO_ENABLE_CUDA=ON \
       -DHYMO_ENABLE_NCCL=OFF "-DCMAKE_CUDA_FLAGS=${GDN_CUDA_FLAGS:-}" >>"$OUT/log" 2>&1; then
    GDIR=$BUILD/kernels/gdn
  else
    log "whole-project configure failed: building kernels/gdn alone"
    mkdir -p /tmp/gdnproj
    cat > /tmp/gdnproj/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.20)
set(CMAKE_CUDA_ARCHITECTURES 90a)
project(gdnproj LANGUAGES C CXX CUDA)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CUDA_STANDARD 17)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()
enable_testing()
set(HYMO_CUDA ON)
add_subdirectory(${GDN_SRC} gdn)
CM
    BUILD=/tmp/gdnbuild
    cmake -S /tmp/gdnproj -B "$BUILD" -G Ninja -DGDN_SRC="$ROOT/kernels/gdn" \
      "-DCMAKE_CUDA_FLAGS=${GDN_CUDA_FLAGS:-}" >>"$OUT/log" 2>&1 || exit 1
    GDIR=$BUILD/gdn
  fi
  log "build"
  ( time ninja -C "$BUILD" -j16 hymo_gdn_test hymo_gdn_bench hymo_gdn_cpu_test hymo_gdn_layout_test ) >>"$OUT/log" 2>&1 || {
    tail -50 "$OUT/log"; exit 1; }
  echo "$GDIR" > /tmp/gdn-gdir
fi
GDIR=$(cat /tmp/gdn-gdir)
if has test; then
  log "cpu twin test"
  "$GDIR/hymo_gdn_cpu_test" 2>&1 | tail -1 | tee -a "$OUT/log"
  if [ -x "$GDIR/hymo_gdn_layout_test" ]; then  # (sets prebuilt before session 27 lack it)
    log "layout test (on this device's SM count)"
    "$GDIR/hymo_gdn_layout_test" 2>&1 | tee "$OUT/layout.log" | grep -E "FAIL|PASSED|FAILED" | tee -a "$OUT/log"
  fi
  log "gpu test"
  "$GDIR/hymo_gdn_test" 2>&1 | tee "$OUT/test.log" | grep -E "FAIL|PASSED|FAILED|^case" | tee -a "$OUT/log"
fi
if has bench; then
  log "benchmark"
  "$GDIR/hymo_gdn_bench" --json $GDN_BENCH_ARGS 2>&1 | tee "$OUT/bench.json" | tee -a "$OUT/log"
fi
if has py; then
  log "python baselines"
  if ls .whl/*.whl >/dev/null 2>&1; then  # carried wheels (bench/gdn/fetch-wheels.sh): FLA
    python3 -m pip install -q --no-deps --target /tmp/gdn-pywheels .whl/*.whl >>"$OUT/log" 2>&1 \
      && export PYTHONPATH=/tmp/gdn-pywheels${PYTHONPATH:+:$PYTHONPATH}
  fi
  PYTHONUNBUFFERED=1 timeout "${GDN_PY_TIMEOUT:-480}" python3 bench/gdn/bench_gdn.py --ours "$GDIR/hymo_gdn_bench" --sweep-json "$OUT/bench.json" $GDN_PY_ARGS 2>&1 \
    | tee "$OUT/py.log" | tail -40 | tee -a "$OUT/log"
  # (timeout's status: the script's last progress line in py.log says where it stopped)
  if [ "${PIPESTATUS[0]}" = 124 ]; then
    log "python baselines stopped after GDN_PY_TIMEOUT=${GDN_PY_TIMEOUT:-480} s: $(grep -E '^  \([0-9]+ s\) timing' "$OUT/py.log" | tail -1)"
  fi
fi
# probe: kernels/gdn/gdn_probe.cu (the state, adjoint, plain output and backward main passes'
# traffic alone, one line a variant), compiled here with nvcc (it links no library: works with a
# prebuilt set too); the shapes in
# GDN_PROBE_SHAPES (B,T,H:cps, cps the segment length the library takes there, hymo_gdn_bench's
# "segments"; default the default shape's and H = 64's): probe.txt, probe.json
if has probe; then
  log "probe (the passes' memory schedules)"
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  if "$NVCC" -std=c++17 -O3 -arch=sm_90a -o /tmp/hymo_gdn_probe kernels/gdn/gdn_probe.cu >>"$OUT/log" 2>&1; then
    rm -f "$OUT/probe.txt" "$OUT/probe.json"
    for sc in ${GDN_PROBE_SHAPES:-4,4096,28:8 4,4096,64:16}; do
      /tmp/hymo_gdn_probe --shape "${sc%%:*}" --cps "${sc##*:}" 2>&1 | tee -a "$OUT/probe.txt" | tee -a "$OUT/log"
      /tmp/hymo_gdn_probe --shape "${sc%%:*}" --cps "${sc##*:}" --json >> "$OUT/probe.json" 2>&1
    done
  else
    log "probe: nvcc failed (log above)"
  fi
fi
# clocks: the benchmark with --clocks (a build with GDN_CUDA_FLAGS=-DHYMO_GDN_CLOCKS=1; the
# shapes and options in GDN_CLOCKS_ARGS, default the default shape), then scripts/gdn-clocks.py:
# clocks.txt (the summary) and clocks.bin.xz (the stamps)
if has clocks; then
  log "clock stamps (bench --clocks ${GDN_CLOCKS_ARGS:---quick})"
  rm -f "$OUT/clocks.bin" "$OUT/clocks.bin.xz"
  # shellcheck disable=SC2086
  "$GDIR/hymo_gdn_bench" --clocks "$OUT/clocks.bin" ${GDN_CLOCKS_ARGS:---quick} 2>&1 | tee -a "$OUT/log"
  python3 scripts/gdn-clocks.py "$OUT/clocks.bin" --json > "$OUT/clocks.txt" 2>&1
  grep -v '^{' "$OUT/clocks.txt" | tee -a "$OUT/log"
  xz -T0 -6 "$OUT/clocks.bin"
fi
if has ncu; then
  log "ncu (default shape: F1 F3 B1 B3 of one fwd+bwd)"
  ncu --clock-control none --cache-control "${NCU_CACHE:-all}" --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      -k regex:'seg_(fwd|bwd)' --launch-skip 8 -c 4 \
      "$GDIR/hymo_gdn_bench" --no-held --shape 4,4096,28,32,32 --iters 1 > "$OUT/ncu.txt" 2>&1
  grep -E "seg_|Duration|Throughput|Registers|Achieved Occupancy|Theoretical Occupancy|Block Limit|Stall|Issue Slots Busy|Executed Ipc A|L1/TEX Hit|L2 Hit|Warp Cycles Per Issued|Dynamic Shared" "$OUT/ncu.txt" \
    | grep -v "^    ---" | head -150 | tee -a "$OUT/log"
fi
# ncut (--no-held: no held calls after the idle ones): with --iters 1 the benchmark makes 4 calls (3 warm-up) of the forward (LF
# launches), of the training forward (LT) and then of forward + backward (LT + LB, the
# training forward first): launch 4 LF + 4 LT is the first forward + backward call's first.
# LF, LT and LB are the launch counts the benchmark reports (3, 3 and 4 by default; 2, 2 and 3
# with -DHYMO_GDN_SEG_SCAN=0; session 46's one-kernel forward had LF 1). ncut-fwd.txt:
# the same for the fourth plain forward's LF launches.
if has ncut; then
  log "ncu durations (default shape: one fwd+bwd, every kernel)"
  J=$("$GDIR/hymo_gdn_bench" --no-held --json --shape 4,4096,28,32,32 --iters 1 $NCU_BENCH_ARGS | grep '^{' | head -1)
  LF=$(echo "$J" | sed -E 's/.*"launches_fwd": ([0-9]+).*/\1/')
  LT=$(echo "$J" | sed -E 's/.*"launches_fwd_train": ([0-9]+).*/\1/')
  LB=$(echo "$J" | sed -E 's/.*"launches_bwd": ([0-9]+).*/\1/')
  # ncu_launches FILE SKIP COUNT: the durations of launches SKIP .. SKIP+COUNT-1 of one benchmark run
  ncu_launches() {
    ncu --clock-control none --cache-control "${NCU_CACHE:-all}" --section SpeedOfLight --section Occupancy \
        --section LaunchStats --launch-skip "$2" -c "$3" \
        "$GDIR/hymo_gdn_bench" --no-held --shape 4,4096,28,32,32 --iters 1 $NCU_BENCH_ARGS > "$1" 2>&1
  }
  ncu_launches "$OUT/ncut.txt" $((4 * ${LF:-3} + 4 * ${LT:-3})) $((${LT:-3} + ${LB:-4}))
  grep -E "^  [a-z_:<>A-Za-z0-9]+.*\(|Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Dynamic Shared|Compute \(SM\) Th|Memory Th" "$OUT/ncut.txt" \
    | head -120 | tee -a "$OUT/log"
  log "ncu durations (default shape: the plain forward's kernels)"
  ncu_launches "$OUT/ncut-fwd.txt" $((3 * ${LF:-3})) "${LF:-3}"
  grep -E "^  [a-z_:<>A-Za-z0-9]+.*\(|Duration" "$OUT/ncut-fwd.txt" | head -20 | tee -a "$OUT/log"
fi
if has ncus; then
  log "ncu stalls (default shape, the staged kernels of the benchmark's first calls: 4 forwards, 4 training forwards, then forward + backward)"
  M=smsp__inst_executed.sum,smsp__cycles_active.avg,sm__warps_active.avg.pct_of_peak_sustained_active
  for r in barrier long_scoreboard short_scoreboard mio_throttle math_pipe_throttle wait not_selected lg_throttle no_instruction dispatch_stall branch_resolving; do
    M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
  done
  ncu --clock-control none --metrics "$M" -k regex:"${NCU_KERNEL:-(state|out|adj|bwd)_bf16|seg_r?scan}" --launch-skip 0 -c 20 \
      "$GDIR/hymo_gdn_bench" --no-held --shape 4,4096,28,32,32 --iters 1 > "$OUT/ncus.txt" 2>&1
  grep -E "_kernel|inst_executed|cycles_active|warps_active|stalled" "$OUT/ncus.txt" | tee -a "$OUT/log"
fi
if has ncuk; then
  # one kernel in depth (NCU_KERNEL: a name regex, default the output pass): the full
  # section set, and per-SASS-instruction stall samples (source page, CSV)
  K=${NCU_KERNEL:-out_bf16}
  log "ncu full set + source page ($K, default shape)"
  # NCU_ARGS: more ncu arguments, e.g. "--launch-skip 4" (the bench's first training
  # output pass: --iters 1 runs the plain forward 4 times first)
  # shellcheck disable=SC2086
  ncu --clock-control none --set full --import-source yes -k regex:"$K" -c 1 $NCU_ARGS -o "$OUT/k" -f \
      "$GDIR/hymo_gdn_bench" --no-held --shape 4,4096,28,32,32 --iters 1 > "$OUT/ncuk.log" 2>&1
  ncu --import "$OUT/k.ncu-rep" --page details > "$OUT/ncuk.txt" 2>&1
  ncu --import "$OUT/k.ncu-rep" --page source --csv --print-source sass > "$OUT/ncuk-sass.csv" 2>&1 || true
  grep -E "Duration|Registers Per|Achieved Occ|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A|Stall|Shared Memory|Bank" "$OUT/ncuk.txt" | head -60 | tee -a "$OUT/log"
  # the default variant's SASS with source lines (nvdisasm -gi), for
  # scripts/gdn-sass-lines.py; all of it in one archive (the device tool returns at most
  # 8 files from $OUT), NCU_UNIT picking the instantiation unit (default bf16_s32)
  U=${NCU_UNIT:-bf16_s32}
  OBJ=$(find "$BUILD" -name "gdn_inst_${U}.cu.o" 2>/dev/null | head -1)
  X=$(mktemp -d)
  if [ -f "$GDIR/lines-$U.sass.xz" ]; then  # a prebuilt set brings its own
    xz -dc "$GDIR/lines-$U.sass.xz" > "$OUT/ncuk-lines.sass"
  elif [ -n "$OBJ" ] && (cd "$X" && cuobjdump -xelf all "$OBJ" > /dev/null 2>&1); then
    nvdisasm -gi -c "$X"/*.cubin > "$OUT/ncuk-lines.sass" 2>&1 || true
  fi
  rm -rf "$X" "$OUT/k.ncu-rep"
  (cd "$OUT" && tar cJf "ncuk-$(echo "$K" | tr -c 'A-Za-z0-9_\n' '_').tar.xz" ncuk.log ncuk.txt ncuk-sass.csv \
     $( [ -f ncuk-lines.sass ] && echo ncuk-lines.sass ) && rm -f ncuk.log ncuk.txt ncuk-sass.csv ncuk-lines.sass)
fi
if has sass; then
  log "sass"
  LIB=$(dirname "$GDIR")/gdn/libhymo_gdn.a
  [ -f "$LIB" ] || LIB=$GDIR/libhymo_gdn.a
  [ -f "$LIB" ] || LIB=$GDIR/libhymo_gdn.so  # a prebuilt set
  cuobjdump --dump-sass "$LIB" > /tmp/gdn.sass 2>&1
  {
    echo "HMMA lines: $(grep -c HMMA /tmp/gdn.sass)"
    echo "HGMMA lines: $(grep -c HGMMA /tmp/gdn.sass)"
    echo "HMMA variants:"; grep -o 'HMMA\.[A-Z0-9.]*' /tmp/gdn.sass | sort | uniq -c
    echo "per kernel (default shape kernels, bf16 S=D=32):"
    awk '/Function :/{f=$3} /HMMA/{c[f]++} END{for(k in c) print c[k], k}' /tmp/gdn.sass | grep 'Li32ELi32E' | sort -k2
    echo "local memory (LDL/STL) lines: $(grep -cE 'LDL|STL' /tmp/gdn.sass)"
  } | tee "$OUT/sass.txt" | tee -a "$OUT/log"
fi
if has san; then
  for tool in ${GDN_SAN_TOOLS:-memcheck racecheck synccheck initcheck}; do
    log "compute-sanitizer --tool $tool (cases with T <= ${GDN_SAN_MAXT:-320}, at most 64 (b, h) pairs)"
    timeout "${GDN_SAN_TIMEOUT:-150}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$GDIR/hymo_gdn_test" --max-t "${GDN_SAN_MAXT:-320}" --max-bh 64 ${GDN_SAN_ARGS:-} > "$OUT/san-$tool.log" 2>&1
    echo "exit $?" >> "$OUT/san-$tool.log"
    grep -E "SUMMARY|PASSED|FAILED|^exit" "$OUT/san-$tool.log" | sort | uniq -c | head -20 | tee -a "$OUT/log"
  done
fi
log "done"
