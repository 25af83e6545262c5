#!/usr/bin/env bash
# Generates the manual pages perfdb(1) and perfdb-<command>(1) from the
# binary's own --help text, so that the pages and --help cannot drift
# (run by a CMake custom command at build time; do not edit the output).
#   gen-man.sh PERFDB OUTDIR VERSION
# Help layout read (src/cli/opt.c): "usage: ..." first, paragraphs, then
# sections "<heading>:" at column 0 holding "  --option METAVAR" lines with
# their text indented by 8 spaces.
set -eu
PERFDB=$1 OUT=$2 VERSION=$3
mkdir -p "$OUT"
to_roff() {  # name, section title line; reads the help text on stdin
  awk -v name="$1" -v summary="$2" -v version="$VERSION" '
    function esc(s) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); return s }
    function line(s) { s = esc(s); if (s ~ /^[.'"'"']/) s = "\\&" s; print s }
    BEGIN {
      up = toupper(name)
      printf ".TH %s 1 \"\" \"perfdb %s\" \"perfdb manual\"\n", up, version
      print ".SH NAME"; line(name " - " summary)
    }
    NR == 1 && /^usage: / { print ".SH SYNOPSIS"; print ".nf"; line(substr($0, 8)); syn = 1; next }
    syn && /^ +[^ ]/ && !para { line(substr($0, 8)); next }
    syn { print ".fi"; syn = 0; print ".SH DESCRIPTION"; }
    /^$/ { if (nf) { print ".fi"; nf = 0 } print ".PP"; para = 1; next }
    /^[a-z][a-z ]*:$/ { if (nf) { print ".fi"; nf = 0 } print ".SH " esc(toupper(substr($0, 1, length($0) - 1))); next }
    /^  -/ { if (nf) { print ".fi"; nf = 0 } sub(/^ +/, ""); print ".TP"; print ".B " esc($0); next }
    /^        / { sub(/^ +/, ""); line($0); next }
    /^  [a-z]/ && name == "perfdb" { if (nf) { print ".fi"; nf = 0 } sub(/^ +/, "");
      c = $1; sub(/^[^ ]+ +/, ""); print ".TP"; print ".BR perfdb\\-" esc(c) " (1)"; line($0); next }
    { if (!nf) { print ".nf"; nf = 1 } line($0) }
    END { if (nf) print ".fi"; if (name == "perfdb") { print ".SH SEE ALSO"; print "The documentation under share/doc/perfdb (docs/cli.md, docs/report.md)." }
          else { print ".SH SEE ALSO"; print ".BR perfdb (1)" } }
  '
}
"$PERFDB" --help | to_roff perfdb "operator performance databases for LLM inference simulators" >"$OUT/perfdb.1"
"$PERFDB" --help | awk '/^commands:/{on=1;next} on && /^  [a-z]/{c=$1; $1=""; sub(/^ +/,""); print c "\t" $0} on && /^$/{exit}' |
while IFS=$'\t' read -r cmd summary; do
  "$PERFDB" "$cmd" --help | to_roff "perfdb-$cmd" "$summary" >"$OUT/perfdb-$cmd.1"
done
