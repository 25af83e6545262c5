#!/usr/bin/env bash
# Runs one CLI golden case: tests/cli/<cmd>/<case>/
#   cmd               the command line (bash), run with $PERFDB set to the binary,
#                     in a scratch copy of the case's input/ directory ($CASE
#                     points at the case directory); `perfdb` is a function for $PERFDB
#   expected_stdout   exact stdout (optional; absent = not compared)
#   expected_stderr   exact stderr (optional)
#   expected_status   exit status (default 0)
#   expected_files/   files that must exist afterwards with exactly this content
#                     (paths relative to the scratch directory)
# Placeholders in expected files: @WORK@ = the scratch directory.
set -u
PERFDB=$1
CASE=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-cli.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
[ -d "$CASE/input" ] && cp -a "$CASE/input/." "$WORK/"
export PERFDB CASE WORK
export PERFDB_DATA_ROOT="$WORK/no-such-root"   # never touch a real database
unset PERFDB_DEVICES PERFDB_LOCK_TIMEOUT ASCEND_HOME_PATH
# Whether a block of samples is judged contended depends on the machine's load
# (ctest -j runs cases side by side), so exact golden output judges none; the
# contention cases set PERFDB_SCHED=1 and check by rule (docs/replay.md "Contention").
export PERFDB_SCHED=0 PERFDB_PREFLIGHT=0 PERFDB_PROBE=0   # no preflight window, no bandwidth probe: cases that test them set 1
# The machine's quiet figures (docs/measuring.md "The preflight"): the case's own.
export PERFDB_STATE_DIR="$WORK/.state"
cd "$WORK"
perfdb() { "$PERFDB" "$@"; }
export -f perfdb
bash -c "$(cat "$CASE/cmd")" >"$WORK/.stdout" 2>"$WORK/.stderr"
status=$?
fail=0
want_status=0
[ -f "$CASE/expected_status" ] && want_status=$(cat "$CASE/expected_status")
if [ "$status" != "$want_status" ]; then
  echo "exit status $status, expected $want_status"; fail=1
fi
compare() {  # expected actual label
  local exp
  exp=$(sed "s|@WORK@|$WORK|g" "$1")
  if [ "$exp" != "$(cat "$2")" ]; then
    echo "--- $3 differs (expected vs actual):"
    diff <(printf '%s\n' "$exp") "$2" | head -40
    fail=1
  fi
}
[ -f "$CASE/expected_stdout" ] && compare "$CASE/expected_stdout" "$WORK/.stdout" stdout
[ -f "$CASE/expected_stderr" ] && compare "$CASE/expected_stderr" "$WORK/.stderr" stderr
if [ -d "$CASE/expected_files" ]; then
  while IFS= read -r -d '' f; do
    rel=${f#"$CASE/expected_files/"}
    if ! cmp -s "$f" "$WORK/$rel"; then
      echo "--- file $rel differs or is missing"; fail=1
    fi
  done < <(find "$CASE/expected_files" -type f -print0)
fi
if [ $fail -ne 0 ]; then
  echo "--- stdout:"; head -40 "$WORK/.stdout"
  echo "--- stderr:"; head -40 "$WORK/.stderr"
  exit 1
fi
exit 0
