#!/usr/bin/env bash
# Backend modules (src/backend/module.h, docs/cuda.md "The module"):
#  1. the perfdb binary has no CUDA or NCCL library among its ELF NEEDED
#     entries (the cuda module, where built, has them), and no oneDNN
#     (src/backend/cpu/dnnl_load.c opens it);
#  2. --version, parse and devices work whatever state the module is in;
#  3. a missing module, a module of another API version and a module whose
#     libraries are missing each give one line for that backend only:
#     microbench --backend cuda and comm --backend nccl exit 1.
#   usage: modules.sh PERFDB FAKE_DIR (FAKE_DIR holds version/ and needs/)
set -u
P=$1; FAKE=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-mod.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export PERFDB_DATA_ROOT="$WORK/no-such-root"
unset PERFDB_MODULE_DIR
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

bad=$(needed "$P" | grep -Ei 'cuda|cublas|cupti|nccl|nvidia')
[ -z "$bad" ] || fail "perfdb links GPU libraries: $bad"
# nor oneDNN (or the C++ runtime it brings): the CPU backend opens it on use.
# The sanitizer build links it on purpose (CMakeLists.txt: LSan and dlopen'd TLS).
if ! needed "$P" | grep -q '^libasan'; then
  bad=$(needed "$P" | grep -Ei 'dnnl|stdc\+\+')
  [ -z "$bad" ] || fail "perfdb links oneDNN at start: $bad"
fi
echo "perfdb NEEDED: $(needed "$P" | tr '\n' ' ')"
mod=$(dirname "$P")/../$(sed -n 's/^PERFDB_MODULEDIR_REL=//p' "$FAKE/moduledir")/libperfdb-cuda.so
if "$P" --version | grep -q "cuda and nccl"; then
  [ -f "$mod" ] || fail "the cuda module is not beside the binary: $mod"
  needed "$mod" | grep -q '^libcudart' || fail "the cuda module does not link libcudart"
  echo "cuda module: $(needed "$mod" | grep -Ei 'cuda|cublas|cupti|nccl' | tr '\n' ' ')"
fi

mkdir -p "$WORK/empty" "$WORK/db"
expect() {  # DIR WANT-REGEX LABEL
  local dir=$1 want=$2 label=$3 rc
  PERFDB_MODULE_DIR=$dir "$P" microbench --backend cuda --force-device --database-path "$WORK/db" \
    >/dev/null 2>"$WORK/e"; rc=$?
  [ $rc -eq 1 ] || fail "$label, microbench: exit $rc"
  [ "$(wc -l < "$WORK/e")" -eq 1 ] || fail "$label, microbench: not one line: $(cat "$WORK/e")"
  grep -Eq "^perfdb microbench: error: --backend cuda: $want" "$WORK/e" ||
    fail "$label, microbench: $(cat "$WORK/e")"
  PERFDB_MODULE_DIR=$dir "$P" comm --backend nccl --ops all_reduce --num-devices 1 --bytes-grid 1024 \
    --output-csv "$WORK/out.csv" >/dev/null 2>"$WORK/e"; rc=$?
  [ $rc -eq 1 ] || fail "$label, comm: exit $rc"
  grep -Eq "^perfdb comm: error: --backend nccl: $want" "$WORK/e" || fail "$label, comm: $(cat "$WORK/e")"
  [ ! -e "$WORK/out.csv" ] || fail "$label, comm wrote its table"
  # everything else is untouched by the module's state
  PERFDB_MODULE_DIR=$dir "$P" --version >/dev/null || fail "$label: --version failed"
  PERFDB_MODULE_DIR=$dir "$P" devices >/dev/null || fail "$label: devices failed"
  PERFDB_MODULE_DIR=$dir "$P" microbench --backend cpu --help >/dev/null || fail "$label: cpu help failed"
  echo "$label: $(head -1 "$WORK/e")"
}
expect "$WORK/empty" "module '$WORK/empty/libperfdb-cuda.so' is not installed" "missing module"
expect "$FAKE/version" "module '$FAKE/version/libperfdb-cuda.so' has API version 999 \(backend 0\); this perfdb needs [0-9]+" "another API version"
expect "$FAKE/needs" "cannot load module '$FAKE/needs/libperfdb-cuda.so': libperfdb_fake_stub.so: cannot open shared object file" "a missing library"
[ $FAILS -eq 0 ] || { echo "$FAILS failure(s)"; exit 1; }
echo ok
