#!/usr/bin/env bash
# bench/closure.sh end to end on its smallest case (issue 46): a 2-layer
# decoder in bf16 decode at 1 thread, one repeat, its rows timed in the
# trace's op sequence (microbench --sequence-trace, the real PyTorch).  Checked by rule, not by
# value (the error is this machine's): the summary line is there, every
# figure in it (the A/A pair's and the prediction's noise too) is a finite number, the prediction is positive, and the
# coverage of the trace's op time is at least 99 %.  The suite runs with
# the bandwidth probe off (tests/CMakeLists.txt), so every measurement is
# clean: "median of 1 clean of 1".  Exit 77 (skipped)
# without PyTorch for /usr/bin/python3, as bench/closure.sh itself.
# usage: closure_smoke.sh BUILD_DIR
set -u
BUILD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
out=$(CLOSURE_CONTEXT=sequence CLOSURE_CASES=bf16:decode CLOSURE_THREADS=1 CLOSURE_LAYERS=2 CLOSURE_ROW_BUDGET=0.05 \
	bash "$HERE/../../bench/closure.sh" "$BUILD" 1 2>/dev/null)
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || { echo "FAIL: bench/closure.sh exited $rc"; echo "$out"; exit 1; }
line=$(grep '^closure, bf16 decode at 1 thread: ' <<<"$out")
[ -n "$line" ] || { echo "FAIL: no closure line"; echo "$out"; exit 1; }
summary=$(grep '^within 5 %: ' <<<"$out")
python3 - "$line" "$summary" <<'PY' || { echo "$out"; exit 1; }
import math, re, sys
m = re.match(r"closure, bf16 decode at 1 thread: predicted ([0-9.]+) ms \(its rows' noise \+-([0-9.]+) %\), measured ([0-9.]+) ms, "
             r"error ([-+][0-9.]+) % \(median of 1 clean of 1\), A/A ([-+][0-9.]+) \[([-+][0-9.]+), ([-+][0-9.]+)\] %, "
             r"coverage ([0-9.]+) %$", sys.argv[1])
if not m:
    sys.exit("FAIL: the line does not read: " + sys.argv[1])
pred, noise, meas, err, aa, lo, hi, cov = map(float, m.groups())
ok = all(math.isfinite(v) for v in (pred, noise, meas, err, aa, cov)) and pred > 0 and meas > 0 and cov >= 99.0
# every row was replayed with its samples: the noise is known, and a standard
# error of a mean of many samples is a small part of the prediction
ok = ok and 0 <= noise < 50
# one repeat: one A/A pair, so its median, min and max are the one figure
ok = ok and aa == lo == hi
# the error printed is the prediction against the measurement, to the rounding
ok = ok and abs((pred / meas - 1) * 100 - err) < 0.2
# the count agrees with the line: within 5 %, and within 5 % or this one case's |A/A|
want = "within 5 %%: %d of 1; within 5 %% or the case's own A/A noise (its largest |A/A|): %d of 1; measured clean: 1 of 1" % (
    abs(err) <= 5, abs(err) <= max(5, abs(aa)))
ok = ok and sys.argv[2] == want
print("ok" if ok else "FAIL: " + sys.argv[1] + " / " + sys.argv[2])
sys.exit(0 if ok else 1)
PY
