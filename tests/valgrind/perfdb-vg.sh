#!/usr/bin/env bash
# The perfdb binary under valgrind memcheck, for tests/valgrind/run.sh:
# $PERFDB_VG_REAL is the real binary.  Any invalid access or definite leak
# makes the command exit 99 and writes valgrind's report to
# $PERFDB_VG_LOGS/vg.<pid>.log (empty otherwise: -q), which run.sh reads.
# microbench re-executes itself through /proc/self/exe to fix its OpenMP
# thread count; under valgrind that path is valgrind's own tool binary, so
# the re-exec is turned off (PERFDB_REEXEC: the same process goes on).
export PERFDB_REEXEC=1
# microbench's bandwidth probe reads 64 MiB six times per row: seconds under
# memcheck, so it is off unless a case turns it on (cpu_contention does: its
# readings come from a test hook, without the buffer)
export PERFDB_PROBE=${PERFDB_PROBE-0}
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
  --show-leak-kinds=definite --suppressions="$(dirname "$0")/perfdb.supp" \
  --log-file="${PERFDB_VG_LOGS:-/tmp}/vg.%p.log" "$PERFDB_VG_REAL" "$@"
