#!/usr/bin/env bash
# docs/internals.md tours the source tree: every file under src/ must be
# named there (its base name, or a path ending in it, in backticks), so a new file cannot land
# without a line saying what it does (Redis's "source code layout" idea).
#   check_tour.sh SRC_DIR INTERNALS_MD
set -u
SRC=$1; DOC=$2
missing=0
while IFS= read -r f; do
  b=$(basename "$f")
  grep -qF "\`$b\`" "$DOC" || grep -qF "/$b\`" "$DOC" || { echo "not in $(basename "$DOC"): src/${f#"$SRC"/}"; missing=$((missing + 1)); }
done < <(find "$SRC" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.inc' \) | sort)
[ $missing -eq 0 ] || { echo "$missing file(s) missing from the tour"; exit 1; }
echo "every file under src/ is in the tour ($(find "$SRC" -type f | wc -l) files)"
