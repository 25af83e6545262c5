#!/usr/bin/env bash
# DispatchFFNCombine (collective) under mpirun -np 2 with
# --dispatch-ffn-combine-ep-size 2: the EP-2 rows are replayed by both ranks
# together (positive durations written by rank 0), the EP-16 row is kept
# without replay by the skip hook, its cells untouched; without mpirun an
# EP-2 row is refused with the launch hint, and an EP size that differs
# from the rank count is refused on every rank.  tests/mpi/dfc_check.c then
# checks the op's output under np 2 and np 3 against a per-rank reference.
source "$(dirname "$0")/lib.sh"
DB="$HERE/microbench_dfc/db"
args=(microbench --backend cpu --force-device --ops DispatchFFNCombine --repeat-count 3 --row-budget 0.05)
export PERFDB_TIMESTAMP=t

echo "== np 2, EP 2: rows of EP Size 2 measured, the EP-16 row skipped"
cp -r "$DB" db
mpirun -np 2 "$PERFDB" "${args[@]}" --database-path db --dispatch-ffn-combine-ep-size 2 > out.txt 2> err.txt \
  || fail "run: $(cat err.txt)"
python3 - "$DB" <<'PY' || fail "EP-2 results"
import csv, sys
src = list(csv.DictReader(open(f"{sys.argv[1]}/DispatchFFNCombine.csv", newline="")))
rows = list(csv.DictReader(open("db/reports/microbench_rows_t.csv", newline="")))
st = {r["Line"]: r for r in rows}
assert st["2"]["Status"] == "ok" and st["3"]["Status"] == "ok", rows
assert st["4"]["Status"] == "skipped", rows
assert st["4"]["Reason"] == "EP Size 16 differs from the run's --dispatch-ffn-combine-ep-size 2", rows
out = list(csv.DictReader(open("db/DispatchFFNCombine.csv", newline="")))
assert len(out) == 3, out
for r in out[:2]:
    assert r["EP Size"] == "2" and float(r["Average Duration(us)"]) > 0, r
    assert int(r["MicroBench Samples"]) >= 3, r
# the skipped row keeps every cell it had, and gets no measurement
for k, v in src[2].items():
    assert out[2][k] == v, (k, out[2][k], v)
assert out[2]["Average Duration(us)"] == "", out[2]
PY

echo "== single process, EP 2: refused with the mpirun hint, nothing written"
rm -rf db && cp -r "$DB" db
"$PERFDB" "${args[@]}" --database-path db --dispatch-ffn-combine-ep-size 2 > out1.txt 2> err1.txt || true
python3 - <<'PY' || fail "single-process refusal: $(cat err1.txt)"
import csv
rows = {r["Line"]: r for r in csv.DictReader(open("db/reports/microbench_rows_t.csv", newline=""))}
for line in ("2", "3"):
    assert rows[line]["Status"] == "failed", rows
    assert "mpirun -np 2" in rows[line]["Reason"], rows[line]
assert rows["4"]["Status"] == "skipped", rows
PY

echo "== np 2, EP 16: the EP-16 row refused on both ranks (mpirun -np 16), EP-2 rows skipped"
rm -rf db && cp -r "$DB" db
mpirun -np 2 "$PERFDB" "${args[@]}" --database-path db --dispatch-ffn-combine-ep-size 16 > out2.txt 2> err2.txt || true
python3 - <<'PY' || fail "EP-16 refusal: $(cat err2.txt)"
import csv
rows = {r["Line"]: r for r in csv.DictReader(open("db/reports/microbench_rows_t.csv", newline=""))}
assert rows["2"]["Status"] == "skipped" and rows["3"]["Status"] == "skipped", rows
assert rows["4"]["Status"] == "failed" and "mpirun -np 16" in rows["4"]["Reason"], rows
PY
echo "== np 2 and np 3: out0 against a per-rank reference (dfc_check)"
CHECK="$(dirname "$PERFDB")/../tests/dfc_check"
[ -x "$CHECK" ] || fail "no $CHECK: build the dfc_check target"
mpirun -np 2 "$CHECK" > chk2.txt 2>&1 || fail "dfc_check np 2: $(cat chk2.txt)"
[ "$(grep -c 'max relative error' chk2.txt)" = 2 ] || fail "dfc_check np 2: $(cat chk2.txt)"
mpirun -np 3 --oversubscribe "$CHECK" > chk3.txt 2>&1 || fail "dfc_check np 3: $(cat chk3.txt)"
[ "$(grep -c 'max relative error' chk3.txt)" = 3 ] || fail "dfc_check np 3: $(cat chk3.txt)"
echo "ok"
