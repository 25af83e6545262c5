#!/usr/bin/env bash
# `perfdb parse` of PyTorch profiler (Kineto) traces: throughput and peak
# memory, printed beside `cat` / `zcat` of the same file in the same run.
#
#   bash bench/trace.sh [BUILD_DIR] [BIG_MB]
#
# bench/gen_trace.c writes, under $TMPDIR (never in the repository), a
# 34 MB trace and a BIG_MB one (default 2100 MB): three host threads, four
# streams on two devices, layer-by-layer op nesting with shapes, the three
# link layouts (older Kineto, newer with ac2g flows, flows only) and the
# device activities after all host events, as Kineto writes them.  The big
# one is also gzipped (gzip -1).  Then, page cache warm, pinned to core 0:
#   cat / zcat    > /dev/null: the floor of reading (and inflating) every byte
#   perfdb parse  --profiling-path FILE --database-path <fresh dir> --quiet
#   peak RSS      of perfdb, from wait4()'s ru_maxrss (bench/peak_rss.c)
# MB/s counts the JSON bytes (uncompressed) per wall second; MB = 1e6 bytes.
# Targets (issue 20): >= 100 MB/s on one core; peak RSS <= 64 MB on the
# 34 MB trace and <= 256 MB on the 2 GB one.  The files are deleted at exit.
set -eu
BUILD=${1:-build}
BIG_MB=${2:-2100}
TMP=${TMPDIR:-/tmp}
PERFDB=$BUILD/bin/perfdb
GEN=$BUILD/gen_trace
RSS=$BUILD/peak_rss
for x in "$PERFDB" "$GEN" "$RSS"; do
  [ -x "$x" ] || { echo "build first: make (missing $x)" >&2; exit 1; }
done
PIN=(taskset -c 0)
if ! taskset -c 0 true 2>/dev/null; then
  PIN=()
  echo "note: taskset unavailable, runs are not pinned" >&2
fi
WORK=$(mktemp -d "$TMP/perfdb-bench-trace.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# measure LABEL BYTES CMD...: one run; prints MB/s, peak RSS and wall time.
measure() {
  local label=$1 bytes=$2; shift 2
  rm -rf "$WORK/db"
  local args=()
  for a in "$@"; do [ "$a" = @DB ] && args+=("$WORK/db") || args+=("$a"); done
  : > "$WORK/rss"
  if ! "$RSS" -o "$WORK/rss" "${PIN[@]}" "${args[@]}" > /dev/null; then
    echo "failed: ${args[*]}" >&2
    exit 1
  fi
  awk -v l="$label" -v b="$bytes" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
    END { printf "  %-34s %8.1f MB/s  %8.1f MB peak RSS  %7.2f s\n", l, b / 1e6 / v["seconds"],
          v["maxrss_kb"] * 1024 / 1e6, v["seconds"] }' "$WORK/rss"
}

for mb in 34 "$BIG_MB"; do
  f="$WORK/trace-${mb}mb.json"
  "$GEN" "$f" --mb "$mb" --seed 1
  bytes=$(stat -c %s "$f")
  echo "trace: $(awk -v b="$bytes" 'BEGIN { printf "%.1f MB", b / 1e6 }') JSON ($f)"
  cat "$f" > /dev/null   # warm the page cache
  measure "cat" "$bytes" cat "$f"
  measure "perfdb parse (per op)" "$bytes" "$PERFDB" parse -q --profiling-path "$f" --database-path @DB
  if [ "$mb" != 34 ]; then
    gzip -1 -c "$f" > "$f.gz"
    rm -f "$f"
    echo "  gzip -1: $(awk -v b="$(stat -c %s "$f.gz")" 'BEGIN { printf "%.1f MB", b / 1e6 }')"
    cat "$f.gz" > /dev/null
    measure "zcat" "$bytes" zcat "$f.gz"
    measure "perfdb parse (per op, .json.gz)" "$bytes" "$PERFDB" parse -q --profiling-path "$f.gz" --database-path @DB
    rm -f "$f.gz"
  else
    rm -f "$f"
  fi
done
echo "targets: >= 100 MB/s on one core; peak RSS <= 64 MB (34 MB trace), <= 256 MB (2 GB trace)"
