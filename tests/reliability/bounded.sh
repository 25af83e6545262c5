#!/usr/bin/env bash
# Bounded work from small inputs (docs/reliability.md guarantee 12).  Each
# case once took seconds to minutes; each must now end well inside the
# timeout (a hang guard, not a speed measurement) with the right result:
#  1. a kernel_details header of 200,000 columns (the duplicate check was
#     quadratic: 28 s), parsed; and a database table that wide, checked;
#  2. a duplicate among those columns is still found, at its position;
#  3. YAML nested 200,000 levels (flow) and 3,000 levels (block) as the
#     database's op_mapping.yaml and as --grid-config: refused at level 65
#     with file:line:col (13 s and more than 60 s before);
#  4. a large (37 MB) valid trace under a memory limit: trace-to-csv says "out of
#     memory loading the trace (N bytes)", not "invalid JSON: " with no reason;
#     parse streams it and succeeds.
#   usage: bounded.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
P=$PERFDB
T=30
python3 - "$WORK" <<'PY'
import sys
w = sys.argv[1]
cols = ["Type", "Input Shapes", "Output Shapes", "Duration(us)"] + ["c%d" % i for i in range(200000)]
cells = ["Add", '"1,2"', '"1,2"', "1.0"] + ["x"] * 200000
open(w + "/wide.csv", "w").write(",".join(cols) + "\r\n" + ",".join(cells) + "\r\n")
dup = cols[:150000] + ["c7"] + cols[150001:]
open(w + "/dup.csv", "w").write(",".join(dup) + "\r\n" + ",".join(cells) + "\r\n")
open(w + "/flow.yaml", "w").write("a: " + "[" * 200000 + "]" * 200000 + "\n")
open(w + "/block.yaml", "w").write("".join(" " * i + "k%d:\n" % i for i in range(3000)))
PY
mkdir -p "$WORK/in"; cp "$WORK/wide.csv" "$WORK/in/kernel_details.csv"
timeout $T "$P" parse -q --profiling-path "$WORK/in/kernel_details.csv" --database-path "$WORK/db" \
  >/dev/null 2>"$WORK/e"; rc=$?
[ $rc -eq 0 ] || fail "parse of a 200,000-column header: exit $rc $(head -c 300 "$WORK/e")"
mkdir -p "$WORK/wdb"; cp "$WORK/wide.csv" "$WORK/wdb/Add.csv"
timeout $T "$P" check --database-path "$WORK/wdb" >"$WORK/o" 2>&1; rc=$?
[ $rc -ne 124 ] || fail "check of a 200,000-column table hung"
grep -q "200004 columns" "$WORK/o" || fail "check of the wide table: $(head -c 300 "$WORK/o")"
echo "a 200,000-column header: parsed and checked within ${T} s"

cp "$WORK/dup.csv" "$WORK/in/kernel_details.csv"
timeout $T "$P" parse -q --profiling-path "$WORK/in/kernel_details.csv" --database-path "$WORK/db2" \
  >/dev/null 2>"$WORK/e"; rc=$?
[ $rc -eq 1 ] || fail "a duplicate column among 200,000: exit $rc"
# column = 1 + the bytes before field 150,000 (4 fixed names, 149,996 "cN," names)
col=$(python3 -c "print(1 + len(','.join(['Type','Input Shapes','Output Shapes','Duration(us)'] + ['c%d' % i for i in range(149996)])) + 1)")
grep -q "kernel_details.csv:1:$col: duplicate column 'c7' in header" "$WORK/e" ||
  fail "duplicate column message: $(cat "$WORK/e") (want column $col)"
echo "a repeated name among 200,000 columns: found at 1:$col"

D="$WORK/ydb"; mkdir -p "$D"
printf 'OP State,Input Shapes,Input Data Types,Output Shapes,Duration(us)\r\ndynamic,"""3,7""",DT_BF16,"""3,7""",1\r\n' > "$D/Add.csv"
for y in flow block; do
  cp "$WORK/$y.yaml" "$D/op_mapping.yaml"
  timeout $T "$P" grid --database-path "$D" --rows 1 --seed 1 --dry-run >/dev/null 2>"$WORK/e"; rc=$?
  [ $rc -eq 1 ] || fail "$y-nested op_mapping.yaml: exit $rc"
  grep -q "op_mapping.yaml:[0-9]*:[0-9]*: YAML nested more than 64 levels deep" "$WORK/e" ||
    fail "$y-nested op_mapping.yaml: $(cat "$WORK/e")"
  rm "$D/op_mapping.yaml"
  timeout $T "$P" grid --database-path "$D" --grid-config "$WORK/$y.yaml" --rows 1 --seed 1 --dry-run \
    >/dev/null 2>"$WORK/e"; rc=$?
  [ $rc -eq 1 ] || fail "$y-nested --grid-config: exit $rc"
  grep -q "$y.yaml:[0-9]*:[0-9]*: YAML nested more than 64 levels deep" "$WORK/e" ||
    fail "$y-nested --grid-config: $(cat "$WORK/e")"
done
grep -q "block.yaml:65:65:" "$WORK/e" || fail "the block case is refused at level 65 (line 65, col 65): $(cat "$WORK/e")"
echo "YAML nested 200,000 (flow) and 3,000 (block) levels: refused at level 65"
# ---- 4. a valid trace larger than the memory allows ----
python3 - "$WORK/big.pt.trace.json" <<'PY'
import json, sys
ev = [{"ph": "X", "cat": "kernel", "name": "k%d" % (i % 50), "ts": i, "dur": 1.5, "pid": 0,
       "tid": 7, "args": {"External id": i}} for i in range(300000)]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
size=$(stat -c %s "$WORK/big.pt.trace.json")
# the smallest address-space limit (100 MB steps) at which perfdb starts at all.
# Below it the libraries it links fail to map, and perfdb must exit, not
# hang: until 2026-12-04 it linked OpenBLAS, whose worker thread retried its
# 128 MiB buffer forever while perfdb waited for it at exit.  A start takes
# 0.03 s, so 3 s is ample and a timeout is a hang.
base=0
starts() {
  (ulimit -v "$1"; timeout 3 "$P" devices >/dev/null 2>&1); local rc=$?
  [ $rc -eq 124 ] && fail "perfdb devices hung under ulimit -v $1 (killed after 3 s)"
  return $rc
}
# an ASan build reserves terabytes of shadow memory: no limit suits it
starts 8192000 && for kb in 51200 $(seq 102400 102400 8192000); do
  if starts $kb && starts $((kb + 65536)); then base=$kb; break; fi
done
if [ $base -eq 0 ]; then
  echo "no address-space limit lets perfdb start here: the memory-limit case is skipped"
else
  # 64 MB above the edge where perfdb starts (at the edge the libraries it
  # links may hang instead of failing): still far below the trace's ~10x
  lim=$((base + 65536))
  # trace-to-csv loads the document whole: out of memory, said so
  (ulimit -v $lim; timeout $T "$P" trace-to-csv --trace "$WORK/big.pt.trace.json" \
     --output "$WORK/big.csv" >/dev/null 2>"$WORK/e"); rc=$?
  [ $rc -eq 1 ] || fail "trace-to-csv of a trace under a memory limit: exit $rc (the limit may be too loose)"
  grep -q "big.pt.trace.json: out of memory loading the trace ($size bytes)" "$WORK/e" ||
    fail "trace-to-csv under a memory limit: $(cat "$WORK/e")"
  # parse streams the trace (docs/chrome_trace.md): it fits the same limit
  (ulimit -v $lim; timeout $T "$P" parse -q --profiling-path "$WORK/big.pt.trace.json" \
     --database-path "$WORK/bigdb" >/dev/null 2>"$WORK/e"); rc=$?
  [ $rc -eq 0 ] || fail "parse of a trace under a memory limit: exit $rc: $(cat "$WORK/e")"
  n=$(ls "$WORK/bigdb" 2>/dev/null | grep -c '\.csv$')
  [ "$n" = 50 ] || fail "parse under a memory limit: $n tables, expected the 50 kernel names"
  echo "a ${size}-byte trace under a $((lim / 1024)) MB address-space limit: trace-to-csv out of memory, said so; parse streamed it"
fi
finish
