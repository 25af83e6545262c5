#!/usr/bin/env bash
# make demo: what perfdb does today, on the embedded example database.
# usage: examples/demo.sh PATH/TO/perfdb
set -eu
PERFDB=$(realpath "${1:-build/bin/perfdb}")
cd "$(dirname "$0")"
BENCH=$(realpath ../bench)
TRACE=$(realpath ../tests/data/torch_trace/cpu_block.pt.trace.json)
# The demo works on a scratch copy: the committed example database stays as it is.
SCRATCH=${DEMO_DIR:-../build/demo}
# The CPU replay's samples per row.  tests/report/demo_roof.sh, which checks
# where the demo's points lie and not how steady they are, takes 2: four
# Qwen3-32B GEMM rows cost ~2.5 s a call on two cores.
REPEAT=${DEMO_REPEAT_COUNT:-10}
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
# This machine's own database (docs/database.md "One home per native device"):
# a PyTorch trace of a small bf16 transformer block recorded on a CPU
# (tests/data/torch_trace/, its README says how) is parsed into the CPU's home
# <root>/<host CPU>/torch/torch1.13.1/, one table per PyTorch op, with an
# op_mapping.yaml for the simulator; the grid adds Qwen3-32B shapes to its
# GEMM tables; --backend cpu replays every row there (no location flags: the
# CPU backend measures its own home) and the report puts microbench beside
# the trace's profiling for the same ops on the same CPU.
CPU=$("$PERFDB" devices --detect --json | python3 -c \
  'import json,sys; print([d["name"] for d in json.load(sys.stdin) if d["kind"] == "cpu"][0])')
step "$PERFDB" parse --profiling-path "$TRACE" --database-root "$ROOT" --torch-version 1.13.1
step "$PERFDB" grid --target-models Qwen/Qwen3-32B --rows 8 --seed 1 --database-root "$ROOT" \
	--device "$CPU" --torch-version 1.13.1
step "$PERFDB" microbench --backend cpu --repeat-count "$REPEAT" --row-budget 0.05 --database-root "$ROOT" \
	> microbench_cpu.log
grep -E '(perfdb microbench|^\[|^# |^\| (CSV|Rows))' microbench_cpu.log
step "$PERFDB" report --database-root "$ROOT" --device "$CPU" --html "$ROOT/perfdb_report_cpu.html"
# Does the database describe the run it came from?  perfdb predict answers the
# trace's op sequence from the rows just replayed (--measured-only: replayed
# figures only) and sets the prediction beside the trace's own step, recorded
# under the profiler (docs/predict.md).
step "$PERFDB" predict --trace "$TRACE" --database-root "$ROOT" --device "$CPU" --torch-version 1.13.1 \
	--measured-only --top 8
# With PyTorch installed (Debian: python3-torch), one case of bench/closure.sh: a
# small decoder's forward measured without the profiler against its prediction.
if [ "${DEMO_CLOSURE:-1}" != 0 ] && /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	printf '\n%s$ CLOSURE_CONTEXT=alone CLOSURE_CASES=bf16:decode CLOSURE_THREADS=1 bash bench/closure.sh BUILD 1%s\n' "$bold" "$plain"
	CLOSURE_CONTEXT=alone CLOSURE_CASES=bf16:decode CLOSURE_THREADS=1 bash "$BENCH/closure.sh" "$(dirname "$(dirname "$PERFDB")")" 1 \
		2>/dev/null | grep '^closure' || echo "(closure: bench/closure.sh failed)"
else
	printf '\nclosure: install python3-torch (Debian) to measure a small decoder against its prediction (bench/closure.sh)\n'
fi
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
printf 'reports: open file://%s and file://%s in a browser\n' "$(pwd)/$ROOT/perfdb_report.html" \
	"$(pwd)/$ROOT/perfdb_report_cpu.html"
