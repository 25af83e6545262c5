#!/usr/bin/env bash
# Crash safety of perfdb parse: SIGKILL at random instants while it merges a
# second profile into a database of 36 tables (crash_lib.sh says what is
# checked after each kill).
#   usage: crash_parse.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
. "$HERE/crash_lib.sh"
B="$WORK/base"
mkdir -p "$B"
"$GEN_PROFILE" "$B/prof1" --rows 20000 --ranks 2 --operator-details --seed 1 >/dev/null
"$GEN_PROFILE" "$WORK/prof" --rows 100000 --ranks 2 --operator-details --seed 2 >/dev/null
"$PERFDB" parse -q --profiling-path "$B/prof1" --database-path "$B/db" >/dev/null || fail "first parse"
rm -rf "$B/prof1"
crash_loop parse "$B" "'$PERFDB' parse -q --profiling-path '$WORK/prof' --database-path db" hash
finish
