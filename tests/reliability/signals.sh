#!/usr/bin/env bash
# Catchable signals leave no temporary file (docs/reliability.md guarantee
# 3): parse and grid are stopped by SIGINT, SIGTERM and SIGHUP while a
# table's temporary file is open (PERFDB_TEST_FSYNC_DELAY holds the first
# write before its fsync); the process dies of the signal (exit 128+n), no
# `.*.tmp.*` file is left in the database, and every table is whole: it
# loads (check) and is either the old bytes or a complete new table.
#   usage: signals.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
P=$PERFDB
"$GEN_PROFILE" "$WORK/prof" --rows 2000 --ranks 1 --seed 3 >/dev/null || fail gen_profile
python3 "$HERE/../grid/oracle_grid.py" make-db "$WORK/base" >/dev/null || fail make-db

# start CMD in the background and signal it once a temporary file exists
stop_during_write() {   # db signal label cmd...
  local db=$1 sig=$2 label=$3; shift 3
  # a background job of a non-interactive shell starts with SIGINT ignored, which perfdb
  # honours (as it honours nohup's SIGHUP): the default disposition is restored for it here
  PERFDB_TEST_FSYNC_DELAY=3 python3 -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$@" >/dev/null 2>"$WORK/e" &
  local pid=$! i
  for i in $(seq 1 300); do
    compgen -G "$db/.*.tmp.*" >/dev/null && break
    sleep 0.01
  done
  compgen -G "$db/.*.tmp.*" >/dev/null || { fail "$label: no temporary file appeared"; kill -9 $pid; wait $pid; return; }
  kill -s "$sig" $pid
  wait $pid; local rc=$?
  local want=$((128 + $(kill -l "$sig")))
  [ $rc -eq $want ] || fail "$label: exit $rc, expected $want ($(cat "$WORK/e"))"
  local left
  left=$(find "$db" -name '.*.tmp.*' | head -3)
  [ -z "$left" ] || fail "$label: temporary files left: $left"
  "$P" check "$db" >/dev/null 2>"$WORK/e" || fail "$label: a table does not load: $(tail -1 "$WORK/e")"
}
for sig in INT TERM HUP; do
  rm -rf "$WORK/p" && mkdir "$WORK/p"
  stop_during_write "$WORK/p" $sig "parse SIG$sig" "$P" parse -q -j 1 --profiling-path "$WORK/prof" --database-path "$WORK/p"
  rm -rf "$WORK/g" && cp -r "$WORK/base" "$WORK/g"
  stop_during_write "$WORK/g" $sig "grid SIG$sig" "$P" grid -q --database-path "$WORK/g" --rows 5 --seed 1
done
echo "SIGINT, SIGTERM, SIGHUP during parse and grid writes: exit 128+n, no temporary file, every table loads"
finish
