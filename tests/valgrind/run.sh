#!/usr/bin/env bash
# `make valgrind`: every CLI golden case (tests/cli/*/*/) with the binary
# under valgrind memcheck (perfdb-vg.sh).  Skipped, with the reason:
#   cli/comm/*, cli/comm-suite/*   start Open MPI (mpirun, shared-memory
#                                  transports): its own allocations and
#                                  uninitialised-byte reports drown ours,
#                                  and the MPI tests (tests/mpi) cover them
#                                  under LeakSanitizer
# A case fails when valgrind reports anything (its logs, one per process,
# are read whatever the case printed), or when its golden output differs --
# except for the cases below, whose output depends on the CPU: valgrind's
# virtual CPU has no AVX-512, so oneDNN has no bf16 matmul there and the
# MatMulV2 rows they expect to succeed fail (memcheck still has to be clean).
CPU_DEPENDENT="microbench/cpu_bad_rows microbench/cpu_qwen3_e2e microbench/cpu_mla_preprocess"
#   usage: run.sh BUILD_DIR [case-pattern]
set -u
BUILD=$1
PAT=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
CLI="$HERE/../cli"
command -v valgrind >/dev/null || { echo "valgrind is not installed (scripts/install-deps.sh installs it)"; exit 1; }
export PERFDB_VG_REAL
PERFDB_VG_REAL=$(cd "$BUILD/bin" && pwd)/perfdb
pass=0 fail=0 skip=0 failed=()
start=$(date +%s)
while IFS= read -r cmd; do
  case=$(dirname "$cmd"); rel=${case#"$CLI/"}
  case $rel in comm/*|comm-suite/*) skip=$((skip + 1)); continue ;; esac
  [ -n "$PAT" ] && [[ $rel != *$PAT* ]] && continue
  export PERFDB_VG_LOGS
  PERFDB_VG_LOGS=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-vg.XXXXXX")
  out=$(bash "$CLI/run_case.sh" "$HERE/perfdb-vg.sh" "$case" 2>&1)
  golden=$?
  report=$(find "$PERFDB_VG_LOGS" -name 'vg.*.log' -size +0 -exec cat {} +)
  rm -rf "$PERFDB_VG_LOGS"
  if [ -n "$report" ]; then
    fail=$((fail + 1)); failed+=("$rel (memcheck)")
    echo "== FAIL $rel: valgrind reports"; echo "$report" | head -80
  elif [ $golden -eq 0 ]; then
    pass=$((pass + 1))
  elif [[ " $CPU_DEPENDENT " == *" $rel "* ]]; then
    pass=$((pass + 1)); echo "== $rel: memcheck clean; golden output differs (no AVX-512 under valgrind)"
  else
    fail=$((fail + 1)); failed+=("$rel")
    echo "== FAIL $rel"; echo "$out" | head -60
  fi
done < <(find "$CLI" -name cmd -type f | sort)
echo "valgrind: $pass passed, $fail failed, $skip skipped (MPI) in $(( $(date +%s) - start )) s"
[ $fail -eq 0 ] || { printf '  %s\n' "${failed[@]}"; exit 1; }
