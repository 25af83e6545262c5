#!/usr/bin/env bash
# No byte is written that perfdb would refuse to read (docs/reliability.md
# guarantee 15, issue 49 finding 3): a trace whose kernel name, op name or
# dtype string holds an overlong form (C0 80), a UTF-8-encoded surrogate
# (ED A0 80), a byte past U+10FFFF (F5 80 80 80) or a lone FF is refused
# (exit 1, a message naming the byte), the database it was parsed into keeps
# its bytes, and check then reads every table.  Before, the first three were
# written into the Kernels cell and every later command on the database
# failed with `invalid UTF-8 byte 0xc0`.
#   usage: utf8_poison.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
P=$PERFDB
mk() {   # out-file where bytes(hex)
  python3 - "$@" <<'PY'
import sys
out, where, hexs = sys.argv[1], sys.argv[2], sys.argv[3]
bad = bytes(int(x, 16) for x in hexs.split())
op, kern, dt = b"aten::mm", b"gemm_kernel", b"float"
if where == "kernel": kern = b"gemm" + bad
if where == "op": op = b"aten::mm" + bad
if where == "dtype": dt = b"fl" + bad
t = (b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "' + op + b'", "pid": 1, "tid": 1, "ts": 20, '
     b'"dur": 5, "args": {"External id": 9, "Input Dims": [[3, 4], [4, 5]], "Input type": ["' + dt + b'", "float"]}}, '
     b'{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 21, "dur": 1, '
     b'"args": {"correlation": 1, "External id": 9}}, '
     b'{"ph": "X", "cat": "kernel", "name": "' + kern + b'", "pid": 0, "tid": 7, "ts": 22, "dur": 2, '
     b'"args": {"correlation": 1, "External id": 9, "device": 0}}]}')
open(out, "wb").write(t)
PY
}
mk "$WORK/clean.pt.trace.json" none ""
"$P" parse -q --profiling-path "$WORK/clean.pt.trace.json" --database-path "$WORK/db" >/dev/null 2>"$WORK/e" ||
  fail "clean trace: $(cat "$WORK/e")"
before=$(tree_hashes "$WORK/db")
n=0
for where in kernel op dtype; do
  for bytes in "c0 80" "ed a0 80" "f5 80 80 80" "ff"; do
    mk "$WORK/p.pt.trace.json" $where "$bytes"
    "$P" parse -q --profiling-path "$WORK/p.pt.trace.json" --database-path "$WORK/db" >/dev/null 2>"$WORK/e"; rc=$?
    [ $rc -eq 1 ] || fail "$where with $bytes: parse exit $rc"
    grep -qi "utf-\?8" "$WORK/e" || fail "$where with $bytes: the message does not name the encoding: $(cat "$WORK/e")"
    [ "$(tree_hashes "$WORK/db")" = "$before" ] || fail "$where with $bytes: the database changed"
    "$P" check "$WORK/db" >/dev/null 2>"$WORK/e" || fail "$where with $bytes: check after it: $(cat "$WORK/e")"
    n=$((n + 1))
  done
done
echo "$n poisoned traces refused, the database unchanged and readable after each"
finish
