#!/usr/bin/env bash
# `perfdb grid --rows 0` over a database holding one template row for every
# kernel type the grid configuration routes, all models (no --target-models:
# the full GEMM grid, every built-in model), the default 32 GiB HBM budget.
# That is about 320,000 appended rows; the reference (generate_shape_grid.py)
# takes about 22 s for it (issue #4).  Target: under 1 s.
#
#   bash bench/grid.sh [BUILD_DIR] [RUNS]
#
# Each run gets a fresh copy of the template database (built once, from the
# `assignments:` of data/grid.yaml); wall time is the best of RUNS (default
# 3), peak RSS the largest, both from bench/peak_rss.c (wait4's ru_maxrss).
set -eu
BUILD=${1:-build}
RUNS=${2:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
PERFDB=$BUILD/bin/perfdb
RSS=$BUILD/peak_rss
for x in "$PERFDB" "$RSS"; do
  [ -x "$x" ] || { echo "build first: make (missing $x)" >&2; exit 1; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-bench-grid.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# one template row per routed kernel type (pattern other than skip)
mkdir "$TMP/template"
kernels=$(awk '/^assignments:/ { a = 1; next } a && /^[^ #]/ { a = 0 }
               a && /^  [^ #][^:]*: *[^ #]/ { sub(/^  /, ""); split($0, kv, ": *");
                 if (kv[2] != "skip") print kv[1] }' "$HERE/../data/grid.yaml")
for k in $kernels; do
  printf 'OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Duration(us),Count\r\ndynamic,AI_VECTOR_CORE,"""3,7""",DT_BF16,ND,"""3,7""",DT_BF16,ND,11.5,4\r\n' \
    > "$TMP/template/$k.csv"
done
n=$(ls "$TMP/template" | wc -l)

: > "$TMP/report"
for _ in $(seq "$RUNS"); do
  rm -rf "$TMP/db" && cp -r "$TMP/template" "$TMP/db"
  "$RSS" -o "$TMP/report" "$PERFDB" grid --database-path "$TMP/db" --rows 0 --quiet > "$TMP/stdout"
done
appended=$(sed -n 's/^Appended \([0-9]*\) rows.*/\1/p' "$TMP/stdout")
bytes=$(cat "$TMP"/db/*.csv | wc -c)
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
awk -v n="$n" -v rows="$appended" -v bytes="$bytes" '
  { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    if (NR == 1 || v["seconds"] < best) best = v["seconds"]
    if (v["maxrss_kb"] > rss) rss = v["maxrss_kb"] }
  END {
    printf "perfdb grid --rows 0: %d tables, %d rows appended (%.1f MB written)\n", n, rows, bytes / 1e6
    printf "  wall %.3f s (best of %d), %.0f rows/s, peak RSS %.1f MB\n", best, NR, rows / best, rss * 1024 / 1e6
    printf "  reference generate_shape_grid.py: about 22 s (issue #4) -> %.0fx faster; target < 1 s: %s\n",
      22 / best, (best < 1 ? "met" : "NOT met")
  }' "$TMP/report"
