#!/usr/bin/env bash
# Trace parsing is linear and bounded whatever its strings (docs/reliability.md
# guarantee 12, issue 49 finding 1): op names of 25 and 100 MB, in an op perfdb
# reads and in an event it skips (gzipped, as such traces arrive: about 100 KB
# each), are refused with the byte offset where the string starts (found
# again here by Python: the index of its opening quote), in well under a
# second and a few MB.  Before, 100 MB took 15-23 s and 1.1 GB.  A name of
# exactly the cap (1 MiB) still parses.
#   usage: long_strings.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
P=$PERFDB
asan=0
ldd "$P" 2>/dev/null | grep -q libasan && asan=1
python3 - "$WORK" <<'PY'
import gzip, json, sys
w = sys.argv[1]
for mb in (25, 100):
    for where in ("op", "skip"):
        name = "a" * (mb << 20)
        if where == "skip":
            ev = {"ph": "i", "name": name, "pid": 1, "tid": 1, "ts": 1}
        else:
            ev = {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": 20, "dur": 5,
                  "args": {"Input Dims": [[3, 4], [4]], "Input type": ["float", "float"]}}
        text = json.dumps({"traceEvents": [ev]})
        open("%s/%d_%s.pt.trace.json.gz" % (w, mb, where), "wb").write(gzip.compress(text.encode(), 6))
        open("%s/%d_%s.at" % (w, mb, where), "w").write(str(text.index('"' + "a" * 16)))
cap = {"ph": "X", "cat": "cpu_op", "name": "aten::" + "b" * ((1 << 20) - 6), "pid": 1, "tid": 1, "ts": 20,
       "dur": 5, "args": {"Input Dims": [[3, 4], [4]], "Input type": ["float", "float"]}}
open("%s/cap.pt.trace.json" % w, "w").write(json.dumps({"traceEvents": [cap]}))
PY
for mb in 25 100; do
  for where in op skip; do
    f="$WORK/${mb}_$where.pt.trace.json.gz"
    measured "$WORK/t" "$P" parse -q --profiling-path "$f" --database-path "$WORK/db" 2>"$WORK/e"
    read -r rc secs kb <"$WORK/t"
    at=$(cat "$WORK/${mb}_$where.at")
    [ $rc -eq 1 ] || fail "$mb MB name ($where): exit $rc"
    grep -q "the JSON string starting at byte $at (of the gunzipped JSON) is longer than 1048576 bytes" "$WORK/e" ||
      fail "$mb MB name ($where): $(cat "$WORK/e") (expected byte $at)"
    awk -v s="$secs" 'BEGIN { exit !(s < 5) }' || fail "$mb MB name ($where): $secs s"
    [ $asan -eq 1 ] || [ "$kb" -lt 65536 ] || fail "$mb MB name ($where): $kb KB of memory"
    [ ! -e "$WORK/db" ] || fail "$mb MB name ($where): a database was written"
    echo "$mb MB name ($where): refused at byte $at in $secs s, $kb KB"
  done
done
"$P" parse -q --profiling-path "$WORK/cap.pt.trace.json" --database-path "$WORK/capdb" >/dev/null 2>"$WORK/e" ||
  fail "a name of exactly 1 MiB: $(cat "$WORK/e")"
echo "a name of exactly 1 MiB parses"
finish
