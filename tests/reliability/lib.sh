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
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# hashes DIR: "name sha256" of every table (top-level *.csv), sorted.
hashes() {
  (cd "$1" && shopt -s nullglob && f=(*.csv) && [ ${#f[@]} -eq 0 ] || sha256sum -- "${f[@]}") |
    awk '{ print $2, $1 }' | sort
}

# temps DIR: temporary files of the atomic writes under DIR.
temps() { find "$1" -name '.*.tmp.*' 2>/dev/null | sort; }

# lock_free DIR: the database lock can be taken at once.
lock_free() { flock -n "$1" true; }

# Every file under DIR with its hash (to prove that nothing changed).
tree_hashes() {
  (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}
