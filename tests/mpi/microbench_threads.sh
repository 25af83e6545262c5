#!/usr/bin/env bash
# One thread count per run under mpirun (docs/replay.md "Threads and
# libraries"): --threads defaults to each rank's usable CPUs, so ranks
# bound to masks of other sizes would measure rows of one table with
# different thread counts.  Such a run is refused before any row: exit 1,
# one line naming the range and the way out, the database untouched.
# With --threads, or with masks of one size, the same ranks run.
source "$(dirname "$0")/lib.sh"
DB="$HERE/../cli/microbench/cpu_resume/input/db"
[ "$(nproc)" -ge 2 ] || { echo "SKIP: needs 2 CPUs for masks of two sizes"; exit 77; }
args=(microbench --backend cpu --force-device --repeat-count 2 --row-budget 0.01 --database-path db)
export PERFDB_TIMESTAMP=t
cp -r "$DB" db
(cd db && find . -type f | sort | xargs md5sum) > before

echo "== rank 0 on one CPU, rank 1 on two: refused"
rc=0
mpirun -np 1 taskset -c 0 "$PERFDB" "${args[@]}" : -np 1 taskset -c 0,1 "$PERFDB" "${args[@]}" \
  > out.txt 2> err.txt || rc=$?
[ "$rc" = 1 ] || fail "exit $rc, want 1: $(cat err.txt)"
n=$(grep -c "^perfdb microbench: error: the ranks would measure with 1 to 2 threads" err.txt || true)
[ "$n" = 1 ] || fail "want the error once (rank 0): $(cat err.txt)"
grep -q -- "--threads" err.txt || fail "the error names no way out: $(cat err.txt)"
(cd db && find . -type f | sort | xargs md5sum) | cmp -s - before || fail "the database changed"

echo "== the same masks with --threads 1: both ranks measure"
mpirun -np 1 taskset -c 0 "$PERFDB" "${args[@]}" --threads 1 : -np 1 taskset -c 0,1 "$PERFDB" "${args[@]}" \
  --threads 1 > out.txt 2> err.txt || fail "run: $(cat err.txt)"
grep -qx "threads=1" db/reports/microbench_env_t.txt || fail "threads not recorded as 1"
python3 - <<'PY' || fail "rows"
import csv
rows = list(csv.DictReader(open("db/reports/microbench_rows_t.csv", newline="")))
assert rows and all(r["Status"] == "ok" and r["Threads"] == "1" for r in rows), rows
assert {r["Rank"] for r in rows} == {"0", "1"}, rows
PY
echo ok
