#!/usr/bin/env bash
# Checks that the help text of every command matches docs/cli.md (the idea of
# git's t0450-txt-doc-vs-help.sh).  Each documented command has a block
#   <!-- help:NAME -->
#   ```text
#   ...exact output of `perfdb NAME --help`...
#   ```
# and NAME=main is `perfdb --help`.  Every command listed by `perfdb --help`
# must be documented.
set -u
PERFDB=$1
DOCS=$2
fail=0
block() {
  awk -v tag="<!-- help:$1 -->" '
    $0 == tag { inside = 1; next }
    inside == 1 && /^```/ { if (started) exit; started = 1; next }
    inside == 1 && started { print }
  ' "$DOCS/cli.md"
}
check() {  # name, actual
  local want
  want=$(block "$1")
  if [ -z "$want" ]; then
    echo "docs/cli.md has no <!-- help:$1 --> block"; fail=1; return
  fi
  if [ "$want" != "$2" ]; then
    echo "help of '$1' differs from docs/cli.md:"
    diff <(printf '%s\n' "$want") <(printf '%s\n' "$2") | head -20
    fail=1
  fi
}
check main "$("$PERFDB" --help)"
for cmd in $("$PERFDB" --help | awk '/^commands:/{on=1;next} on && /^  [a-z]/{print $1} on && /^$/{exit}'); do
  check "$cmd" "$("$PERFDB" "$cmd" --help)"
done
exit $fail
