#!/usr/bin/env bash
# Writeback memory follows the measurements, not the table (docs/reliability.md
# guarantee 17, issue 49 finding 9): a 200,000-row table (about 30 MB, 67
# columns, most of them empty counters as writeback's own layout leaves
# them) takes 1,000 measurements, 100 of them new rows.  The table is merged
# as it streams, so the run's peak RSS exceeds that of the same writeback on
# a 1,000-row table by at most 2x the big table's size (it held about
# 14 KB per row before: 2.76 GB for 200,000 rows).  The merged table is
# checked by Python: matched rows measured, every other row kept cell for
# cell, the new rows appended.
#   usage: writeback_memory.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
P=$PERFDB
asan=0
ldd "$P" 2>/dev/null | grep -q libasan && asan=1
python3 - "$WORK" <<'PY'
import os, sys
w = sys.argv[1]
base = ["OP State", "Accelerator Core", "Input Shapes", "Input Data Types", "Input Formats",
        "Output Shapes", "Output Data Types", "Output Formats", "Average Duration(us)",
        "MicroBench Min Duration(us)", "MicroBench Median Duration(us)", "MicroBench Std Duration(us)",
        "MicroBench Samples", "Profiling Average Duration(us)", "Profiling Median Duration(us)",
        "Profiling Std Duration(us)"]
cols = base + ["c%d" % i for i in range(67 - len(base))]
def row(i):
    return ['dynamic', 'AI_VECTOR_CORE', '"%d,128;%d,128"' % (i, i), 'DT_BF16;DT_BF16', 'ND;ND',
            '"%d,128"' % i, 'DT_BF16', 'ND', '' if i % 3 else '2.5', '', '', '', '', '10.0', '', ''] + [''] * (len(cols) - len(base))
for name, n in (("big", 200000), ("small", 1000)):
    os.makedirs("%s/%s" % (w, name))
    with open("%s/%s/Add.csv" % (w, name), "w", newline="") as f:
        f.write(",".join(cols) + "\r\n")
        for i in range(1, n + 1):
            f.write(",".join(row(i)) + "\r\n")
d = "%s/prof/PROF_000001_20260101/mindstudio_profiler_output" % w
os.makedirs(d)
with open(d + "/op_summary_20260101000000.csv", "w") as f:
    f.write("Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,"
            "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats\n")
    # rows 1..900 measured (every tenth of the first 9,000), and 100 shapes no table row has
    for k, i in enumerate(list(range(10, 9001, 10)) + list(range(300001, 300101))):
        f.write('a%d,Add,AI_VECTOR_CORE,%d,5.0,0,8,"%d,128;%d,128",DT_BF16;DT_BF16,ND;ND,"%d,128",DT_BF16,ND\n'
                % (k, k, i, i, i))
PY
for name in small big; do
  measured "$WORK/t_$name" "$P" writeback --profiling-path "$WORK/prof" --database-path "$WORK/$name" \
    --update-mode all 2>"$WORK/e_$name"
  read -r rc secs kb <"$WORK/t_$name"
  [ $rc -eq 0 ] || fail "writeback into the $name table: exit $rc $(head -c 300 "$WORK/e_$name")"
  eval "kb_$name=$kb"
done
size=$(stat -c %s "$WORK/big/Add.csv")
echo "writeback peak RSS: $kb_small KB on 1,000 rows, $kb_big KB on 200,000 rows (the merged table: $((size / 1024)) KB)"
if [ $asan -eq 0 ]; then
  [ $((kb_big - kb_small)) -le $((2 * size / 1024)) ] ||
    fail "200,000 rows cost $((kb_big - kb_small)) KB more than 1,000: over 2x the table ($((2 * size / 1024)) KB)"
fi
python3 - "$WORK/big/Add.csv" <<'PY' || fail "the merged table"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
hdr, body = rows[0], rows[1:]
assert len(body) == 200100, len(body)
col = {c: i for i, c in enumerate(hdr)}
for i, r in enumerate(body[:200000], 1):
    measured = i % 10 == 0 and i <= 9000
    want = "5.000000" if measured else ("" if i % 3 else "2.5")
    assert r[col["Average Duration(us)"]] == want, (i, r)
    assert r[col["Input Shapes"]] == "%d,128;%d,128" % (i, i), (i, r)
    assert r[col["MicroBench Samples"]] == ("1" if measured else ""), (i, r)
for k, r in enumerate(body[200000:]):
    assert r[col["Input Shapes"]] == "%d,128;%d,128" % (300001 + k, 300001 + k), r
    assert r[col["Average Duration(us)"]] == "5.000000", r
print("merged: 900 rows measured, 199,100 kept, 100 appended")
PY
finish
