#!/usr/bin/env bash
# Crash safety of the microbench writeback: SIGKILL at random instants
# during (1) perfdb writeback of an msprof op_summary covering every row of a
# 36-table database (deterministic: checked by hash) and (2) perfdb
# microbench --backend cpu replaying and writing back a small database
# (measured values differ run to run: checked for complete tables).
#   usage: crash_writeback.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
. "$HERE/crash_lib.sh"
B="$WORK/wb"
mkdir -p "$B"
"$GEN_PROFILE" "$WORK/prof1" --rows 20000 --ranks 2 --operator-details --seed 1 >/dev/null
"$PERFDB" parse -q --profiling-path "$WORK/prof1" --database-path "$B/db" >/dev/null || fail "parse"
python3 "$HERE/gen_op_summary.py" "$B/db" "$WORK/wprof/PROF_000001_1/mindstudio_profiler_output/op_summary_1.csv"
crash_loop writeback "$B" "'$PERFDB' writeback --profiling-path '$WORK/wprof' --database-path db" hash

M="$WORK/mb"
mkdir -p "$M"
cp -a "$HERE/../cli/microbench/cpu_resume/input/db" "$M/db"
# PERFDB_PROBE=0 PERFDB_PREFLIGHT=0: the memory-bandwidth probe before each row (docs/replay.md)
# is half of each run's time here, and the preflight's 0.5 s window would be most of it, both
# writing nothing; the kill instants then fall on the rows and the writeback
crash_loop microbench "$M" "env PERFDB_PROBE=0 PERFDB_PREFLIGHT=0 '$PERFDB' microbench --backend cpu --force-device --database-path db --repeat-count 2 --row-budget 0.01" shape
finish
