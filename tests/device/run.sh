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
#   7-8. --cpu: the CPU backend's unit tests on this machine's CPU (another
#      generation than the one they were written on), natively and with the
#      ISA held to AVX2 and SSE2; decode attention GB/s beside a triad and
#      the memory-bound ops beside a triad at 1 thread and all threads
#   9. --comm: bench/comm.sh (perfdb comm over MPI beside the plain loop,
#      2 ranks, 1 round) on this machine's quieter cores
#  10. --gemm: bench/microbench_ref's GEMMs (perfdb beside oneDNN called
#      directly) at all threads, natively and held to AVX2 (shapes halved)
# then prints a summary.  Sized for an H200 with 16 cores: under 8 minutes.
# Usage: tests/device/run.sh [--quick] [--cpu] [--comm] [--gemm] [--prebuilt DIR]
#   BUILD=dir chooses the build dir.  --prebuilt DIR takes the binaries that
#   tests/device/pack.sh made on a development machine instead of building:
#   the lent machines have no Debian packages and no network (DEVELOPERS.md).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-/tmp/perfdb-device-build}
QUICK="" CPU=0 COMM=0 GEMM=0 PRE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=--quick ;;
    --cpu) CPU=1 ;;
    --comm) COMM=1 ;;
    --gemm) GEMM=1 ;;
    --prebuilt) PRE=$(cd "$2" && pwd); shift ;;
    *) echo "run.sh: unknown argument $1 (--quick, --cpu, --comm, --gemm, --prebuilt DIR)" >&2; exit 2 ;;
  esac
  shift
done
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

if [ -n "$PRE" ]; then
  step "2. prebuilt binaries ($PRE)"
  SYS=/tmp/perfdb-sys
  rm -rf "$SYS"; mkdir -p "$SYS"
  tar -C "$SYS" -xJf "$PRE/sys.tar.xz"
  # CUDA's libraries from this machine (matched to its driver): the toolkit's, else the wheels'
  cudalibs=""
  for n in libcudart.so.13 libcublasLt.so.13 libcupti.so.13 libnccl.so.2; do
    f=$(find /usr/local/cuda*/ /usr/lib/x86_64-linux-gnu -name "$n" 2>/dev/null | head -1)
    [ -n "$f" ] || f=$(find / -xdev -name "$n" -not -path "$SYS/*" 2>/dev/null | head -1)
    if [ -n "$f" ]; then echo "$n: $f"; cudalibs="$cudalibs:$(dirname "$f")"; else echo "$n: not found"; fi
  done
  L=$SYS/usr/lib/x86_64-linux-gnu
  export LD_LIBRARY_PATH="$L:$L/openblas-pthread:$L/openmpi/lib$cudalibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # Open MPI and PMIx find their components and help texts under the packed
  # tree, not a different Open MPI the machine may have at the same paths
  export OPAL_PREFIX=$SYS/usr PMIX_INSTALL_PREFIX=$SYS/usr
  export PMIX_MCA_mca_base_component_path=$L/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
  mkdir -p "$SYS/bin"
  ln -sf "$SYS/usr/bin/orterun" "$SYS/bin/mpirun"
  export PATH="$SYS/bin:$PATH"
  BUILD=$WORK/build
  mkdir -p "$BUILD"
  cp -r "$PRE/bin" "$PRE/lib" "$BUILD/"
  cp "$PRE"/tools/* "$BUILD/"
  if ldd "$BUILD/bin/perfdb" "$BUILD/cuda_ops_check" "$BUILD/lib/perfdb/libperfdb-cuda.so" | grep 'not found'; then
    record "prebuilt" FAIL "libraries not found (above)"
  else
    record "prebuilt" ok "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | cut -c2-60)"
  fi
else
step "2. build ($BUILD)"
rm -rf "$BUILD"
if cmake -S "$ROOT" -B "$BUILD" -DPERFDB_WERROR=ON -DCMAKE_BUILD_TYPE=Release -DPERFDB_CUDA=ON \
     -DPERFDB_TESTS=OFF >"$WORK/cmake.log" 2>&1 &&
   timeout 300 cmake --build "$BUILD" -j16 --target perfdb_cli cuda_ops_check microbench_cuda microbench_attention microbench_ref comm_ref \
     >"$WORK/build.log" 2>&1; then
  record "build" ok "$(now) s"
else
  tail -40 "$WORK/cmake.log" "$WORK/build.log"
  record "build" FAIL "see above"
  finish
fi
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
[ $CPU = 1 ] || [ $COMM = 1 ] || [ $GEMM = 1 ] || finish
NCPU=$(nproc)
if [ $CPU = 1 ]; then
step "7. CPU backend on this machine's CPU"
grep -m1 'model name' /proc/cpuinfo
echo "flags: $(grep -m1 -owE 'avx2|avx512f|avx512_bf16|avx512_fp16|amx_bf16|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ')"
if ls "$BUILD"/test_cpu* >/dev/null 2>&1; then
  # each CPU unit test natively, then held to AVX2 and to SSE2 as make check does
  cat >"$WORK/unit.sh" <<'EOF2'
isa=$1 t=$2 log=$3/unit.$1.$(basename "$2").log
case $isa in
  native) e="" ;;
  avx2) e="ONEDNN_MAX_CPU_ISA=AVX2 PERFDB_MAX_CPU_ISA=avx2" ;;
  sse2) e="ONEDNN_MAX_CPU_ISA=SSE41 PERFDB_MAX_CPU_ISA=sse2" ;;
esac
# shellcheck disable=SC2086
if env $e OMP_NUM_THREADS=2 timeout 120 "$t" >"$log" 2>&1; then echo "ok $isa $(basename "$t")"; else echo "FAIL $isa $(basename "$t")"; fi
EOF2
  for isa in native avx2 sse2; do for t in "$BUILD"/test_cpu*; do echo "$isa $t"; done; done |
    PERFDB_TEST_DATA="$ROOT/tests/data" xargs -P 8 -n 2 sh -c 'bash "$0" "$1" "$2" "'"$WORK"'"' "$WORK/unit.sh" >"$WORK/unit.txt"
  nf=$(grep -c '^FAIL' "$WORK/unit.txt"); nt=$(wc -l <"$WORK/unit.txt")
  for f in $(grep '^FAIL' "$WORK/unit.txt" | awk '{print "unit."$2"."$3".log"}'); do
    echo "--- $f"; grep -E '\[  FAILED|\[  ERROR|error|Error|FAIL' "$WORK/$f" | head -15
  done
  record "CPU unit tests (native, AVX2, SSE2)" "$([ "$nf" = 0 ] && echo ok || echo FAIL)" "$((nt - nf))/$nt passed"
fi
step "8. CPU benches at 1 and $NCPU threads"
for T in 1 "$NCPU"; do
  echo "--- microbench_attention $T"
  OMP_NUM_THREADS=$T timeout 150 "$BUILD/microbench_attention" "$T" 2>&1 | tee -a "$WORK/attn.log"
  echo "--- microbench_ref mem $T"
  OMP_NUM_THREADS=$T timeout 120 "$BUILD/microbench_ref" 1 "$T" mem 2>&1 | tee -a "$WORK/mem.log"
done
record "CPU benches" ok "figures above"
fi
if [ $COMM = 1 ]; then
step "9. bench/comm.sh (MPI, 2 ranks)"
timeout 200 bash "$ROOT/bench/comm.sh" "$BUILD" 1 2>&1 | tee "$WORK/comm_bench.log"
rc=${PIPESTATUS[0]}
record "bench/comm.sh" "$([ $rc = 0 ] && echo ok || echo FAIL)" "figures above"
fi
if [ $GEMM = 1 ]; then
step "10. GEMMs at $NCPU threads, native and AVX2"
OMP_NUM_THREADS=$NCPU timeout 150 "$BUILD/microbench_ref" 1 "$NCPU" gemm 2>&1 | tee "$WORK/gemm.log"
rc1=${PIPESTATUS[0]}
ONEDNN_MAX_CPU_ISA=AVX2 PERFDB_MAX_CPU_ISA=avx2 OMP_NUM_THREADS=$NCPU timeout 150 "$BUILD/microbench_ref" 2 "$NCPU" gemm \
  2>&1 | tee -a "$WORK/gemm.log"
rc2=${PIPESTATUS[0]}
record "GEMM benches" "$([ $rc1 = 0 ] && [ $rc2 = 0 ] && echo ok || echo FAIL)" "figures above"
fi
finish
