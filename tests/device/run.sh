#!/usr/bin/env bash
# GPU checks of the CUDA and NCCL backends, in one run (DEVELOPERS.md):
#   1. fail fast without an NVIDIA GPU
#   2. build in a fresh directory (-j16; only what the checks need)
#   3. cuda_ops_check: every CUDA op against the CPU backend or a naive loop on
#      small shapes, the CUDA-graph timed path and the CUPTI kernel report
#   4. perfdb microbench --backend cuda end to end on a small database
#   5. perfdb comm --backend nccl under mpirun (one rank per GPU, at most 8),
#      whose harness checks every result before timing
#   6. bench/microbench_cuda.c: bf16 GEMM TFLOP/s (8192^3, Qwen3-32B) next to
#      cuBLASLt called directly, memory-bound GB/s next to a D2D memcpy
# then prints a summary.  Sized for an H200 with 16 cores: under 8 minutes.
# Usage: tests/device/run.sh [--quick]   (BUILD=dir to choose the build dir)
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-/tmp/perfdb-device-build}
QUICK=${1:-}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-device.XXXXXX")
T0=$(date +%s)
declare -a SUMMARY=()
FAILED=0
now() { echo $(( $(date +%s) - T0 )); }
step() { echo; echo "=== $* (at $(now) s)"; }
record() {  # name status detail
  SUMMARY+=("$(printf '%-34s %-5s %s' "$1" "$2" "$3")")
  [ "$2" = ok ] || FAILED=1
}
finish() {
  echo; echo "=== summary ($(now) s)"
  printf '%s\n' "${SUMMARY[@]}"
  [ $FAILED = 0 ] && echo "device checks: PASSED" || echo "device checks: FAILED"
  exit $FAILED
}

step "1. GPU"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >"$WORK/gpus" 2>&1; then
  echo "run.sh: no NVIDIA GPU here (nvidia-smi -L failed): these checks need one" >&2
  exit 2
fi
cat "$WORK/gpus"
NGPU=$(grep -c '^GPU ' "$WORK/gpus")
[ "$NGPU" -ge 1 ] || { echo "run.sh: nvidia-smi lists no GPU" >&2; exit 2; }
record "gpu" ok "$NGPU GPU(s): $(head -1 "$WORK/gpus" | cut -c1-60)"

step "2. build ($BUILD)"
rm -rf "$BUILD"
if cmake -S "$ROOT" -B "$BUILD" -DPERFDB_WERROR=ON -DCMAKE_BUILD_TYPE=Release -DPERFDB_CUDA=ON \
     -DPERFDB_TESTS=OFF >"$WORK/cmake.log" 2>&1 &&
   timeout 300 cmake --build "$BUILD" -j16 --target perfdb_cli cuda_ops_check microbench_cuda \
     >"$WORK/build.log" 2>&1; then
  record "build" ok "$(now) s"
else
  tail -40 "$WORK/cmake.log" "$WORK/build.log"
  record "build" FAIL "see above"
  finish
fi
P=$BUILD/bin/perfdb

step "3. cuda_ops_check"
timeout 120 "$BUILD/cuda_ops_check" | tee "$WORK/ops.log"
rc=${PIPESTATUS[0]}
record "cuda ops vs CPU/naive references" "$([ $rc = 0 ] && echo ok || echo FAIL)" \
  "$(tail -1 "$WORK/ops.log")"

step "4. perfdb microbench --backend cuda"
DB=$WORK/db
mkdir -p "$DB"
H='OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Profiling Average Duration(us)'
printf '%s\n%s\n%s\n' "$H" \
  'dynamic,AI_CORE,"""4096,5120;10240,5120""",DT_BF16;DT_BF16,ND;ND,"""4096,10240""",DT_BF16,ND,' \
  'dynamic,AI_CORE,"""16,5120;5120,5120""",DT_BF16;DT_BF16,ND;ND,"""16,5120""",DT_BF16,ND,' >"$DB/MatMulV2.csv"
printf '%s\n%s\n' "$H" \
  'dynamic,AI_VECTOR_CORE,"""16,5120;5120""",DT_BF16;DT_BF16,ND;ND,"""16,5120;16,1""",DT_BF16;DT_FLOAT,ND;ND,' >"$DB/RmsNorm.csv"
# a PyTorch op table (docs/ops.md "PyTorch operators"): aten::linear lowers to MatMulV2, weight (N,K)
printf '%s\n%s\n' "$H" \
  ',GPU,"""16,5120;10240,5120;""",DT_BF16;DT_BF16;,ND;ND;,"""16,10240""",DT_BF16,ND,' >"$DB/aten.linear.csv"
timeout 120 "$P" microbench --backend "${MB_BACKEND:-cuda}" --force-device --database-path "$DB" --repeat-count 10 \
  --row-budget 0.5 >"$WORK/mb.log" 2>&1
rc=$?
cat "$WORK/mb.log" | tail -25
kern=$(ls "$DB"/reports/cuda_kernels_*.csv 2>/dev/null | head -1)
filled=$(python3 - "$DB" <<'EOF'
import csv, sys
n = 0
for t in ("MatMulV2", "RmsNorm", "aten.linear"):
    for r in csv.DictReader(open(f"{sys.argv[1]}/{t}.csv")):
        try:
            n += float(r["Average Duration(us)"]) > 0
        except ValueError:
            pass
print(n)
EOF
)
[ -n "$kern" ] && { echo "--- $kern"; cat "$kern"; }
if [ $rc = 0 ] && [ "$filled" = 4 ] && [ -n "$kern" ]; then
  record "microbench --backend cuda" ok "4 rows measured (aten.linear included); kernel report $(basename "$kern")"
else
  record "microbench --backend cuda" FAIL "rc=$rc rows with a duration: $filled kernel report: ${kern:-none}"
fi

step "5. perfdb comm --backend nccl"
NP=$(( NGPU < 8 ? NGPU : 8 ))
ND="1"
[ $NP -gt 1 ] && ND="1 $NP"
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shellcheck disable=SC2086
timeout 180 mpirun -np $NP --oversubscribe "$P" comm --backend nccl --num-devices $ND \
  --bytes-grid 1024 1048576 67108864 --iters 20 --time-budget 0.5 --database-path "$WORK/comm" \
  >"$WORK/comm.log" 2>&1
rc=$?
tail -30 "$WORK/comm.log"
record "comm --backend nccl (np=$NP)" "$([ $rc = 0 ] && echo ok || echo FAIL)" \
  "$(grep -E 'Completed|check' "$WORK/comm.log" | head -1)"

step "6. bench/microbench_cuda"
timeout 240 "$BUILD/microbench_cuda" $QUICK | tee "$WORK/bench.log"
rc=${PIPESTATUS[0]}
record "microbench_cuda" "$([ $rc = 0 ] && echo ok || echo FAIL)" "figures above"
while read -r l; do SUMMARY+=("  $l"); done < <(grep -E '^square|^TensorMove' "$WORK/bench.log")
finish
