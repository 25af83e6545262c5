#!/usr/bin/env bash
# perfdb parse against the independent Python oracle (tests/parse/oracle_parse.py)
# on a generated profile: two ranks, operator_details for FIA, ~40 kernel types,
# N/A shapes, empty durations and counters (bench/gen_profile.c).  The tables
# must be byte-identical.
#   usage: compare_oracle.sh PERFDB GEN_PROFILE ROWS SEED
set -eu
PERFDB=$1 GEN=$2 ROWS=$3 SEED=$4
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-oracle.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"$GEN" "$WORK/prof" --rows "$ROWS" --ranks 2 --operator-details --seed "$SEED" >/dev/null
"$PERFDB" parse -q --profiling-path "$WORK/prof" --database-path "$WORK/perfdb" >/dev/null
python3 "$HERE/oracle_parse.py" "$WORK/prof" "$WORK/oracle"
if ! diff -r "$WORK/oracle" "$WORK/perfdb" > "$WORK/diff"; then
  echo "perfdb parse differs from the oracle (seed $SEED, $ROWS rows):"
  head -40 "$WORK/diff"
  exit 1
fi
echo "identical: $(ls "$WORK/perfdb" | grep -c csv) tables from $ROWS rows"
