#!/usr/bin/env bash
# Shapes are written as recorded or refused whole (docs/reliability.md
# guarantee 14): a trace dim past int64 (99999999999999999999) is kept
# verbatim in Input Shapes, and the Output Shapes perfdb derives for that
# call are left empty, never strtoll's clamp 9223372036854775807; the same
# op with ordinary dims still gets its derived output.  check then reads
# the table back cleanly.
#   usage: shapes.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
P=$PERFDB
cat >"$WORK/t.pt.trace.json" <<'JSON'
{"traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"Input Dims": [[99999999999999999999, 4], [4], []], "Input type": ["float", "float", "Scalar"]}},
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"Input Dims": [[3, 18446744073709551617], [18446744073709551617, 5]], "Input type": ["float", "float"]}},
{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 30, "dur": 5, "args": {"Input Dims": [[3, 4], [4], []], "Input type": ["float", "float", "Scalar"]}}
]}
JSON
"$P" parse -q --profiling-path "$WORK/t.pt.trace.json" --database-path "$WORK/db" >/dev/null 2>"$WORK/e" ||
  fail "parse: $(cat "$WORK/e")"
grep -rq 9223372036854775807 "$WORK/db" && fail "a clamped dim was written: $(grep -rh 9223372036854775807 "$WORK/db")"
python3 - "$WORK/db" <<'PY' || FAILS=$((FAILS + 1))
import csv, sys
rows = {}
for t in ("aten.add", "aten.mm"):
    for r in csv.DictReader(open("%s/%s.csv" % (sys.argv[1], t), newline="")):
        rows[r["Input Shapes"]] = r["Output Shapes"]
want = {'"99999999999999999999,4;4;"': '""', '"3,18446744073709551617;18446744073709551617,5"': '""',
        '"3,4;4;"': '"3,4"'}
bad = [(k, rows.get(k), v) for k, v in want.items() if rows.get(k) != v]
for k, got, v in bad:
    print("FAIL: %s: Output Shapes %r, expected %r" % (k, got, v))
sys.exit(1 if bad else 0)
PY
"$P" check "$WORK/db" >/dev/null 2>"$WORK/e" || fail "check of the written tables: $(cat "$WORK/e")"
echo "dims past int64: recorded verbatim, no output derived from them, nothing clamped"
finish
