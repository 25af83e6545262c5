#!/usr/bin/env bash
# `make install` (cmake --install) into a temporary PREFIX puts the binary,
# the data files, a manual page per command and the bash completion where
# they belong, and the installed binary finds its data there.
#   install.sh BUILD_DIR
set -u
BUILD=$1
PREFIX=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-install.XXXXXX")
trap 'rm -rf "$PREFIX"' EXIT
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null || { echo "cmake --install failed"; exit 1; }
fail=0
need() { [ -s "$PREFIX/$1" ] || { echo "missing: $1"; fail=1; }; }
need bin/perfdb
need share/perfdb/devices.json
need share/perfdb/grid.yaml
need share/bash-completion/completions/perfdb
need share/man/man1/perfdb.1
[ -e "$PREFIX/share/perfdb/completion" ] && { echo "completion/ installed as data"; fail=1; }
for c in $("$PREFIX/bin/perfdb" --help | awk '/^commands:/{on=1;next} on && /^  [a-z]/{print $1} on && /^$/{exit}'); do
  need "share/man/man1/perfdb-$c.1"
  grep -q "^\.TH PERFDB-$(echo "$c" | tr a-z A-Z) 1" "$PREFIX/share/man/man1/perfdb-$c.1" 2>/dev/null ||
    { echo "perfdb-$c.1 has no .TH line"; fail=1; }
done
# the installed binary reads the installed registry (not the source tree's)
out=$(env -u PERFDB_DATA_DIR -u PERFDB_DEVICES "$PREFIX/bin/perfdb" devices --json 2>&1) ||
  { echo "installed perfdb devices failed: $out"; fail=1; }
case $out in *"\"source\": \"$PREFIX/bin/../share/perfdb/devices.json\""*) ;; *) echo "devices not read from PREFIX"; fail=1;; esac
[ $fail -eq 0 ] && echo "ok: installed under $PREFIX"
exit $fail
