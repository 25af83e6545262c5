#!/usr/bin/env bash
# Crash safety of perfdb grid: SIGKILL at random instants while it adds 200
# rows per kernel type to the oracle's database (about 80 tables).
#   usage: crash_grid.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
. "$HERE/crash_lib.sh"
B="$WORK/base"
mkdir -p "$B"
python3 "$HERE/../grid/oracle_grid.py" make-db "$B/db" >/dev/null || fail "make-db"
crash_loop grid "$B" "'$PERFDB' grid --database-path db --target-models deepseek-ai/DeepSeek-V3,Qwen/Qwen3-32B --rows 200 --seed 1" hash
finish
