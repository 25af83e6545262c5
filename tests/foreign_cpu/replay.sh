#!/usr/bin/env bash
# perfdb microbench --backend cpu, the binary as built, on an emulated CPU
# of another generation (tests/foreign_cpu/qemu.sh: its cpuid is MODEL's,
# with no PERFDB_MAX_CPU_ISA or ONEDNN_MAX_CPU_ISA set):
#   replay.sh PERFDB GEN_PROFILE MODEL CPU_ISA ONEDNN_ISA ROWS_KERNEL
# A profile (bench/gen_profile) is parsed natively into a database; the two
# smallest bf16 rows of six tables (MatMulV2, BatchMatMulV2, RmsNorm,
# AddRmsNormBias, SwiGlu, Add) are replayed under qemu; the attention, MoE
# and quantised kernels are covered on the same CPUs by their unit tests
# (tests/CMakeLists.txt), their database rows being too large to emulate
# in CI time.  Checked by rule, not by value:
#   - every row replayed, with a positive duration in its table;
#   - the run record names the levels MODEL has: cpu_isa=CPU_ISA as
#     detected (not held down), onednn_isa=ONEDNN_ISA;
#   - Kernel Used: every bf16 GEMM row runs oneDNN's fp32 GEMM on converted
#     operands ("+f32": oneDNN has no bf16 matmul below AVX-512); the
#     norm and SwiGlu rows run own:ROWS_KERNEL (rows_avx2 on an AVX2 CPU,
#     generic below it: cpu_internal.h).
set -eu
PERFDB=$(realpath "$1") GEN=$(realpath "$2") MODEL=$3 ISA=$4 DNNL=$5 ROWK=$6
HERE=$(cd "$(dirname "$0")" && pwd)
command -v qemu-x86_64 >/dev/null 2>&1 || { echo "SKIP: qemu-x86_64 not found (Debian package qemu-user)"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-foreign.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
export PERFDB_DATA_ROOT="$WORK/no-such-root" PERFDB_TIMESTAMP=t
unset PERFDB_MAX_CPU_ISA ONEDNN_MAX_CPU_ISA
# OMP_NUM_THREADS equal to --threads: otherwise microbench re-executes itself
# to set it (native_run.c), and that exec leaves the emulator (qemu-user
# follows fork, not execve)
export OMP_NUM_THREADS=2
fail() { echo "FAIL: $*" >&2; exit 1; }
"$GEN" prof --rows 6000 --ranks 1 --operator-details --seed 5 > /dev/null
"$PERFDB" parse -q --profiling-path prof --database-path full > /dev/null || fail "parse"
mkdir db
python3 - <<'PY' || fail "trim"
import csv, math
keep = ["MatMulV2", "BatchMatMulV2", "RmsNorm", "AddRmsNormBias", "SwiGlu", "Add"]
def size(r):
    n = 0
    for s in r["Input Shapes"].strip('"').split(";"):
        dims = [int(d) for d in s.split(",") if d.strip()]
        n += math.prod(dims) if dims else 0
    return n
for t in keep:
    with open(f"full/{t}.csv", newline="") as f:
        rd = csv.DictReader(f)
        rows = [r for r in rd if "BF16" in r["Input Data Types"]]
        cols = rd.fieldnames
    rows.sort(key=size)
    with open(f"db/{t}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, cols, lineterminator="\r\n")
        w.writeheader()
        w.writerows(rows[:2])
PY
for t in db/*.csv; do python3 -c "import sys,csv; sys.exit(0 if len(list(csv.reader(open('$t'))))==3 else 1)" || fail "$t: not two rows"; done
bash "$HERE/qemu.sh" "$MODEL" "$PERFDB" microbench --backend cpu --force-device --database-path db --threads 2 \
  --repeat-count 1 --row-budget 0 --row-timeout 300 > mb.out 2> mb.err || fail "microbench: $(tail -5 mb.err)"
python3 - "$ISA" "$DNNL" "$ROWK" <<'PY' || fail "rules"
import csv, sys
isa, dnnl, rowk = sys.argv[1:]
env = dict(l.rstrip("\n").split("=", 1) for l in open("db/reports/microbench_env_t.txt") if "=" in l)
bad = []
if not env["cpu_isa"].startswith(f"{isa} (detected {isa}, PERFDB_MAX_CPU_ISA=(unset))"):
    bad.append(f"cpu_isa={env['cpu_isa']}, want {isa} as detected")
if not env["onednn_isa"].startswith(f"{dnnl} (ONEDNN_MAX_CPU_ISA=(unset))"):
    bad.append(f"onednn_isa={env['onednn_isa']}, want {dnnl}")
rows = list(csv.DictReader(open("db/reports/microbench_rows_t.csv", newline="")))
seen = set()
for r in rows:
    op, k = r["Operator"], r["Kernel Used"]
    seen.add(op)
    if r["Status"] != "ok":
        bad.append(f"{op}:{r['Line']} {r['Status']} {r['Reason'][:160]}")
        continue
    if op in ("MatMulV2", "BatchMatMulV2"):
        if not (k.startswith("onednn:") and k.endswith("+f32")):
            bad.append(f"{op}:{r['Line']} Kernel Used {k}: want oneDNN's fp32 GEMM (+f32)")
    elif op in ("RmsNorm", "AddRmsNormBias", "SwiGlu") and k != f"own:{rowk}":
        bad.append(f"{op}:{r['Line']} Kernel Used {k}: want own:{rowk}")
for t in ("MatMulV2", "BatchMatMulV2", "RmsNorm", "AddRmsNormBias", "SwiGlu", "Add"):
    if t not in seen:
        bad.append(f"{t}: no row replayed")
    for i, r in enumerate(csv.DictReader(open(f"db/{t}.csv", newline="")), start=2):
        if not float(r["Average Duration(us)"] or 0) > 0:
            bad.append(f"{t}.csv:{i}: no duration")
for b in bad:
    print(b)
print(f"{len(rows)} rows, cpu_isa={env['cpu_isa'].split()[0]}, onednn_isa={env['onednn_isa'].split()[0]}")
sys.exit(1 if bad else 0)
PY
echo ok
