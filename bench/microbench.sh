#!/usr/bin/env bash
# perfdb microbench --backend cpu beside its references, in one run.
#
#   bash bench/microbench.sh [BUILD_DIR] [THREADS] [SCALE]
#
# THREADS: a count, or `both` (default): everything at 1 thread and again at
# all the CPUs this process may use (its affinity mask), every figure beside
# its reference at the same count.  Section 1 runs twice per count: on the
# native ISA, and with oneDNN held to AVX2 and the own kernels to their AVX2
# paths (ONEDNN_MAX_CPU_ISA=AVX2 PERFDB_MAX_CPU_ISA=avx2), where oneDNN has
# no bf16 matmul and the bf16 reference is its fp32 one (docs/measuring.md
# "The AVX2 path").
#
# 1. bench/microbench_ref.c: bf16 and fp32 GEMM GFLOP/s for M in {1, 128,
#    4096} with Qwen3-32B's (N,K) of qkv_proj and down_proj through the
#    perfdb op next to oneDNN called directly (and OpenBLAS sgemv at fp32
#    M = 1); RmsNorm, SwiGlu, Add, SoftmaxV2, GatherV2, Transpose (and the
#    fp32/fp16 rows, AddRmsNormBias) GB/s next to a STREAM triad whose passes
#    alternate with the op's calls (bench/bench_util.h).  SCALE > 1 divides
#    the GEMM shapes (a quick look); the issue's figures are SCALE 1.
# 2. The spread of medians across two replays of the same rows: a Qwen3-32B
#    grid database (examples/database, --rows 4, fixed seed) replayed twice
#    with perfdb microbench --backend cpu; per row |m1 - m2| / min(m1, m2)
#    of the medians, for rows >= 50 us (target <= 2 %), beside each replay's
#    memory-bandwidth probe and contention retries for the row (docs/replay.md
#    "Contention").
# 3. bench/microbench_attention.c: FusedInferAttentionScore prefill GFLOP/s next
#    to a 2048³ oneDNN GEMM, decode GB/s next to a STREAM triad alternating
#    with the decode calls (prefill heads divided by 8: see its header).
# OPENBLAS_CORETYPE is removed (OpenBLAS, the fp32 GEMV reference's
# library, detects the core) and OMP_NUM_THREADS = THREADS, as perfdb
# microbench sets it (docs/replay.md).
# docs/measuring.md defines every number.
set -eu
BUILD=${1:-build}
THREADS=${2:-both}
SCALE=${3:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PERFDB=$BUILD/bin/perfdb
REF=$BUILD/microbench_ref
[ -x "$PERFDB" ] && [ -x "$REF" ] || { echo "build first: make (missing $PERFDB or $REF)" >&2; exit 1; }
unset OPENBLAS_CORETYPE
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-mb.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ALL=$(env -u OMP_NUM_THREADS nproc)   # the affinity mask, as perfdb's --threads default
if [ "$THREADS" = both ]; then COUNTS="1 $ALL"; [ "$ALL" = 1 ] && COUNTS=1; else COUNTS=$THREADS; fi
for THREADS in $COUNTS; do
export OMP_NUM_THREADS=$THREADS
echo "######## $THREADS thread(s)"
echo "#### native ISA"
"$REF" "$SCALE" "$THREADS"
echo
echo "#### ISA held to AVX2 (ONEDNN_MAX_CPU_ISA=AVX2 PERFDB_MAX_CPU_ISA=avx2)"
ONEDNN_MAX_CPU_ISA=AVX2 PERFDB_MAX_CPU_ISA=avx2 "$REF" "$SCALE" "$THREADS"
echo
echo "# spread of medians across two replays (rows >= 50 us)"
cp -r "$ROOT/examples/database/ATLAS_800_A3_752T_128G_DIE/vllm_ascend/vllm0.13.0_torch2.8.0_cann8.3" "$WORK/db$THREADS"
"$PERFDB" grid --database-path "$WORK/db$THREADS" --target-models Qwen/Qwen3-32B --rows 4 --seed 7 > /dev/null
for run in 1 2; do
  PERFDB_TIMESTAMP=run$run "$PERFDB" microbench --backend cpu --force-device --threads "$THREADS" \
    --database-path "$WORK/db$THREADS" --row-budget 2 --row-timeout 600 > /dev/null
done
python3 - "$WORK/db$THREADS/reports" <<'PY'
import csv, sys
d = sys.argv[1]
def rows(n):
    return {(r["Operator"], r["Line"]): r for r in csv.DictReader(open(f"{d}/microbench_rows_run{n}.csv", newline=""))}
a, b = rows(1), rows(2)
worst = []
print(f"{'op':10} {'line':>4} {'median1(us)':>12} {'median2(us)':>12} {'spread':>7} {'cpu/wall':>8} "
      f"{'probe1/2 GB/s':>14} {'retries':>7}")
for k in sorted(a):
    m1, m2 = float(a[k]["Median(us)"]), float(b[k]["Median(us)"])
    if a[k]["Status"] != "ok" or b[k]["Status"] != "ok" or min(m1, m2) < 50:
        continue
    s = abs(m1 - m2) / min(m1, m2)
    worst.append(s)
    print(f"{k[0]:10} {k[1]:>4} {m1:12.1f} {m2:12.1f} {100*s:6.2f}% {a[k]['CPU/Wall']:>8} "
          f"{a[k]['Probe(GB/s)']:>6}/{b[k]['Probe(GB/s)']:<7} {a[k]['Retries']:>3}/{b[k]['Retries']:<3}")
if worst:
    worst.sort()
    print(f"rows {len(worst)}, median spread {100*worst[len(worst)//2]:.2f}%, max {100*worst[-1]:.2f}%"
          f", within 2%: {sum(s <= 0.02 for s in worst)}")
PY
echo; "$BUILD/microbench_moe" "$SCALE" "$THREADS"   # bench/microbench_moe.c: grouped matmul and int8 GEMM beside oneDNN
echo; "$BUILD/microbench_attention" "$THREADS"   # attention vs GEMM peak / STREAM triad (bench/microbench_attention.c)
echo
done
