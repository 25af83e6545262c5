#!/usr/bin/env bash
# A directory of per-rank traces is pooled (as kernel_details ranks are):
# two ranks named as HolisticTraceAnalysis names them (rank-N.json.gz), the
# second a copy of the first, must give the oracle's pooled tables, every
# count doubled; an unrelated JSON file beside them is not an input.
#   usage: compare_trace_ranks.sh PERFDB KINETO_FIXTURE_DIR
set -eu
PERFDB=$1 DATA=$2
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-trace-ranks.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/prof"
cp "$DATA/kineto_gpu_sampled_rank0.json.gz" "$WORK/prof/rank-0.json.gz"
cp "$DATA/kineto_gpu_sampled_rank0.json.gz" "$WORK/prof/rank-1.json.gz"
echo '{"model": "not a trace"}' > "$WORK/prof/config.json"
"$PERFDB" parse -q --json --profiling-path "$WORK/prof" --database-path "$WORK/perfdb" > "$WORK/summary.json"
mv "$WORK/prof/config.json" "$WORK/config.json"
python3 "$HERE/oracle_trace.py" "$WORK/prof" "$WORK/oracle"
diff -r -x op_mapping.yaml "$WORK/oracle" "$WORK/perfdb"   # the tables; the mapping is tested by cli.parse.op_mapping_*
python3 - "$WORK/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["inputs"] == 2, s["inputs"]
ranks = [t.get("distributed") for t in s["traces"]]
assert ranks == [{"rank": 0, "world_size": 128, "backend": "nccl"}] * 2, ranks
print("pooled 2 ranks:", s["generated"], "tables,", s["keys"], "keys")
PY
