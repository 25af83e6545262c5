#!/usr/bin/env bash
# perfdb microbench --backend cpu under mpirun -np 2 (issue 5 scale-out):
# rows are sharded across the ranks (both ranks replay rows, none twice),
# rank 0 writes the tables, the report and the status; a run killed on every
# rank resumes from the per-rank journals without measuring again.
source "$(dirname "$0")/lib.sh"
DB="$HERE/../cli/microbench/cpu_resume/input/db"
args=(microbench --backend cpu --force-device --repeat-count 3 --row-budget 0.02)
export PERFDB_TIMESTAMP=t PERFDB_PREFLIGHT=1   # this case tests rank 0's preflight

echo "== np 2: every row measured once, by one of the ranks"
cp -r "$DB" db
mpirun -np 2 "$PERFDB" "${args[@]}" --database-path db > out.txt 2> err.txt || fail "run: $(cat err.txt)"
grep -q "^\[REPORT\] db/reports/profile_update_report_t.md" out.txt || fail "no report line: $(cat out.txt)"
[ "$(grep -c '^\[REPORT\]' out.txt)" = 2 ] || fail "only rank 0 may report: $(cat out.txt)"
grep -qx "mpi_ranks=2" db/reports/microbench_env_t.txt || fail "mpi_ranks not recorded"
# the preflight is rank 0's, once (docs/measuring.md "The preflight")
[ "$(grep -c '^\[PREFLIGHT\] other processes ' err.txt)" = 1 ] || fail "not one preflight line: $(cat err.txt)"
grep -Eq "^preflight=(quiet|busy)$" db/reports/microbench_env_t.txt || fail "preflight not recorded"
ls db/reports/ | grep -q journal && fail "journal left after a run that went through: $(ls db/reports)"
python3 - "$DB" <<'PY' || fail "sharded results"
import csv, sys
src = sys.argv[1]
rows = list(csv.DictReader(open("db/reports/microbench_rows_t.csv", newline="")))
want = []
for t in ("Add", "RmsNorm"):
    n = sum(1 for _ in csv.DictReader(open(f"{src}/{t}.csv", newline="")))
    want += [(t, str(i)) for i in range(2, n + 2)]
got = [(r["Operator"], r["Line"]) for r in rows]
assert got == want, (got, want)                       # each row once, in table order
assert all(r["Status"] == "ok" for r in rows), rows
ranks = {r["Rank"] for r in rows}
assert ranks == {"0", "1"}, ranks                      # both ranks replayed rows
# round-robin over the rows of both tables: row k (0-based) on rank k % 2
assert [r["Rank"] for r in rows] == [str(k % 2) for k in range(len(rows))]
for t in ("Add", "RmsNorm"):
    for r in csv.DictReader(open(f"db/{t}.csv", newline="")):
        assert float(r["Average Duration(us)"]) > 0, r
        assert int(r["MicroBench Samples"]) >= 3, r
PY

echo "== every rank dies after 1 measured row; --resume under np 2 reuses both journals"
rm -rf db && cp -r "$DB" db
# The first rank to exit makes mpirun end the job: the other must still get
# to finish its row, so Open MPI's default grace is back (lib.sh sets 0; the
# grace is slept in full, twice, whether or not the rank is still there)
PERFDB_TEST_EXIT_AFTER_ROWS=1 OMPI_MCA_odls_base_sigkill_timeout=1 \
  mpirun -np 2 "$PERFDB" "${args[@]}" --database-path db > out1.txt 2> err1.txt \
  && fail "the killed run exited 0"
[ -s "$(ls db/reports/microbench_journal.*.jsonl.rank0 | head -1)" ] && [ -s "$(ls db/reports/microbench_journal.*.jsonl.rank1 | head -1)" ] \
  || fail "per-rank journals missing: $(ls db/reports)"
cmp -s db/Add.csv "$DB/Add.csv" || fail "a killed run changed a table"
mpirun -np 2 "$PERFDB" "${args[@]}" --database-path db --resume > out2.txt 2> err2.txt || fail "resume: $(cat err2.txt)"
grep -q "^\[RESUME\] 2 rows taken from" err2.txt || fail "resume count: $(cat err2.txt)"
python3 - <<'PY' || fail "resumed results"
import csv
rows = list(csv.DictReader(open("db/reports/microbench_rows_t.csv", newline="")))
assert all(r["Status"] == "ok" for r in rows) and len(rows) >= 4, rows
for t in ("Add", "RmsNorm"):
    for r in csv.DictReader(open(f"db/{t}.csv", newline="")):
        assert float(r["Average Duration(us)"]) > 0, r
PY
echo "== a refusal every rank reaches (Decision 8, no --force-device) is printed once, by rank 0"
rm -rf db && cp -r "$DB" db
mpirun -np 2 "$PERFDB" microbench --backend cpu --repeat-count 3 --database-path db > out3.txt 2> err3.txt \
  && fail "a refused run exited 0"
n=$(grep -c "perfdb microbench: error: .*use --force-device to write anyway" err3.txt || true)
[ "$n" = 1 ] || fail "the refusal was printed $n times: $(cat err3.txt)"
cmp -s db/Add.csv "$DB/Add.csv" || fail "a refused run changed a table"
echo "== --require-quiet on a busy host stops every rank; rank 0 says why, once"
burners=()
trap 'kill "${burners[@]}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq "$(nproc)"); do bash -c 'while :; do :; done' & burners+=($!); done
sleep 0.2
rc=0
mpirun -np 2 "$PERFDB" "${args[@]}" --database-path db --require-quiet > out4.txt 2> err4.txt || rc=$?
kill "${burners[@]}"
[ "$rc" != 0 ] || fail "a busy host was measured under --require-quiet"
n=$(grep -c "perfdb microbench: error: the machine is busy: other processes used" err4.txt || true)
[ "$n" = 1 ] || fail "the refusal was printed $n times: $(cat err4.txt)"
cmp -s db/Add.csv "$DB/Add.csv" || fail "a refused run changed a table"
echo "ok"
