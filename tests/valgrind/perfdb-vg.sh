#!/usr/bin/env bash
# The perfdb binary under valgrind memcheck, for tests/valgrind/run.sh:
# $PERFDB_VG_REAL is the real binary.  Any invalid access or definite leak
# makes the command exit 99 (and print valgrind's report on stderr), which
# fails the golden case that ran it.
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
  --show-leak-kinds=definite --suppressions="$(dirname "$0")/perfdb.supp" \
  --log-fd=2 "$PERFDB_VG_REAL" "$@"
