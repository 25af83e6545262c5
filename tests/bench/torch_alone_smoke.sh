#!/usr/bin/env bash
# bench/torch_alone.sh end to end on its smallest case: a 2-layer decoder in
# bf16 decode at 1 thread, one round (the real PyTorch).  Checked by rule,
# not by value (the ratios are this machine's): the case's header, one
# round's line, the three summary lines each with three finite positive
# ratios, and a per-row line for every row timed, its three figures
# positive.  Exit 77 (skipped) without PyTorch for /usr/bin/python3, as
# the bench itself.
# usage: torch_alone_smoke.sh BUILD_DIR
set -u
BUILD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
out=$(CLOSURE_LAYERS=2 TORCH_ALONE_CASES=bf16:decode bash "$HERE/../../bench/torch_alone.sh" "$BUILD" 1 2>/dev/null)
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || { echo "FAIL: bench/torch_alone.sh exited $rc"; echo "$out"; exit 1; }
python3 - "$out" <<'PY' || { echo "$out"; exit 1; }
import math, re, sys
lines = sys.argv[1].splitlines()
bad = []
if lines[:1] != ["== bf16 decode at 1 thread"]:
    bad.append("no case header")
if sum(1 for l in lines if l.startswith("round 1: ms, sequence ")) != 1:
    bad.append("not one round line")
m = [re.match(r"(\d+) rows timed \((\d+) GEMM\), (\d+) calls in the step", l) for l in lines]
m = [x for x in m if x]
if len(m) != 1:
    bad.append("no count line")
    sys.exit("FAIL: " + "; ".join(bad))
nrows, ngemm, ncalls = map(int, m[0].groups())
if not (0 < ngemm < nrows <= ncalls):
    bad.append("counts %d rows, %d GEMM, %d calls" % (nrows, ngemm, ncalls))
for part in ("others", "GEMMs", "all"):
    s = [l for l in lines if l.startswith("  %-6s " % part)]
    r = re.findall(r"(back2back|evicted|A/A) ([0-9.]+) \[([0-9.]+), ([0-9.]+)\]", s[0]) if s else []
    # one round: median, min and max are the one ratio, finite and positive
    if [x[0] for x in r] != ["back2back", "evicted", "A/A"] or \
            not all(math.isfinite(float(a)) and float(a) > 0 and a == b == c for _, a, b, c in r):
        bad.append("the %s line: %r" % (part, s))
per = [l for l in lines if re.match(r"  aten\.\S+ +x\d+ +sequence ", l)]
if len(per) != nrows:
    bad.append("%d per-row lines for %d rows" % (len(per), nrows))
for l in per:
    f = re.findall(r"(?:sequence|back2back|evicted) +([0-9.]+)", l)
    if len(f) != 3 or not all(float(x) > 0 for x in f):
        bad.append("per-row line: " + l)
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
PY
echo ok
