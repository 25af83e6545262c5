#!/usr/bin/env bash
# --overhead-table (Decision 4): the listed (op, n) gets its overhead added
# to Duration(us), Min and Max; others are untouched.
. "$(dirname "$0")/lib.sh"
printf 'op,num_devices,overhead_us\r\nall_reduce,2,500.0\r\nall_reduce,16,7.7\r\n' > oh.csv
mpirun -np 2 "$PERFDB" comm --ops all_reduce all_gather --num-devices 2 --bytes-grid 1024 \
  --overhead-table oh.csv --database-path db --iters 5 --warmup 1 --repeats 0 --json \
  > run.json 2> err.txt || fail "run: $(cat err.txt)"
python3 - run.json <<'PY' || fail "overhead not applied as documented"
import json, sys
r = json.load(open(sys.argv[1]))
ar, ag = r["cases"]
assert ar["op"] == "all_reduce" and ar["overhead_us"] == 500.0, ar
# Duration = round(round(median, 2) + 500, 2)
assert ar["duration_us"] == round(round(ar["median_us"], 2) + 500, 2), ar
assert ag["overhead_us"] == 0.0 and ag["duration_us"] == round(ag["median_us"], 2), ag
assert r["options"]["overhead_table"] == "oh.csv"
PY
dur=$(awk -F, 'NR == 2 { print $5 }' db/hcom_allReduce_.csv)
awk -v d="$dur" 'BEGIN { exit !(d >= 500) }' || fail "Duration(us) $dur lacks the overhead"
echo ok
