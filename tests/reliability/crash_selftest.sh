#!/usr/bin/env bash
# The SIGKILL loop must be able to fail: a writer that rewrites a table in
# place, slowly, is killed at 10 instants and the loop must see a table that
# is neither the old nor the new one.
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
KILLS=10
crash_loop inplace "$B" "bash '$WORK/inplace.sh'" hash > "$WORK/out"
if [ "$FAILS" -eq 0 ]; then
  FAILS=1; echo "FAIL: the crash loop did not notice a non-atomic writer"; cat "$WORK/out"
else
  FAILS=0; grep -m1 "neither old nor new" "$WORK/out"
fi
finish
