#!/usr/bin/env bash
# Concurrency: writers of one database directory serialise on its lock.
#  1. Two perfdb parse runs of different profiles started together on the
#     same database, 10 times: the result must be exactly "A then B" or
#     "B then A" (computed by sequential runs); a lost update (a writer
#     that read the tables before the other wrote) gives neither.
#  2. perfdb grid and perfdb writeback together, 5 times: same check.
#  3. While another process holds the lock (flock(1) on the <db> directory
#     itself, standing in for a perfdb writer), perfdb parse waits and
#     writes nothing; once the holder exits it completes.
#  4. A lock held longer than PERFDB_LOCK_TIMEOUT: exit 1 and a message
#     naming the database, the holder and the variable; nothing written.
#   usage: concurrency.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
P=$PERFDB
"$GEN_PROFILE" "$WORK/pa" --rows 20000 --ranks 2 --seed 11 >/dev/null
"$GEN_PROFILE" "$WORK/pb" --rows 20000 --ranks 2 --seed 12 --layers 3 >/dev/null
parse() { "$P" parse -q --profiling-path "$WORK/$1" --database-path "$2" >/dev/null 2>>"$WORK/err"; }
state() { tree_hashes "$1"; }

parse_a() { parse pa "$1"; }
parse_b() { parse pb "$1"; }
race "parse || parse" - 10 parse_a parse_b state

# grid || writeback on the oracle's database
G="$WORK/g"
python3 "$HERE/../grid/oracle_grid.py" make-db "$G/db0" >/dev/null || fail make-db
python3 "$HERE/gen_op_summary.py" "$G/db0" "$G/prof/PROF_000001_1/mindstudio_profiler_output/op_summary_1.csv" 5
grid() { "$P" grid --database-path "$1" --target-models Qwen/Qwen3-32B --rows 50 --seed 3 >/dev/null 2>>"$WORK/err"; }
wb() { "$P" writeback --profiling-path "$G/prof" --database-path "$1" >/dev/null 2>>"$WORK/err"; }
no_reports() { state "$1" | grep -v reports/; }
race "grid || writeback" "$G/db0" 5 grid wb no_reports

# A holder of the lock: perfdb waits, writes nothing, then completes.
D="$WORK/held"
parse pa "$D" || fail "parse"
before=$(state "$D")
mkfifo "$WORK/release.fifo"
rm -f "$WORK/ready"
flock "$D" bash -c ": > '$WORK/ready'; read -r _ < '$WORK/release.fifo'" &
holder=$!
until [ -e "$WORK/ready" ]; do sleep 0.05; done   # the holder has the lock
PERFDB_LOCK_TIMEOUT=600 "$P" parse -q --profiling-path "$WORK/pb" --database-path "$D" >/dev/null 2>"$WORK/held.err" &
waiter=$!
sleep 1
kill -0 $waiter 2>/dev/null || fail "perfdb did not wait for the lock"
[ "$(state "$D")" = "$before" ] || fail "perfdb wrote while another process held the lock"
echo go > "$WORK/release.fifo"
wait $holder
wait $waiter || fail "perfdb failed after the lock was released: $(cat "$WORK/held.err")"
[ "$(state "$D")" != "$before" ] || fail "perfdb wrote nothing after the lock was released"
echo "a held lock: perfdb waited and wrote nothing, then completed"

# A lock held past the timeout.
before=$(state "$D")
rm -f "$WORK/ready"
flock "$D" bash -c ": > '$WORK/ready'; read -r _ < '$WORK/release.fifo'" &
holder=$!
until [ -e "$WORK/ready" ]; do sleep 0.05; done   # the holder has the lock
hpid=$holder   # flock(1) itself took it: /proc/locks names that pid
PERFDB_LOCK_TIMEOUT=1 "$P" parse -q --profiling-path "$WORK/pa" --database-path "$D" >/dev/null 2>"$WORK/to.err"
rc=$?
echo go > "$WORK/release.fifo"; wait $holder
[ $rc -eq 1 ] || fail "lock timeout: exit $rc, expected 1"
want="perfdb parse: error: database '$D' is locked by another perfdb process (pid $hpid: flock); gave up after 1 s (set PERFDB_LOCK_TIMEOUT to wait longer)"
[ "$(cat "$WORK/to.err")" = "$want" ] || fail "lock timeout message: $(cat "$WORK/to.err") (want: $want)"
[ "$(state "$D")" = "$before" ] || fail "a run that timed out on the lock changed the database"
[ -z "$(temps "$D")" ] || fail "temporary files left: $(temps "$D")"
echo "lock timeout: $(cat "$WORK/to.err")"
finish
