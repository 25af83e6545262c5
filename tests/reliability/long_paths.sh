#!/usr/bin/env bash
# Paths near PATH_MAX (issue 49 finding 9): a database path of about 4,080
# bytes that exists said "database directory not found", and messages
# longer than perfdb's 1,024-byte error record lost their end, which holds
# the reason.  Now:
#  1. a database at an absolute path of 4,085 bytes is checked; the commands
#     whose files would pass PATH_MAX (parse, report, microbench) fail with
#     exit 1 and one line that ends with the reason ("File name too long"),
#     its head and tail kept around "...", and the table is left as it was;
#  2. a relative path of 4,080 bytes from a directory 4,238 bytes deep (so
#     its absolute form passes PATH_MAX) is "cannot resolve the database
#     directory ...: File name too long", not "not found".
#   usage: long_paths.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
P=$(readlink -f "$PERFDB")
export PERFDB_SCHED=0 PERFDB_PREFLIGHT=0
DATA=$(readlink -f "$HERE/../data")
python3 - "$WORK" <<'PY'
import os, sys
w = sys.argv[1]
p = w + "/abs"
while len(p) < 4085:
    p += "/" + "d" * min(200, 4085 - len(p) - 1)
os.makedirs(p)
open(p + "/Add.csv", "w").write("OP State,Input Shapes,Input Data Types,Output Shapes,Profiling Average Duration(us)\r\n"
                                "dynamic,\"\"\"3,7\"\"\",DT_BF16,\"\"\"3,7\"\"\",1.5\r\n")
open(w + "/abs.path", "w").write(p)
deep = w + "/deep/" + "f" * 150
os.makedirs(deep)
r = "."
while len(r) < 4080:
    r += "/" + "g" * min(200, 4080 - len(r) - 1)
os.chdir(deep)
os.makedirs(r)   # relative: its absolute form is longer than PATH_MAX
open(w + "/deep.path", "w").write(deep)
open(w + "/rel.path", "w").write(r)
PY
A=$(cat "$WORK/abs.path")
[ ${#A} -eq 4085 ] || fail "the absolute path is ${#A} bytes"
before=$(md5sum "$A/Add.csv")
"$P" check "$A" >"$WORK/o" 2>&1 || fail "check of a 4,085-byte path: $(tail -c 300 "$WORK/o")"
grep -q "checked 1 table: 0 errors" "$WORK/o" || fail "check of a 4,085-byte path: $(tail -c 300 "$WORK/o")"
echo "check at 4,085 bytes: $(tail -1 "$WORK/o")"
for c in parse report microbench; do
  case $c in
    parse) args=(parse --profiling-path "$DATA/kineto" --database-path "$A") ;;
    report) args=(report --database-path "$A") ;;
    microbench) args=(microbench --backend cpu --force-device --database-path "$A") ;;
  esac
  "$P" "${args[@]}" >/dev/null 2>"$WORK/e"; rc=$?
  [ $rc -eq 1 ] || fail "$c at 4,085 bytes: exit $rc"
  msg=$(grep "error:" "$WORK/e")
  [ "$(echo "$msg" | grep -c "")" -eq 1 ] || fail "$c at 4,085 bytes: not one error line: $(head -c 300 "$WORK/e")"
  case "$msg" in
    *"File name too long") ;;
    *) fail "$c at 4,085 bytes: the reason is lost: ...$(echo "$msg" | tail -c 200)" ;;
  esac
  case "$msg" in *"..."*) ;; *) fail "$c at 4,085 bytes: no elision in a $(echo -n "$msg" | wc -c)-byte message" ;; esac
  [ ${#msg} -lt 1100 ] || fail "$c: a ${#msg}-byte message"
  echo "$c at 4,085 bytes: exit 1, ${#msg} bytes, ends '$(echo "$msg" | tail -c 60)'"
done
[ "$(md5sum "$A/Add.csv")" = "$before" ] || fail "the table changed"
[ -z "$(find "$WORK/abs" -name '.*.tmp.*' -o -name 'perfdb-*')" ] || fail "a stray file under the database"

cd "$(cat "$WORK/deep.path")" || fail "cd"
R=$(cat "$WORK/rel.path")
"$P" parse --profiling-path "$DATA/kineto" --database-path "$R" >/dev/null 2>"$WORK/e"; rc=$?
[ $rc -eq 1 ] || fail "parse into a relative path past PATH_MAX: exit $rc"
grep -q "error: cannot resolve the database directory '\./g.*': File name too long$" "$WORK/e" ||
  fail "parse into a relative path past PATH_MAX: $(head -c 200 "$WORK/e") ... $(tail -c 200 "$WORK/e")"
grep -q "not found" "$WORK/e" && fail "an existing directory was called not found"
echo "a relative path whose absolute form passes PATH_MAX: 'cannot resolve ...: File name too long'"
cd / && finish
