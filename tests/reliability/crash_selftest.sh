#!/usr/bin/env bash
# The SIGKILL loop must be able to fail: a writer that rewrites a table in
# place, slowly, is killed at 10 instants and the loop must see a table that
# is neither the old nor the new one, with either check; and a loop whose
# kills never meet a write must say it is blind.
#   usage: crash_selftest.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
. "$HERE/crash_lib.sh"
B="$WORK/base"
mkdir -p "$B/db"
seq 1 2000 | sed 's/^/old,/' > "$B/db/T.csv"
cat > "$WORK/inplace.sh" <<'SH'
exec 3>db/T.csv                      # truncates in place: no temp + rename
for i in $(seq 1 2000); do echo "new,$i" >&3; [ $((i % 200)) -eq 0 ] && sleep 0.02; done
SH
KILLS=10 BLIND_MIN=10
# expect_fail NAME PATTERN: the loop just run (output in $WORK/out) must have failed with PATTERN
expect_fail() {
  if [ "$FAILS" -eq 0 ] || ! grep -q "$2" "$WORK/out"; then
    FAILS=1; echo "FAIL: the crash loop did not notice $1"; cat "$WORK/out"
    finish
  fi
  FAILS=0; grep -m1 "$2" "$WORK/out"
}
crash_loop inplace "$B" "bash '$WORK/inplace.sh'" hash > "$WORK/out"
expect_fail "a non-atomic writer (hash check)" "neither old nor new"
# the shape check (the microbench loop's) sees the same partial tables
crash_loop inplace_shape "$B" "bash '$WORK/inplace.sh'" shape > "$WORK/out"
expect_fail "a non-atomic writer (shape check)" "partial table\|neither the old table"
# A command that runs when started normally but not under the loop's exec
# ("exec VAR=1 cmd" looks for a program named VAR=1): every kill finds the
# old tables and the loop must call itself blind, not pass.
KILLS=3 BLIND_MIN=3   # the command never starts under the loop: 3 kills say as much as 30
crash_loop blind "$B" "STAY=1 bash '$WORK/inplace.sh'" hash > "$WORK/out"
expect_fail "kills that never reach a write" "blind loop"
finish
