#!/usr/bin/env bash
# Every source file with logic has its test: tests/unit/<layer>/test_<file>.c
# named after it, or a row in docs/testing.md's table "Which test covers
# each file" that names it (in backticks, as `src/<path>`).  So a new file
# cannot land without saying how it is tested (docs/testing.md).
#   check_test_map.sh SRC_ROOT
set -u
root=$1
doc=$root/docs/testing.md
missing=0
layer_of() {
  case $1 in
    src/backend/*) echo backend ;;
    src/*/*) p=${1#src/}; echo "${p%%/*}" ;;
  esac
}
while IFS= read -r f; do
  rel=${f#"$root"/}
  base=$(basename "${rel%.*}")
  layer=$(layer_of "$rel")
  [ -f "$root/tests/unit/$layer/test_$base.c" ] && continue
  grep -qF "\`$rel\`" "$doc" && continue
  echo "no test named after it and no row in docs/testing.md: $rel"
  missing=$((missing + 1))
done < <(find "$root/src" -type f \( -name '*.c' -o -name '*.cu' \) | sort)
[ $missing -eq 0 ] || { echo "$missing file(s) without a named test"; exit 1; }
echo "every source file names its test"
