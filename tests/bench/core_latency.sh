#!/usr/bin/env bash
# bench/core_latency, which bench/comm.sh trusts to tell the VM's two states
# apart: one positive figure in ns on stdout; a bad ROUND_TRIPS exits 2 and a
# single allowed CPU exits 1, each with one line naming the problem (a probe
# that hung or printed nothing would stall or break the bench's rounds).
#   core_latency.sh PATH/TO/core_latency
set -u
bin=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "skip: needs 2 CPUs, this machine has $(nproc)"; exit 77; }

out=$(timeout 60 "$bin" 2000) || fail "exit $? on 2 CPUs"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "expected one line, got: $out"
python3 -c 'import math,sys; v=float(sys.argv[1]); sys.exit(0 if math.isfinite(v) and 0 < v < 1e6 else 1)' "$out" \
  || fail "not a latency in ns: $out"

err=$("$bin" 0 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] || fail "ROUND_TRIPS 0: exit $rc, want 2"
[[ $err == "core_latency: ROUND_TRIPS must be >= 1" ]] || fail "ROUND_TRIPS 0: message '$err'"

first=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
err=$(taskset -c "$first" "$bin" 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] || fail "one CPU: exit $rc, want 1"
[[ $err == "core_latency: needs 2 CPUs, this process may use 1" ]] || fail "one CPU: message '$err'"
echo "ok: $out ns"
