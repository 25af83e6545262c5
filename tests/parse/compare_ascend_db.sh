#!/usr/bin/env bash
# Ascend SQLite profiles (issue 48 part 2; docs/parse.md "Ascend SQLite
# profiles"): fixtures built by tests/parse/gen_ascend_db.py from the
# published schema, never by hand.
#  1. a database and the kernel_details.csv that describe the same profile
#     (its TASK rows shuffled, the CSV in time order) parse into byte-identical
#     tables, as a file and as a profiling directory, in both schema versions
#     the generator writes (old: no opState; its CSV has OP State, so only
#     that column may differ there);
#  2. each malformed database is one line on stderr that names it, exit 1,
#     no database written, the input's bytes unchanged and nothing beside it;
#  3. a directory holding both exports is read once, from the CSV, with a
#     warning that the .db was ignored.
#   usage: compare_ascend_db.sh PERFDB
set -u
P=$(readlink -f "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
GEN="$HERE/gen_ascend_db.py"
W=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-ascend-db.XXXXXX")
trap 'rm -rf "$W"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cd "$W" || exit 1

mkdir -p p/PROF_1/ASCEND_PROFILER_OUTPUT c
python3 "$GEN" p/PROF_1/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db --csv c/kernel_details.csv --tasks 3000 --seed 5 --shuffle
"$P" parse -q --profiling-path c --database-path from_csv >/dev/null 2>&1 || fail "parse of the CSV"
"$P" parse -q --profiling-path p --database-path from_dir >/dev/null 2>e || fail "parse of the directory: $(cat e)"
"$P" parse -q --profiling-path p/PROF_1/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db \
  --database-path from_file >/dev/null 2>e || fail "parse of the .db: $(cat e)"
diff -r from_csv from_dir >/dev/null || fail "the directory's tables differ from the CSV's: $(diff -r from_csv from_dir | head -5)"
diff -r from_csv from_file >/dev/null || fail "the .db's tables differ from the CSV's"
[ "$(ls from_csv | grep -c '\.csv$')" -ge 5 ] || fail "too few tables: $(ls from_csv)"
echo "same profile, CSV and SQLite: identical, $(ls from_csv | grep -c '\.csv$') tables, $(cat from_csv/*.csv | grep -c '') lines"

# COMPUTE_TASK_INFO is read in chunks of 8,192 rowids on two threads
# (ascend_db_info.c): 40,000 tasks are five chunks; without a rowid, or with
# rowids too sparse to size an array by, it is read in one pass instead.
# The shuffled tasks are put in time order by a radix sort of one 64-bit key,
# or by qsort when the starts span too much for one (early_task; the order
# itself is checked by unit.test_ascend_db_sort).  Each way gives the CSV's
# tables.
for v in "chunks:" "without_rowid:--without-rowid" "sparse:--gtid-step 100000" "early_task:--early-task"; do
  name=${v%%:*}
  mkdir -p "$name" "${name}_csv"
  python3 "$GEN" "$name/msprof_0.db" --csv "${name}_csv/kernel_details.csv" --tasks 40000 --seed 9 --shuffle ${v#*:}
  "$P" parse -q --profiling-path "$name" --database-path "from_$name" >/dev/null 2>e || fail "$name: $(cat e)"
  "$P" parse -q --profiling-path "${name}_csv" --database-path "from_${name}_csv" >/dev/null 2>&1 || fail "$name: the CSV"
  diff -r "from_$name" "from_${name}_csv" >/dev/null || fail "$name: the .db's tables differ from the CSV's"
  echo "$name: 40000 tasks, identical to the CSV"
done
# two bad rows in different chunks: the error names the first, every time
mkdir -p twice
python3 "$GEN" twice/msprof_0.db --tasks 40000 --seed 9 --broken wrong_type_twice
for i in 1 2 3 4 5; do
  "$P" parse -q --profiling-path twice --database-path o_twice >/dev/null 2>e && fail "two bad rows: parsed"
  grep -q "COMPUTE_TASK_INFO.opType of task 10001 holds text" e || fail "two bad rows, run $i: $(cat e)"
  [ ! -e o_twice ] || fail "two bad rows: a database was written"
done
echo "two bad rows in different chunks: the first is named, 5 runs of 5"

mkdir -p old oc
python3 "$GEN" old/msprof_1.db --csv oc/kernel_details.csv --tasks 500 --seed 6 --old-schema --shuffle
"$P" parse -q --profiling-path old --database-path from_old >/dev/null 2>e || fail "old schema: $(cat e)"
"$P" parse -q --profiling-path oc --database-path from_oc >/dev/null 2>&1 || fail "old schema's CSV"
python3 - from_old from_oc <<'PY' || fail "old schema: tables differ beyond OP State"
import csv, os, sys
a, b = sys.argv[1:]
assert sorted(os.listdir(a)) == sorted(os.listdir(b))
for f in os.listdir(a):
    if not f.endswith(".csv"):
        continue
    ra = list(csv.DictReader(open(os.path.join(a, f), newline="")))
    rb = list(csv.DictReader(open(os.path.join(b, f), newline="")))
    assert len(ra) == len(rb), f
    for x, y in zip(ra, rb):
        assert x["OP State"] == "" and y["OP State"] == "dynamic", (f, x["OP State"])
        x.pop("OP State"), y.pop("OP State")
        assert x == y, (f, x, y)
PY
echo "old schema (no opState): identical but for OP State"

for k in missing_table missing_column wrong_type dangling_id truncated wal not_sqlite; do
  mkdir -p "b_$k"
  python3 "$GEN" "b_$k/msprof_1.db" --tasks 300 --broken "$k"
  before=$(cd "b_$k" && ls && md5sum *)
  "$P" parse -q --profiling-path "b_$k/msprof_1.db" --database-path "o_$k" >/dev/null 2>e; rc=$?
  [ $rc -eq 1 ] || fail "$k: exit $rc"
  [ "$(grep -c '' e)" -eq 1 ] || fail "$k: not one line: $(cat e)"
  grep -q "^perfdb parse: error: b_$k/msprof_1.db" e || fail "$k: the message does not name the file: $(cat e)"
  [ ! -e "o_$k" ] || fail "$k: a database was written"
  [ "$(cd "b_$k" && ls && md5sum *)" = "$before" ] || fail "$k: the input changed or got a neighbour"
  echo "$k: $(cut -c1-150 e)"
done

mkdir -p both
python3 "$GEN" both/msprof_1.db --csv both/kernel_details.csv --tasks 200 --seed 7
"$P" parse --profiling-path both --database-path from_both >out 2>e || fail "both exports: $(cat e)"
grep -q "1 Ascend SQLite profile(s) (\*.db) ignored" e || fail "both exports: no warning: $(cat e)"
grep -q "200 rows" e || fail "both exports: read other than once: $(cat e)"
echo "both exports in one directory: read once, from the CSV, and said"
[ $fails -eq 0 ] && echo ok
exit $((fails > 0))
