#!/usr/bin/env bash
# CSV tokenizer throughput: perfdb's reader vs `wc -l` on the same file, same run.
#
#   bash bench/csv.sh [BUILD_DIR] [SIZE_MB]
#
# Generates a realistic Ascend kernel_details.csv (bench/gen_kernel_details.c,
# fixed seed) of SIZE_MB megabytes (default 512) under $TMPDIR, warms the page
# cache, then reports, best of 3 passes each:
#   wc -l         the floor: the cost of touching every byte once for newlines
#   perfdb csv    full tokenization: quotes, "" escapes, CRLF, field trimming and
#                 UTF-8 validation (the flags `perfdb parse` uses)
# The target (issue #2) is >= 1 GB/s on one core for perfdb csv.
set -eu
BUILD=${1:-build}
SIZE_MB=${2:-512}
TMP=${TMPDIR:-/tmp}
FILE="$TMP/perfdb-bench-kernel_details-${SIZE_MB}MB.csv"
[ -x "$BUILD/bench_csv" ] || { echo "build first: make (missing $BUILD/bench_csv)" >&2; exit 1; }
if [ ! -f "$FILE" ]; then
  echo "generating $FILE ..." >&2
  "$BUILD/gen_kernel_details" "$FILE.tmp" "$SIZE_MB" && mv "$FILE.tmp" "$FILE"
fi
cat "$FILE" > /dev/null   # page cache
bytes=$(stat -c %s "$FILE")

best_wc=999999
for _ in 1 2 3; do
  t0=$(date +%s.%N); wc -l "$FILE" > /dev/null; t1=$(date +%s.%N)
  best_wc=$(awk -v a="$t0" -v b="$t1" -v best="$best_wc" 'BEGIN { d = b - a; print (d < best) ? d : best }')
done
ours=$(taskset -c 0 "$BUILD/bench_csv" "$FILE" 3 --flags all 2>/dev/null || "$BUILD/bench_csv" "$FILE" 3 --flags all)
ours_s=$(echo "$ours" | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p')
rows=$(echo "$ours" | sed -n 's/.*rows=\([0-9]*\).*/\1/p')
fields=$(echo "$ours" | sed -n 's/.*fields=\([0-9]*\).*/\1/p')

awk -v bytes="$bytes" -v wc="$best_wc" -v ours="$ours_s" -v rows="$rows" -v fields="$fields" 'BEGIN {
  printf "file: %.0f MB, %d rows, %d fields (%.1f bytes/field)\n", bytes/1e6, rows, fields, bytes/fields
  printf "%-34s %10s %10s\n", "", "seconds", "GB/s"
  printf "%-34s %10.4f %10.3f\n", "wc -l (reference floor)", wc, bytes/wc/1e9
  printf "%-34s %10.4f %10.3f\n", "perfdb csv tokenizer (1 core)", ours, bytes/ours/1e9
  printf "ratio perfdb/wc-l time: %.2fx; target >= 1.000 GB/s: %s\n", ours/wc, (bytes/ours/1e9 >= 1.0) ? "met" : "NOT met"
}'
