#!/usr/bin/env bash
# Start-up cost of the binary users get: `perfdb --version` and a small
# parse (one table), wall time and peak RSS, beside the
# same commands with the CUDA libraries loaded at start as they were while
# perfdb linked them (LD_PRELOAD of the cuda module's own CUDA and NCCL
# libraries: what the dynamic loader did for the old NEEDED entries).
#
#   bash bench/startup.sh [BUILD_DIR] [RUNS]
#
# Each figure is the median of RUNS (default 21) runs, measured by
# bench/peak_rss (wait4's ru_maxrss).  Target (issue "One big step for the
# architecture"): <= 10 ms and <= 16 MB for both commands.
set -eu
BUILD=${1:-build}
RUNS=${2:-21}
P=$BUILD/bin/perfdb
RSS=$BUILD/peak_rss
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-startup.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mod=$("$P" --version | sed -n "s/.* in module \(.*\.so\), loaded on use.*/\1/p")
preload=""
if [ -n "$mod" ]; then
  for lib in $(readelf -d "$mod" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -Ei 'cuda|cublas|cupti|nccl'); do
    path=$(ldd "$mod" | awk -v l="$lib" '$1 == l { print $3 }')
    [ -n "$path" ] && preload="$preload${preload:+:}$path"
  done
fi
measure() {  # LABEL PRELOAD CMD... -> "ms MB" medians
  local pre=$1; shift
  : > "$TMP/m"
  for _ in $(seq 1 "$RUNS"); do
    rm -rf "$TMP/db"
    if [ -n "$pre" ]; then LD_PRELOAD=$pre "$RSS" -o "$TMP/m" "$@" >/dev/null 2>&1
    else "$RSS" -o "$TMP/m" "$@" >/dev/null 2>&1; fi
  done
  local ms mb
  ms=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' "$TMP/m" | sort -g | awk '{ v[NR] = $1 } END { printf "%.1f", 1000 * v[int((NR + 1) / 2)] }')
  mb=$(sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p' "$TMP/m" | sort -g | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] / 1024 }')
  printf '%7s ms %7s MB' "$ms" "$mb"
}
# the small parse: one kernel type, 3 launches, one table written (its
# fsyncs included); the example profile (37 tables, 74 fsyncs) for scale
mkdir -p "$TMP/small"
{ printf 'Type,Input Shapes,Input Data Types,Input Formats,Output Shapes,Duration(us)\r\n'
  for d in 11.5 12.0 11.8; do printf 'MatMulV2,"""4,8;8,16""",DT_BF16;DT_BF16,ND;ND,"""4,16""",%s\r\n' $d; done
} > "$TMP/small/kernel_details.csv"
cp -a "$(dirname "$0")/../examples/profiling" "$TMP/prof"
printf '%-44s %-22s %-22s\n' "command (median of $RUNS)" "perfdb as built" "CUDA loaded at start"
for label in version small example; do
  case $label in
    version) cmd=("$P" --version); name="perfdb --version";;
    small) cmd=("$P" parse -q --profiling-path "$TMP/small/kernel_details.csv" --database-path "$TMP/db")
           name="perfdb parse (1 table)";;
    example) cmd=("$P" parse -q --profiling-path "$TMP/prof" --database-path "$TMP/db")
             name="perfdb parse (examples/profiling, 37 tables)";;
  esac
  ours=$(measure "" "${cmd[@]}")
  if [ -n "$preload" ]; then before=$(measure "$preload" "${cmd[@]}"); else before="(no cuda module)"; fi
  printf '%-44s %-22s %-22s\n' "$name" "$ours" "$before"
done
echo "target: <= 10 ms and <= 16 MB as built (--version, the 1-table parse)"
