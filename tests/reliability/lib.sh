# Shared helpers of tests/reliability/*.sh (sourced; not a test itself).
# Every script is run as: bash <script> PERFDB GEN_PROFILE
set -u
PERFDB=$1
GEN_PROFILE=${2:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-rel.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export PERFDB_DATA_ROOT="$WORK/no-such-root"   # never touch a real database
unset PERFDB_DEVICES PERFDB_LOCK_TIMEOUT ASCEND_HOME_PATH
export PERFDB_TIMESTAMP=t
FAILS=0

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
finish() {
  if [ "$FAILS" -ne 0 ]; then echo "$FAILS failure(s)"; exit 1; fi
  echo "ok"; exit 0
}
now() { date +%s.%N; }

# measured OUT CMD...: run CMD (stdout discarded, stderr the caller's) and
# write "<exit status> <wall seconds> <peak RSS KiB>" to OUT, from Python's
# wait4 accounts (no /usr/bin/time needed).
measured() {
  python3 - "$@" <<'PY'
import os, subprocess, sys, time
t0 = time.monotonic()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
open(sys.argv[1], "w").write("%d %.3f %d\n" % (os.waitstatus_to_exitcode(status), time.monotonic() - t0, ru.ru_maxrss))
PY
}
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# table_hashes DIR [MAP]: sets TH to "name sha256" lines, one per table
# (top-level *.csv) in glob order, and fills the associative array named
# MAP (when given) with name -> sha256.  One sha256sum and no command
# substitution: the kill loops call it twice per kill, and each process
# costs ~5 ms on these VMs.
table_hashes() {
  local f=("$1"/*.csv) h p
  TH=
  if [ -n "${2:-}" ]; then local -n map=$2; map=(); fi
  [ -e "${f[0]}" ] || return 0
  while read -r h p; do
    TH+="${p##*/} $h"$'\n'
    [ -z "${2:-}" ] || map[${p##*/}]=$h
  done < <(sha256sum -- "${f[@]}")
}

# temps DIR: temporary files of the atomic writes under DIR.
temps() { find "$1" -name '.*.tmp.*' 2>/dev/null | sort; }

# lock_free DIR: the database lock can be taken at once.
lock_free() { flock -n "$1" true; }

# race NAME BASE ROUNDS A B STATE: A and B are functions that write the
# database directory given as their argument; STATE prints a directory's
# state.  Both serial orders run on copies of BASE ("-": no directory, the
# writers create it) and must differ (else the check would be blind); then
# ROUNDS times A and B start together on a fresh copy, and each result must
# equal one of the serial orders (a lost update matches neither).
race() {
  local name=$1 base=$2 rounds=$3 a=$4 b=$5 st=$6 d
  # $PERFDB_RELIABILITY_ROUNDS caps the rounds (the sanitizer build's, as
  # its kills: CMakeLists.txt); both serial orders are always run
  if [ -n "${PERFDB_RELIABILITY_ROUNDS:-}" ] && [ "$PERFDB_RELIABILITY_ROUNDS" -lt "$rounds" ]; then
    rounds=$PERFDB_RELIABILITY_ROUNDS
  fi
  local AB BA s i pa pb n_ab=0 n_ba=0
  fresh() { if [ "$base" != - ]; then cp -a "$base" "$1"; fi; }
  d=$(mktemp -d "$WORK/race.XXXXXX"); fresh "$d/ab"; fresh "$d/ba"
  $a "$d/ab" && $b "$d/ab" && $b "$d/ba" && $a "$d/ba" ||
    { fail "$name: the serial runs failed: $(cat "$WORK/err")"; return; }
  AB=$($st "$d/ab"); BA=$($st "$d/ba")
  [ "$AB" != "$BA" ] || fail "$name: both orders give the same database: the check would be blind"
  for i in $(seq 1 "$rounds"); do
    fresh "$d/r$i"
    $a "$d/r$i" & pa=$!
    $b "$d/r$i" & pb=$!
    wait $pa || fail "$name: $a (round $i) failed: $(cat "$WORK/err")"
    wait $pb || fail "$name: $b (round $i) failed: $(cat "$WORK/err")"
    s=$($st "$d/r$i")
    if [ "$s" = "$AB" ]; then n_ab=$((n_ab + 1))
    elif [ "$s" = "$BA" ]; then n_ba=$((n_ba + 1))
    else fail "$name: round $i matches neither serial order (an update was lost)"; fi
  done
  echo "$name: $a first $n_ab times, $b first $n_ba times"
}

# Every file under DIR with its hash (to prove that nothing changed).
tree_hashes() {
  (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}
