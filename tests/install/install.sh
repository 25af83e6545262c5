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
need share/perfdb/torch_replay.py
need share/perfdb/op_mapping/vllm0.18.0_torch2.9.0_cann8.5.yaml
need share/perfdb/op_mapping/PROVENANCE.md
need share/perfdb/op_mapping/LICENSE.MulanPSL2
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
# the installed binary runs the installed torch replay: an interpreter
# stand-in records the script it was given and answers the one row
mkdir -p "$PREFIX/tw/db"
{
  printf 'Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats\r\n'
  printf '%s\r\n' '"""8,8;8,8""",FLOAT;FLOAT,ND;ND,"""8,8""",FLOAT,ND'
} >"$PREFIX/tw/db/aten.mm.csv"
cat >"$PREFIX/tw/py" <<'SH'
#!/bin/sh
[ "$1" = "-c" ] && exit 0
echo "$1" >"$(dirname "$0")/script"
printf '{"torch": "0", "rows": [{"table": "aten.mm", "line": 2, "status": "failed", "reason": "x"}]}' >"$3"
SH
chmod +x "$PREFIX/tw/py"
(cd "$PREFIX/tw" && env -u PERFDB_DATA_DIR PERFDB_TORCH_PYTHON="$PREFIX/tw/py" "$PREFIX/bin/perfdb" microbench \
	--backend torch --database-path db >/dev/null 2>&1)
[ "$(cat "$PREFIX/tw/script" 2>/dev/null)" = "$PREFIX/bin/../share/perfdb/torch_replay.py" ] ||
  { echo "the installed torch backend ran '$(cat "$PREFIX/tw/script" 2>/dev/null)'"; fail=1; }
# the cuda module, where built: installed beside the binary's lib/, found and
# loaded by the installed binary (no GPU here: the module answers itself)
if "$PREFIX/bin/perfdb" --version | grep -q "cuda and nccl"; then
  mod=$(find "$PREFIX" -name libperfdb-cuda.so | head -1)
  [ -n "$mod" ] || { echo "missing: the cuda module"; fail=1; }
  "$PREFIX/bin/perfdb" --version | grep -q "module $(realpath "$mod" 2>/dev/null), loaded on use" ||
    { echo "installed --version does not name the installed module: $("$PREFIX/bin/perfdb" --version | sed -n 2p)"; fail=1; }
  mkdir -p "$PREFIX/work"
  out=$(cd "$PREFIX/work" && CUDA_VISIBLE_DEVICES= env -u PERFDB_MODULE_DIR "$PREFIX/bin/perfdb" microbench \
        --backend cuda --force-device --database-path db 2>&1)
  case $out in *"--backend cuda: no CUDA device found"*) ;;
    *) echo "the installed binary did not load the installed module: $out"; fail=1;; esac
fi
[ $fail -eq 0 ] && echo "ok: installed under $PREFIX"
exit $fail
