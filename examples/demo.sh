#!/usr/bin/env bash
# make demo: what perfdb does today, on the embedded example database.
# usage: examples/demo.sh PATH/TO/perfdb
set -eu
PERFDB=$(realpath "${1:-build/bin/perfdb}")
cd "$(dirname "$0")"
# The demo works on a scratch copy: the committed example database stays as it is.
SCRATCH=${DEMO_DIR:-../build/demo}
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && cp -r database profiling "$SCRATCH/"
cd "$SCRATCH"
ROOT=database
VERSIONS=(--vllm-version 0.13.0 --torch-version 2.8.0 --cann-version 8.3)
bold='' plain=''
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' plain=$'\033[0m'; fi
step() { printf '\n%s$ perfdb %s%s\n' "$bold" "${*:2}" "$plain"; "$@"; }

step "$PERFDB" --version
step "$PERFDB" devices
# Where would the stages write?  The shared database flags resolve it:
step "$PERFDB" path --database-root "$ROOT" "${VERSIONS[@]}"
# Validate every table of the example database (CSV syntax, shapes, durations,
# duplicate signatures); nothing is written.
step "$PERFDB" check --database-root "$ROOT" "${VERSIONS[@]}"
step "$PERFDB" check --json "$ROOT/ATLAS_800_A3_752T_128G_DIE/hccl"
# Parse a two-rank Ascend profile (examples/profiling) into the default
# database: one table per kernel type, merged with the tables already there.
step "$PERFDB" parse --profiling-path profiling --database-root "$ROOT" "${VERSIONS[@]}"
step "$PERFDB" check --database-root "$ROOT" "${VERSIONS[@]}"
# Theory shape rows for one model: GEMM (N,K) from Qwen3-32B's projections,
# every routed table gets new rows (durations 0, for microbench to fill);
# --rows caps each table with a seeded sample, so the run is repeatable.
step "$PERFDB" grid --target-models Qwen/Qwen3-32B --rows 200 --seed 1 --database-root "$ROOT" "${VERSIONS[@]}"
# Replay the new RmsNorm theory rows on this CPU (docs/replay.md): only rows
# without a duration are measured (missing-only). These are Ascend tables, so
# the CPU backend refuses them unless --force-device (Decision 8): a real CPU
# database lives under <root>/<host CPU>/cpu/<stack>/; here the point is the flow.
step "$PERFDB" microbench --backend cpu --ops RmsNorm --update-mode missing-only \
	--repeat-count 10 --row-budget 0.05 --force-device --database-root "$ROOT" "${VERSIONS[@]}" \
	> microbench.log
# (the full report is in microbench.log; its overview:)
grep -E '(perfdb microbench|^\[|^# |^\| (CSV|Rows))' microbench.log
# Collectives over MPI (docs/comm.md): 2 ranks of this machine, the four ops
# on a short grid, one checked row per size appended to hcom_*.csv; then the
# alpha-beta check against the A3 NPU model, which host MPI is not (FAILs
# are expected there: the numbers show how far apart they are).
MPIRUN=(mpirun -np 2)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
COMM=(comm --num-devices 2 --bytes-grid 1024 65536 1048576 --iters 50 --warmup 5
      --database-path "$ROOT/hccl_mpi_demo")
printf '\n%s$ %s perfdb %s%s\n' "$bold" "${MPIRUN[*]}" "${COMM[*]}" "$plain"
"${MPIRUN[@]}" "$PERFDB" "${COMM[@]}"
step "$PERFDB" validate --csv-dir "$ROOT/hccl_mpi_demo" || echo "(validate: exit status $?)"
# The report of the whole database (docs/report.md): markdown here, charts in
# one self-contained HTML page (coverage, hotspots, rooflines, collectives).
step "$PERFDB" report --database-root "$ROOT" "${VERSIONS[@]}" --html "$ROOT/perfdb_report.html"
printf '\ndemo done: the database is under %s; see README.md and docs/ for more\n' "$(pwd)/$ROOT"
printf 'report: open file://%s in a browser\n' "$(pwd)/$ROOT/perfdb_report.html"
