#!/usr/bin/env bash
# One journal per run (docs/reliability.md guarantee 16, issue 49 finding 2):
#  1. run A dies after 3 rows; run B, a whole run on the same database, then
#     goes through: A's journal is still there, and a --resume takes A's 3
#     rows (before, B truncated the shared journal at its start and deleted
#     it at its end, so the resume measured every row again);
#  2. while run C is alive, a --resume does not take C's rows (C's journal
#     is its own); once C is killed (SIGKILL), the next --resume takes them.
#   usage: journals.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
P=$PERFDB
export PERFDB_SCHED=0 PERFDB_PREFLIGHT=0 PERFDB_PROBE=0 PERFDB_PEAKS=0
DB="$HERE/../cli/microbench/cpu_resume/input/db"
mb=(microbench --backend cpu --force-device --repeat-count 2 --row-budget 0.01)
journals() { ls "$WORK/db/reports" 2>/dev/null | grep -c '^microbench_journal\.' ; }

cp -r "$DB" "$WORK/db"
PERFDB_TEST_EXIT_AFTER_ROWS=3 "$P" "${mb[@]}" --database-path "$WORK/db" >/dev/null 2>&1
[ "$(journals)" = 1 ] || fail "run A left $(journals) journals"
"$P" "${mb[@]}" --database-path "$WORK/db" >/dev/null 2>"$WORK/e" || fail "run B: $(cat "$WORK/e")"
[ "$(journals)" = 1 ] || fail "after run B: $(journals) journals (A's must stay, B's must go)"
"$P" "${mb[@]}" --database-path "$WORK/db" --resume >/dev/null 2>"$WORK/e" || fail "resume: $(cat "$WORK/e")"
grep -q "^\[RESUME\] 3 rows taken from .*microbench_journal\." "$WORK/e" || fail "resume after B: $(grep RESUME "$WORK/e")"
[ "$(journals)" = 0 ] || fail "after the resume: $(journals) journals left"
echo "a killed run's journal outlives a whole run in between, and --resume takes its 3 rows"

# 2. a live run's journal is not taken
rm -rf "$WORK/db" && cp -r "$DB" "$WORK/db"
"$P" microbench --backend cpu --force-device --repeat-count 2 --row-budget 2 --database-path "$WORK/db" \
  >/dev/null 2>&1 &
c=$!
for _ in $(seq 1 400); do
  f=$(ls "$WORK"/db/reports/microbench_journal.*.jsonl 2>/dev/null | head -1)
  [ -n "$f" ] && [ -s "$f" ] && break
  sleep 0.05
done
[ -n "$f" ] && [ -s "$f" ] || fail "run C journaled no row"
"$P" "${mb[@]}" --ops Add --database-path "$WORK/db" --resume >/dev/null 2>"$WORK/e"
grep -q "^\[RESUME\]" "$WORK/e" && fail "a resume took the rows of a live run: $(grep RESUME "$WORK/e")"
[ -e "$f" ] || fail "the live run's journal was removed"
kill -9 $c; wait $c 2>/dev/null
"$P" "${mb[@]}" --database-path "$WORK/db" --resume >/dev/null 2>"$WORK/e" || fail "resume after C: $(cat "$WORK/e")"
grep -q "^\[RESUME\] [1-9][0-9]* rows taken from .*microbench_journal\." "$WORK/e" ||
  fail "the killed run C's rows were not resumed: $(cat "$WORK/e")"
echo "a live run's journal is left alone; once it is killed, --resume takes its rows"
finish
