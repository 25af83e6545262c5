#!/usr/bin/env bash
# The correctness check catches a wrong result: PERFDB_COMM_FAULT makes the
# last rank spoil one received element (docs/testing.md); the size is
# reported, its row not written, and the run exits 1.
. "$(dirname "$0")/lib.sh"
set +e
PERFDB_COMM_FAULT=1 mpirun -np 2 -x PERFDB_COMM_FAULT "$PERFDB" comm --ops all_gather \
  --num-devices 2 --bytes-grid 1024 --database-path db --iters 5 --warmup 1 --repeats 0 \
  > out.txt 2> err.txt
rc=$?
set -e
[ $rc -ne 0 ] || fail "a failed check must fail the run"
grep -q 'warning: check failed: all_gather num_devices=2 bytes=1024 DT_BF16: 1 wrong element(s), first on rank 1; row not written' err.txt ||
  fail "no check warning: $(cat err.txt)"
grep -q 'error: 1 size(s) failed the correctness check' err.txt || fail "no error: $(cat err.txt)"
[ ! -e db/hcom_allGather_.csv ] || fail "a row was written for a failed check"
echo ok
