#!/usr/bin/env bash
# perfdb parse of a real Kineto trace (or a directory of per-rank traces)
# against the independent oracle tests/parse/oracle_trace.py: per-op and
# --per-kernel tables must be byte-identical, and the acceptance figure of
# issue 20 (>= 95 % of the kernel time whose op recorded shapes lands in
# rows carrying those shapes) must hold on every trace.
#   usage: compare_trace_oracle.sh PERFDB TRACE_OR_DIR
set -eu
PERFDB=$1 TRACE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-trace-oracle.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
for mode in per-op per-kernel; do
  flag=""; [ "$mode" = per-kernel ] && flag=--per-kernel
  "$PERFDB" parse -q $flag --profiling-path "$TRACE" --database-path "$WORK/perfdb-$mode" >/dev/null
  python3 "$HERE/oracle_trace.py" "$TRACE" "$WORK/oracle-$mode" $flag
  # the tables; op_mapping.yaml has its own tests (cli.parse.op_mapping_*)
  if ! diff -r -x op_mapping.yaml "$WORK/oracle-$mode" "$WORK/perfdb-$mode" > "$WORK/diff"; then
    echo "perfdb parse ($mode) differs from the oracle on $TRACE:"
    head -40 "$WORK/diff"
    exit 1
  fi
  echo "$mode: identical, $(ls "$WORK/perfdb-$mode" | grep -c "\.csv$") tables"
done
python3 "$HERE/oracle_trace.py" "$TRACE" --acceptance "$WORK/perfdb-per-op"
