#!/usr/bin/env bash
# The malformed-input corpus: every file of corpus/MANIFEST.tsv (the big
# ones are written at test time by gen_big.py) is run against the real
# binary in a scratch copy of malformed_base/ (a small database, a grid
# configuration and a model config).  Checked per entry: the exit status,
# that stderr+stdout match the expected regex (naming the file and, where
# the input has one, line:column), and that no file changed except those
# the entry allows (a run that fails must change nothing; the lock file,
# holding the last holder's pid, is not data and is not compared).
#   usage: malformed.sh PERFDB GEN_PROFILE
#
# MANIFEST.tsv columns (tab-separated, '#' comments):
#   file  place-as  exit  regex  may-change  command
# place-as: where the file is copied in the scratch directory; may-change: an
# extended regex of paths (./db/Add.csv ...) that may change, or '-'; the
# command runs in the scratch directory with `perfdb` bound to the binary.
. "$(dirname "$0")/lib.sh"
CORPUS="$HERE/corpus"
python3 "$HERE/gen_big.py" "$WORK/big" || fail "gen_big.py"
perfdb() { "$PERFDB" "$@"; }
export -f perfdb
export PERFDB
n=0
while IFS=$'\t' read -r file place want re may cmd; do
  case $file in ''|'#'*) continue ;; esac
  n=$((n + 1))
  src="$CORPUS/$file"; [ -e "$src" ] || src="$WORK/big/$file"
  [ -e "$src" ] || { fail "$file: no such corpus file"; continue; }
  S="$WORK/s$n"
  mkdir -p "$S"; cp -a "$HERE/malformed_base/." "$S/"
  mkdir -p "$S/$(dirname "$place")"; cp "$src" "$S/$place"
  before=$(tree_hashes "$S" | grep -v '/\.perfdb\.lock$')
  (cd "$S" && bash -c "$cmd" >"$WORK/out" 2>&1)
  rc=$?
  [ "$rc" = "$want" ] || fail "$file: exit $rc, expected $want: $(grep -v '^ ' "$WORK/out" | tail -2)"
  grep -Eq -- "$re" "$WORK/out" || fail "$file: no line matches /$re/; got: $(tail -3 "$WORK/out")"
  changed=$(diff <(echo "$before") <(tree_hashes "$S" | grep -v '/\.perfdb\.lock$') |
            sed -n 's/^[<>] [0-9a-f]*  //p' | sort -u)
  if [ -n "$changed" ]; then
    bad=$(echo "$changed" | { if [ "$may" = - ]; then cat; else grep -Ev -- "$may"; fi })
    [ -z "$bad" ] || fail "$file: changed $(echo $bad)"
  fi
  [ -z "$(temps "$S")" ] || fail "$file: temporary files left: $(temps "$S")"
  rm -rf "$S"
done < "$CORPUS/MANIFEST.tsv"
ncorpus=$(find "$CORPUS" -type f ! -name MANIFEST.tsv | wc -l)
echo "$n inputs run ($ncorpus committed corpus files + generated ones)"
[ "$n" -ge 40 ] || fail "fewer than 40 inputs"
for f in "$CORPUS"/*; do
  b=$(basename "$f"); [ "$b" = MANIFEST.tsv ] && continue
  grep -q "^$b	" "$CORPUS/MANIFEST.tsv" || fail "$b is not in MANIFEST.tsv"
done
finish
