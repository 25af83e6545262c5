#!/usr/bin/env bash
# perfdb comm-suite, single node, with a reduced device list and grid
# (Decision 5): three launches of mpirun, four tables, a JSON summary.
. "$(dirname "$0")/lib.sh"
"$PERFDB" comm-suite out --num-devices 2 --bytes-grid 1024 4096 --json \
  -- --iters 5 --warmup 1 --repeats 0 --quiet > suite.json 2> err.txt || fail "suite: $(cat err.txt)"
python3 - suite.json <<'PY' || fail "suite summary"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["ok"] and s["mode"] == "single-node" and s["world"] == 2, s
assert [l["status"] for l in s["launches"]] == [0, 0, 0], s["launches"]
assert {t["file"]: t["rows"] for t in s["tables"]} == {
    "hcom_allReduce_.csv": 2, "hcom_allGather_.csv": 2,
    "hcom_reduceScatter_.csv": 2, "hcom_alltoallv_.csv": 2}, s["tables"]
PY
for t in hcom_allReduce_ hcom_allGather_ hcom_reduceScatter_ hcom_alltoallv_; do
  tables table "out/$t.csv" 2 num_devices=2 topology_tier=2
done
echo ok
