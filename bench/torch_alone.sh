#!/bin/bash
# Rows timed alone against the same rows in the trace's op sequence
# (docs/measuring.md "Small ops in the model").
#
#   bash bench/torch_alone.sh [BUILD] [ROUNDS]
#
# For bench/closure.sh's decoder (bf16 and fp32, decode and prefill, at one
# thread; TORCH_ALONE_CASES and TORCH_ALONE_THREADS choose others): records
# the step, parses it, has the torch backend write its request for a replay
# in the trace's sequence, and gives it to bench/torch_alone.py, which times
# in one process, interleaved, ROUNDS times (default 5): the sequence, each
# row alone back to back, each row alone as the backend times it (the
# eviction before a small op's calls), and the sequence again (the A/A
# figure).  Needs /usr/bin/python3 with python3-torch (exits 77 without).
set -eu
BUILD=${1:-build}
ROUNDS=${2:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/torch_bench.sh"   # PERFDB, PY, malloc_kept
# the allocator as bench/closure.sh keeps it by default
malloc_kept
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-torch-alone.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export PERFDB_STATE_DIR="$WORK/state"
# the child python keeps a copy of its request
cat >"$WORK/py" <<SH
#!/bin/sh
[ "\$1" = "-c" ] || cp "\$2" "$WORK/request.json"
exec $PY "\$@"
SH
chmod +x "$WORK/py"
for c in ${TORCH_ALONE_CASES:-bf16:decode bf16:prefill fp32:decode fp32:prefill}; do
	for th in ${TORCH_ALONE_THREADS:-1}; do
		d="$WORK/${c%%:*}-${c##*:}-$th"
		mkdir -p "$d"
		"$PY" "$HERE/closure_model.py" record "$d/step.pt.trace.json" --dtype "${c%%:*}" \
			--phase "${c##*:}" --threads "$th"
		"$PERFDB" parse --profiling-path "$d/step.pt.trace.json" --database-path "$d/db" --quiet >/dev/null
		# a replay just long enough to write the request: 3 samples, 10 ms a row
		PERFDB_TORCH_PYTHON="$WORK/py" "$PERFDB" microbench --backend torch --database-path "$d/db" \
			--force-device --threads "$th" --repeat-count 3 --row-budget 0.01 \
			--sequence-trace "$d/step.pt.trace.json" >/dev/null 2>&1 || true
		[ -s "$WORK/request.json" ] || { echo "no request written for $c" >&2; exit 1; }
		echo "== ${c%%:*} ${c##*:} at $th thread$([ "$th" = 1 ] || echo s)"
		# the alone rows: 30 samples and 0.1 s a row (each round times every row twice)
		"$PY" - "$WORK/request.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["repeat"], r["budget_s"] = 30, 0.1
json.dump(r, open(sys.argv[1], "w"))
PY
		PERFDB_TORCH_REPLAY_DIR="$(dirname "$PERFDB")/../share/perfdb" "$PY" "$HERE/torch_alone.py" \
			"$WORK/request.json" "$ROUNDS"
		rm -f "$WORK/request.json"
	done
done
