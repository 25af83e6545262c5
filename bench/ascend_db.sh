#!/usr/bin/env bash
# `perfdb parse` of an Ascend SQLite profile (issue 48 part 2): MB/s of
# database file and peak RSS, next to the same profile as kernel_details.csv
# parsed by perfdb in the same run (the reference tool cannot read .db at
# all, so the CSV path is the figure to hold it against).
#
#   bash bench/ascend_db.sh [BUILD_DIR] [TASKS]
#
# TASKS defaults to 1000000.  The database and its CSV are generated once
# under $TMPDIR by tests/parse/gen_ascend_db.py (fixed seed; TASK rows in
# time order, as msprof writes them) and reused by later runs; a second
# database with its TASK rows shuffled is the worst case (the reader sorts
# them, and looks each task up out of order).  Each
# parse runs 3 times into a fresh database, page cache warm, not pinned (the
# SQLite reader scans its two tables on two threads): best wall time,
# largest peak RSS (bench/peak_rss.c, wait4()).
# Targets (issue text): >= 200 MB/s of database file, <= 64 MB RSS.
# MB = 1e6 bytes.
set -eu
BUILD=${1:-build}
TASKS=${2:-1000000}
TMP=${TMPDIR:-/tmp}
HERE=$(cd "$(dirname "$0")" && pwd)
PERFDB=$BUILD/bin/perfdb
RSS=$BUILD/peak_rss
for x in "$PERFDB" "$RSS"; do
  [ -x "$x" ] || { echo "build first: make (missing $x)" >&2; exit 1; }
done
PIN=()
DIR="$TMP/perfdb-bench-ascend-db-$TASKS"
if [ ! -f "$DIR/shuffled/msprof_0.db" ]; then
  rm -rf "$DIR"
  mkdir -p "$DIR/db" "$DIR/csv" "$DIR/shuffled"
  echo "generating $TASKS tasks under $DIR ..." >&2
  python3 "$HERE/../tests/parse/gen_ascend_db.py" "$DIR/db/msprof_0.db" --csv "$DIR/csv/kernel_details.csv" \
    --tasks "$TASKS" --seed 11
  python3 "$HERE/../tests/parse/gen_ascend_db.py" "$DIR/shuffled/msprof_0.db" --tasks "$TASKS" --seed 11 --shuffle
fi
REPORT=$(mktemp "$TMP/perfdb-bench-adb.XXXXXX")
OUT=$(mktemp -d "$TMP/perfdb-bench-adb-out.XXXXXX")
trap 'rm -rf "$REPORT" "$OUT"' EXIT
run() {
  : > "$REPORT"
  for _ in 1 2 3; do
    rm -rf "$OUT/db"
    "$RSS" -o "$REPORT" "${PIN[@]}" "$PERFDB" parse -q --profiling-path "$1" --database-path "$OUT/db" >/dev/null ||
      { echo "failed: parse $1" >&2; exit 1; }
  done
  awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
         if (NR == 1 || v["seconds"] < best) best = v["seconds"]
         if (v["maxrss_kb"] > rss) rss = v["maxrss_kb"] }
       END { printf "%s %d\n", best, rss }' "$REPORT"
}
dbmb=$(awk -v b="$(stat -c %s "$DIR/db/msprof_0.db")" 'BEGIN { printf "%.1f", b / 1e6 }')
csvmb=$(awk -v b="$(stat -c %s "$DIR/csv/kernel_details.csv")" 'BEGIN { printf "%.1f", b / 1e6 }')
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
read -r dbs dbrss <<<"$(run "$DIR/db")"
read -r ss srss <<<"$(run "$DIR/shuffled")"
read -r cs crss <<<"$(run "$DIR/csv")"
printf '%-26s %9s %8s %10s %8s\n' input MB seconds "MB/s" "RSS MB"
printf '%-26s %9s %8.3f %10.1f %8.1f\n' "msprof_0.db ($TASKS tasks)" "$dbmb" "$dbs" \
  "$(awk -v m="$dbmb" -v s="$dbs" 'BEGIN { print m / s }')" "$(awk -v k="$dbrss" 'BEGIN { print k / 1024 }')"
printf '%-26s %9s %8.3f %10.1f %8.1f\n' "the same, TASK shuffled" "$dbmb" "$ss" \
  "$(awk -v m="$dbmb" -v s="$ss" 'BEGIN { print m / s }')" "$(awk -v k="$srss" 'BEGIN { print k / 1024 }')"
printf '%-26s %9s %8.3f %10.1f %8.1f\n' "kernel_details.csv (same)" "$csvmb" "$cs" \
  "$(awk -v m="$csvmb" -v s="$cs" 'BEGIN { print m / s }')" "$(awk -v k="$crss" 'BEGIN { print k / 1024 }')"
echo "target for the .db: >= 200 MB/s of database file, <= 64 MB RSS; the reference reads no .db"
