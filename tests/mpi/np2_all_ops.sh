#!/usr/bin/env bash
# mpirun -np 2: all four collectives on groups of 2 and 1 ranks, results
# checked, tables well formed, rows appended by a second run (docs/spec/comm.md
# §1, Decisions 2-3), `perfdb check` and `perfdb validate` read them.
. "$(dirname "$0")/lib.sh"
# 1000 bytes: not a power of two (all_to_all: 250 elements per peer)
args=(--num-devices 2 1 --bytes-grid 1000 1024 65536 1048576 --database-path db
      --iters 20 --warmup 3 --repeats 0)
mpirun -np 2 "$PERFDB" comm "${args[@]}" --json > run1.json 2> err1.txt || fail "run 1: $(cat err1.txt)"
tables report run1.json cases=32 dtype=DT_BF16
for t in hcom_allReduce_ hcom_allGather_ hcom_reduceScatter_ hcom_alltoallv_; do
  tables table "db/$t.csv" 8 dtype=DT_BF16 topology_tier=2
done
# n=2 rows first, then n=1, in grid order (spec §2: op -> n -> tier -> bytes)
awk -F, 'NR > 1 { printf "%s:%s ", $2, $1 } END { print "" }' db/hcom_allGather_.csv > order.txt
[ "$(cat order.txt)" = "2:1000 2:1024 2:65536 2:1048576 1:1000 1:1024 1:65536 1:1048576 " ] ||
  fail "row order: $(cat order.txt)"
ls db/reports/comm_*.json > /dev/null || fail "no run report in db/reports"
tables report "$(ls db/reports/comm_*.json | head -1)" cases=32
# a second run appends, the header stays single
mpirun -np 2 "$PERFDB" comm "${args[@]}" --quiet > run2.txt 2> err2.txt || fail "run 2: $(cat err2.txt)"
grep -q '^Completed 32 benchmarks. Results saved to db$' run2.txt || fail "last line: $(tail -1 run2.txt)"
tables table db/hcom_alltoallv_.csv 16
"$PERFDB" check --strict db/*.csv > /dev/null || fail "perfdb check --strict"
set +e
"$PERFDB" validate --csv-dir db --verbose > validate.txt
rc=$?
set -e
[ $rc -le 1 ] && grep -q '^  Result: ' validate.txt || fail "validate: rc $rc"
grep -q '^  TOTAL: 64 rows' validate.txt || fail "validate rows: $(grep TOTAL validate.txt)"
echo ok
