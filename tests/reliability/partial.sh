#!/usr/bin/env bash
# No partial success without saying so (docs/reliability.md guarantee 10):
#  1. writeback with <db>/reports a regular file, or a link out of the
#     database: exit 1 naming it, before any table is replaced; nothing is
#     written outside.
#  2. A bad PERFDB_TIMESTAMP (a path): exit 2, the database untouched.
#  3. parse into a database one of whose tables cannot be replaced (chattr
#     +i, where permitted): exit 1, and the message lists exactly the tables
#     that were replaced before the error.
#   usage: partial.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
P=$PERFDB
D="$WORK/db"
python3 "$HERE/../grid/oracle_grid.py" make-db "$D" >/dev/null || fail make-db
python3 "$HERE/gen_op_summary.py" "$D" "$WORK/ops/PROF_000001_1/mindstudio_profiler_output/op_summary_1.csv" 2

: > "$D/reports"
before=$(tree_hashes "$D")
"$P" writeback --profiling-path "$WORK/ops" --database-path "$D" >/dev/null 2>"$WORK/e"; rc=$?
[ $rc -eq 1 ] || fail "writeback with reports a file: exit $rc"
grep -q "'$D/reports' is not a directory" "$WORK/e" || fail "reports a file: $(cat "$WORK/e")"
[ "$(tree_hashes "$D")" = "$before" ] || fail "writeback replaced tables, then failed on reports"
rm "$D/reports"; mkdir "$WORK/outside"; ln -s ../outside "$D/reports"
before=$(tree_hashes "$D")
"$P" writeback --profiling-path "$WORK/ops" --database-path "$D" >/dev/null 2>"$WORK/e"; rc=$?
[ $rc -eq 1 ] || fail "writeback with reports a link: exit $rc"
grep -q "'$D/reports' is not a directory" "$WORK/e" || fail "reports a link: $(cat "$WORK/e")"
[ -z "$(ls -A "$WORK/outside")" ] || fail "a report was written outside the database"
[ "$(tree_hashes "$D")" = "$before" ] || fail "writeback replaced tables, then failed on reports"
rm "$D/reports"
echo "reports/ a file or a link: writeback exit 1 before any table"

for ts in ../x /../../../escaped/evil; do
  PERFDB_TIMESTAMP=$ts "$P" writeback --profiling-path "$WORK/ops" --database-path "$D" >/dev/null 2>"$WORK/e"
  rc=$?
  [ $rc -eq 2 ] || fail "PERFDB_TIMESTAMP=$ts: exit $rc"
  [ "$(tree_hashes "$D")" = "$before" ] || fail "PERFDB_TIMESTAMP=$ts changed the database"
done
[ ! -e "$WORK/escaped" ] && [ ! -e "$WORK/x" ] || fail "a report escaped the database"
echo "PERFDB_TIMESTAMP naming a path: exit 2, nothing written"

# an immutable table in the middle of a parse
"$GEN_PROFILE" "$WORK/p1" --rows 3000 --ranks 1 --seed 1 >/dev/null
"$GEN_PROFILE" "$WORK/p2" --rows 3000 --ranks 1 --seed 2 >/dev/null
I="$WORK/imm"
"$P" parse -q --profiling-path "$WORK/p1" --database-path "$I" >/dev/null 2>&1 || fail "parse"
victim=$(ls "$I" | sort | sed -n 5p)
if chattr +i "$I/$victim" 2>/dev/null; then
  for f in "$I"/*.csv; do sha256sum "$f"; done > "$WORK/h.before"
  "$P" parse -q --profiling-path "$WORK/p2" --database-path "$I" >/dev/null 2>"$WORK/e"; rc=$?
  chattr -i "$I/$victim"
  [ $rc -eq 1 ] || fail "parse with an immutable table: exit $rc"
  grep -q "cannot replace '$I/$victim'" "$WORK/e" || fail "immutable table message: $(cat "$WORK/e")"
  # the tables the message names are exactly those whose bytes changed
  named=$(sed -n 's/.*had been replaced before the error: //p' "$WORK/e" | tr ',' '\n' |
    sed 's/^ //' | sort)
  changed=$(for f in "$I"/*.csv; do sha256sum "$f"; done | diff - "$WORK/h.before" |
    sed -n 's/^< [0-9a-f]*  //p' | sort)
  [ -n "$changed" ] || fail "no table was replaced before the error: the check would be blind"
  [ "$named" = "$changed" ] || fail "replaced tables named: [$named], changed: [$changed]"
  echo "immutable $victim: parse exit 1 naming the $(echo "$changed" | wc -l) tables replaced before it"
else
  echo "chattr +i not permitted here: the immutable-table case is skipped"
fi
finish
