#!/usr/bin/env bash
# `make valgrind`: every CLI golden case (tests/cli/*/*/) with the binary
# under valgrind memcheck (perfdb-vg.sh).  Skipped, with the reason:
#   cli/comm/*, cli/comm-suite/*   start Open MPI (mpirun, shared-memory
#                                  transports): its own allocations and
#                                  uninitialised-byte reports drown ours,
#                                  and the MPI tests (tests/mpi) cover them
#                                  under LeakSanitizer
# Cases whose command starts a child perfdb through Python or a watchdog
# (--execution-mode subprocess) check the parent only.
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
  if out=$(bash "$CLI/run_case.sh" "$HERE/perfdb-vg.sh" "$case" 2>&1); then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); failed+=("$rel")
    echo "== FAIL $rel"; echo "$out" | head -60
  fi
done < <(find "$CLI" -name cmd -type f | sort)
echo "valgrind: $pass passed, $fail failed, $skip skipped (MPI) in $(( $(date +%s) - start )) s"
[ $fail -eq 0 ] || { printf '  %s\n' "${failed[@]}"; exit 1; }
