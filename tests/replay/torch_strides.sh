#!/usr/bin/env bash
# The torch backend lays a row's inputs out as its Input Strides cell says
# (docs/chrome_trace.md "Input strides", docs/replay.md "The torch
# backend"): a CPU trace whose matmul takes kᵀ as a transposed view
# (tests/cli/parse/trace_input_strides) is parsed, replayed with
# --backend torch through a wrapper interpreter that keeps the request, and
# (1) the request carries the cell, (2) torch_replay.py's own inputs() builds
# the tensors with those strides, (3) the row is written, (4) the env record
# says the operands rotated and what the child inherited (OMP_WAIT_POLICY
# given, OPENBLAS_NUM_THREADS taken away: "(unset)").  Rules, not values.
# Exit 77 (skipped) without PyTorch for /usr/bin/python3.
# usage: torch_strides.sh PERFDB
set -u
PERFDB=$1
HERE=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "no PyTorch for /usr/bin/python3: skipped"; exit 77; }
W=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-torch-strides.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W"
export PERFDB_TIMESTAMP=t PERFDB_STATE_DIR="$W/state"
cat >py <<'SH'
#!/bin/sh
cp "$2" "$(dirname "$0")/request.json"
exec /usr/bin/python3 "$@"
SH
chmod +x py
"$PERFDB" parse --profiling-path "$HERE/../cli/parse/trace_input_strides/input/t.pt.trace.json" \
	--database-path db >/dev/null 2>&1 || { echo "FAIL: parse"; exit 1; }
unset OPENBLAS_NUM_THREADS
OMP_WAIT_POLICY=PASSIVE PERFDB_TORCH_PYTHON="$W/py" "$PERFDB" microbench --backend torch --database-path db --threads 1 \
	--repeat-count 3 --row-budget 0.01 --ops aten.matmul >out 2>err || { echo "FAIL: microbench exited $?"; cat err; exit 1; }
/usr/bin/python3 - "$HERE/../../data/torch_replay.py" <<'PY'
import csv, json, sys
sys.argv = [sys.argv[1]]
ns = {"__name__": "torch_replay"}
exec(open(sys.argv[0]).read(), ns)
rows = json.load(open("request.json"))["rows"]
bad = 0
if len(rows) != 1 or rows[0]["strides"] != '"1024,64,1024,1;1049600,65600,1,64"':
    print("FAIL: the request's strides:", [r.get("strides") for r in rows]); bad += 1
else:
    got = [tuple(t.stride()) for t in ns["inputs"](rows[0])]
    if got != [(1024, 64, 1024, 1), (1049600, 65600, 1, 64)]:
        print("FAIL: inputs() strides", got); bad += 1
r = list(csv.DictReader(open("db/aten.matmul.csv", newline="")))[0]
if not float(r.get("Average Duration(us)") or 0) > 0:
    print("FAIL: the row was not written:", r); bad += 1
env = dict(l.rstrip("\n").split("=", 1) for l in open("db/reports/microbench_env_t.txt"))
if env.get("env.OMP_WAIT_POLICY") != "PASSIVE" or env.get("env.OPENBLAS_NUM_THREADS") != "(unset)" \
        or not env.get("weights_rotated", "").startswith("a GEMM's operands") \
        or not env.get("caches_between_calls", "").startswith("a row timed alone that is not a GEMM"):
    print("FAIL: env record", env); bad += 1
print("ok" if not bad else "FAIL")
sys.exit(1 if bad else 0)
PY
