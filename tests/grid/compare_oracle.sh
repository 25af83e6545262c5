#!/usr/bin/env bash
# perfdb grid --rows 0 against the independent Python oracle (oracle_grid.py):
# a database with one template row for every routed kernel type, generated
# twice; perfdb fills one copy, the oracle writes the expected tables into the
# other; every table must be byte-identical.
#   compare_oracle.sh PERFDB [oracle expect options, e.g. --models ID,ID --max-hbm-gb 0]
set -eu
PERFDB=$1; shift
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-grid-oracle.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
python3 "$HERE/oracle_grid.py" make-db "$WORK/got"
python3 "$HERE/oracle_grid.py" make-db "$WORK/want"
args=(--rows 0 --quiet)
oargs=()
while [ $# -gt 0 ]; do
  case $1 in
    --models) args+=(--target-models "$2"); oargs+=(--models "$2"); shift 2;;
    --max-hbm-gb) args+=(--max-hbm-gb "$2"); oargs+=(--max-hbm-gb "$2"); shift 2;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
"$PERFDB" grid --database-path "$WORK/got" "${args[@]}" > "$WORK/stdout"
python3 "$HERE/oracle_grid.py" expect "$WORK/want" "${oargs[@]}"
if ! diff -rq "$WORK/want" "$WORK/got"; then
  for f in $(diff -rq "$WORK/want" "$WORK/got" | awk '{print $2}' | head -3); do
    b=$(basename "$f"); echo "--- $b"; diff "$f" "$WORK/got/$b" | head -10
  done
  exit 1
fi
# the row count comes from the oracle's tables (each holds a header and the
# template), and so does the count of tables that got rows
want=$(cat "$WORK"/want/*.csv | wc -l)
n=$(ls "$WORK"/want/*.csv | wc -l)
rows=$((want - 2 * n))
k=0
for f in "$WORK"/want/*.csv; do [ "$(wc -l <"$f")" -gt 2 ] && k=$((k + 1)); done
grep -q "^Appended $rows rows to $k of the $n CSV files under " "$WORK/stdout" || {
  echo "stdout does not say 'Appended $rows rows to $k of the $n CSV files':"; cat "$WORK/stdout"; exit 1; }
echo "$n tables identical to the oracle's; $rows new rows"
