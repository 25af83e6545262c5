#!/usr/bin/env bash
# `perfdb parse` end to end: throughput and peak memory, next to `wc -l` on the
# same file in the same run, and next to the reference parser's figures.
#
#   bash bench/parse.sh [BUILD_DIR] [ROWS_LIST]
#
# ROWS_LIST defaults to "100000 1000000 4000000".  For each size a realistic
# kernel_details.csv is generated once under $TMPDIR by bench/gen_profile.c
# (fixed seed; DeepSeek-style decode and prefill steps, about 40 kernel types,
# FIA rows with 31 input slots, quoted shapes, N/A and empty counter cells,
# lognormal durations; 4M rows is about 1.5 GB) and reused by later runs.
# Then, with the page cache warm:
#   wc -l         best of 3, pinned to core 0: the floor of reading every byte
#   perfdb parse  --profiling-path FILE --database-path <fresh empty dir> --quiet,
#                 pinned to core 0, best of 3, a new database each time
#   peak RSS      of perfdb, from wait4()'s ru_maxrss (bench/peak_rss.c), the
#                 largest of the 3 runs
# and last a directory of 2 rank files with their operator_details.csv
# (gen_profile --ranks 2 --operator-details; RANK_ROWS rows in all, default
# 1000000) parsed unpinned with --jobs 1 and with --jobs 2.
# Targets (issue text): >= 400 MB/s on one core (1 GB/s stretch); peak RSS
# < 64 MB and flat from the smallest to the largest size; several rank files
# use both cores.  MB = 1e6 bytes throughout.
set -eu
BUILD=${1:-build}
ROWS_LIST=${2:-"100000 1000000 4000000"}
RANK_ROWS=${RANK_ROWS:-1000000}
TMP=${TMPDIR:-/tmp}
PERFDB=$BUILD/bin/perfdb
GEN=$BUILD/gen_profile
RSS=$BUILD/peak_rss
for x in "$PERFDB" "$GEN" "$RSS"; do
  [ -x "$x" ] || { echo "build first: make (missing $x)" >&2; exit 1; }
done
PIN=(taskset -c 0)
if ! taskset -c 0 true 2>/dev/null; then
  PIN=()
  echo "note: taskset unavailable, runs are not pinned" >&2
fi

REPORT=$(mktemp "$TMP/perfdb-bench-parse-report.XXXXXX")
DBROOT=$(mktemp -d "$TMP/perfdb-bench-parse-db.XXXXXX")
trap 'rm -rf "$REPORT" "$DBROOT"' EXIT

# run N CMD...: best wall time, and the largest peak RSS (KiB) and CPU/wall over N runs.
# A fresh empty database directory is substituted for the word @DB each time.
run() {
  local n=$1; shift
  : > "$REPORT"
  for _ in $(seq "$n"); do
    local db="$DBROOT/db" args=()
    rm -rf "$db"
    for a in "$@"; do [ "$a" = @DB ] && args+=("$db") || args+=("$a"); done
    if ! "$RSS" -o "$REPORT" "${args[@]}" > /dev/null; then
      echo "failed: ${args[*]}" >&2
      exit 1
    fi
  done
  rm -rf "$DBROOT/db"
  awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
         if (NR == 1 || v["seconds"] < best) { best = v["seconds"]; cpu = v["cpu"] }
         if (v["maxrss_kb"] > rss) rss = v["maxrss_kb"] }
       END { printf "%s %d %s\n", best, rss, cpu / best }' "$REPORT"
}

# Reference parser (issue text): 19 MB/s; 3.9 GB at 1M rows, 15.5 GB at 4M rows.
ref_rss() { case $1 in 1000000) echo 3900;; 4000000) echo 15500;; *) echo "";; esac; }

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run (other jobs skew the figures)"
printf '%-9s %8s %11s %12s %8s %10s  |  %-14s %s\n' rows MB "wc -l MB/s" "perfdb MB/s" "time/wc" \
  "RSS MB" "reference MB/s" "reference RSS MB"
results=""
for rows in $ROWS_LIST; do
  file="$TMP/perfdb-bench-parse-${rows}rows.csv"
  if [ ! -f "$file" ]; then
    echo "generating $file ..." >&2
    "$GEN" "$file.part.csv" --rows "$rows" --seed 1 && mv "$file.part.csv" "$file"
  fi
  cat "$file" > /dev/null   # page cache
  bytes=$(stat -c %s "$file")
  out=$(run 3 "${PIN[@]}" wc -l "$file"); read -r wc_s _ _ <<< "$out"
  out=$(run 3 "${PIN[@]}" "$PERFDB" parse --profiling-path "$file" --database-path @DB --quiet)
  read -r p_s p_rss _ <<< "$out"
  ref=$(ref_rss "$rows")
  awk -v rows="$rows" -v b="$bytes" -v wc="$wc_s" -v p="$p_s" -v rss="$p_rss" -v ref="$ref" 'BEGIN {
    printf "%-9d %8.0f %11.0f %12.0f %7.1fx %10.1f  |  %-14s %s\n", rows, b / 1e6, b / 1e6 / wc,
      b / 1e6 / p, p / wc, rss * 1024 / 1e6, "19", (ref == "" ? "n/a" : ref) }'
  results="$results$rows $bytes $p_s $p_rss
"
done
printf '%s' "$results" | awk '
  { n++; rows[n] = $1; mbs[n] = $2 / 1e6 / $3; rss[n] = $4 * 1024 / 1e6 }
  # the sizes whose throughput is (at_least = 1) or is not (0) >= mbps
  function sizes(mbps, at_least,   i, s) {
    s = ""
    for (i = 1; i <= n; i++)
      if ((mbs[i] >= mbps) == at_least) s = s (s == "" ? "" : ", ") rows[i]
    return s
  }
  END {
    if (n == 0) exit
    lo = hi = mbs[1]; top = rss[1]
    for (i = 2; i <= n; i++) {
      if (mbs[i] < lo) lo = mbs[i]
      if (mbs[i] > hi) hi = mbs[i]
      if (rss[i] > top) top = rss[i]
    }
    slow = sizes(400, 0); fast = sizes(1000, 1)
    printf "throughput: %.0f to %.0f MB/s (%.0fx to %.0fx the reference); target >= 400 MB/s: %s; stretch 1 GB/s: %s\n",
      lo, hi, lo / 19, hi / 19, (slow == "" ? "met at every size" : "NOT met at " slow " rows"),
      (fast == "" ? "not met" : "met at " fast " rows")
    flat = (rss[n] <= rss[1] * 1.10 + 4)
    printf "peak RSS: at most %.1f MB; target < 64 MB: %s; flat from %s to %s rows (%.1f -> %.1f MB; allowed: +10%% +4 MB): %s\n",
      top, (top < 64 ? "met" : "NOT met"), rows[1], rows[n], rss[1], rss[n], (flat ? "met" : "NOT met")
  }'

# Several rank files: --jobs 1 vs --jobs 2, unpinned.
dir="$TMP/perfdb-bench-parse-${RANK_ROWS}rows-2ranks"
if [ ! -d "$dir" ]; then
  echo "generating $dir ..." >&2
  "$GEN" "$dir.tmp" --rows "$RANK_ROWS" --ranks 2 --seed 1 --operator-details && mv "$dir.tmp" "$dir"
fi
cat "$dir"/*/*/kernel_details.csv > /dev/null
bytes=$(du -cb "$dir"/*/*/kernel_details.csv | awk 'END { print $1 }')
out=$(run 3 "$PERFDB" parse --profiling-path "$dir" --database-path @DB --quiet --jobs 1)
read -r j1_s _ j1_cpu <<< "$out"
out=$(run 3 "$PERFDB" parse --profiling-path "$dir" --database-path @DB --quiet --jobs 2)
read -r j2_s j2_rss j2_cpu <<< "$out"
awk -v b="$bytes" -v r="$RANK_ROWS" -v t1="$j1_s" -v t2="$j2_s" -v c1="$j1_cpu" -v c2="$j2_cpu" \
    -v rss="$j2_rss" -v cores="$(nproc)" 'BEGIN {
  printf "2 rank files, %d rows, %.0f MB in all (%d CPUs):\n", r, b / 1e6, cores
  printf "  --jobs 1: %.3f s  %5.0f MB/s  CPU/wall %.2f\n", t1, b / 1e6 / t1, c1
  printf "  --jobs 2: %.3f s  %5.0f MB/s  CPU/wall %.2f  peak RSS %.1f MB\n", t2, b / 1e6 / t2, c2, rss * 1024 / 1e6
  printf "  speed-up %.2fx; both cores used (CPU/wall >= 1.5 with --jobs 2): %s\n", t1 / t2, (c2 >= 1.5 ? "yes" : "NO")
}'
