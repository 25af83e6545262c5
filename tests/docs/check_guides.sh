#!/usr/bin/env bash
# Checks that the user guides (docs/guide.md, docs/guide.zh.md) document
# exactly the flags that `perfdb <cmd> --help` prints, with their defaults.
# Guide format: per command a heading `### perfdb <cmd>` and, up to the next
# `#`/`##`/`###` heading, a table whose rows start with "| `--flag ...` |" (or
# "| `-x, --flag ...` |"); the first --flag of the row's first cell names it,
# the second cell is its default. For every flag whose help says "default: X" /
# "default X", that default cell must contain X as a whole word, backquotes
# aside (X is the help's text after "default", up to the first ')', ';', ',',
# ':' or '. ' before a capital letter, blanks squeezed).
# usage: check_guides.sh PERFDB DOCS_DIR [GUIDE ...]
set -u
PERFDB=$1
DOCS=$2
shift 2
GUIDES=("$@")
[ ${#GUIDES[@]} -gt 0 ] || GUIDES=("$DOCS/guide.md" "$DOCS/guide.zh.md")
fail=0

# help FLAG<TAB>DEFAULT lines (DEFAULT empty when none) of one command
help_flags() {
  "$PERFDB" "$1" --help | awk '
    function flush() {
      if (flag == "") return
      d = ""
      t = text
      gsub(/[ \t]+/, " ", t)
      if (match(t, /default:? [^ )]/)) {
        d = substr(t, RSTART, length(t))
        sub(/^default:? /, "", d)
        cut = length(d) + 1
        n = split(") ; , :", stops, " ")
        for (i = 1; i <= n; i++) { p = index(d, stops[i]); if (p && p < cut) cut = p }
        if (match(d, /\. [A-Z]/) && RSTART < cut) cut = RSTART
        d = substr(d, 1, cut - 1)
        sub(/ +$/, "", d)
      }
      printf "%s\t%s\n", flag, d
      flag = ""; text = ""
    }
    /^  (-[a-zA-Z], )?--[a-z]/ {
      flush()
      for (i = 1; i <= NF; i++) if ($i ~ /^--[a-z]/) { flag = $i; sub(/,$/, "", flag); break }
      next
    }
    /^        / && flag != "" { text = text " " $0; next }
    { flush() }
    END { flush() }
  '
}

# table rows of `### perfdb CMD` in GUIDE: FLAG<TAB>default cell
guide_rows() {
  awk -v head="### perfdb $2" '
    /^##?#? / { inside = ($0 == head); if (inside) seen = 1; next }
    inside && /^\| *`-/ {
      n = split($0, cells, "|")
      cell = cells[2]; def = cells[3]
      gsub(/`/, "", def); gsub(/[ \t]+/, " ", def); sub(/^ /, "", def); sub(/ $/, "", def)
      if (match(cell, /--[a-z0-9-]+/)) printf "%s\t%s\n", substr(cell, RSTART, RLENGTH), def
    }
    END { if (!seen) print "MISSING\t" }
  ' "$1"
}

cmds=$("$PERFDB" --help | awk '/^commands:/{on=1;next} on && /^  [a-z]/{print $1} on && /^$/{exit}')
[ -n "$cmds" ] || { echo "no commands in 'perfdb --help'"; exit 1; }
for g in "${GUIDES[@]}"; do
  [ -f "$g" ] || { echo "$g: missing"; fail=1; continue; }
  for cmd in $cmds; do
    want=$(help_flags "$cmd")
    have=$(guide_rows "$g" "$cmd")
    if [ "$have" = "MISSING	" ]; then
      echo "$g: no '### perfdb $cmd' section"; fail=1; continue
    fi
    want_names=$(cut -f1 <<<"$want" | sort)
    have_names=$(cut -f1 <<<"$have" | sort)
    if [ "$want_names" != "$have_names" ]; then
      echo "$g: perfdb $cmd: flags differ from --help (< help, > guide):"
      diff <(printf '%s\n' "$want_names") <(printf '%s\n' "$have_names") | grep '^[<>]'
      fail=1
    fi
    dups=$(printf '%s\n' "$have_names" | uniq -d)
    [ -z "$dups" ] || { echo "$g: perfdb $cmd: flags listed twice: $dups"; fail=1; }
    while IFS=$'\t' read -r flag def; do
      [ -n "$def" ] || continue
      cell=$(awk -F'\t' -v f="$flag" '$1 == f { print $2; exit }' <<<"$have")
      grep -q -- "^$flag	" <<<"$have" || continue
      if ! grep -qP -- "(?<![A-Za-z0-9_])\Q$def\E(?![A-Za-z0-9_])" <<<"$cell"; then
        echo "$g: perfdb $cmd $flag: default '$def' (from --help) not in the default column: '$cell'"
        fail=1
      fi
    done <<<"$want"
  done
done
[ $fail = 0 ] && echo "guides match --help: ${GUIDES[*]}"
exit $fail
