#!/usr/bin/env bash
# bench/sched_block: a header and one row per block size, each row's counts
# whole numbers within the blocks run (judged, missed and false alarms are
# each at most the blocks), the percentages and times finite and the wall
# times positive.  Rules, not values: the machine's noise sets the counts.
#   sched_block.sh PATH/TO/sched_block
set -u
bin=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$(timeout 120 "$bin" 20 2) || fail "exit $?"
python3 - "$out" <<'PY' || fail "output: $out"
import math, sys
lines = sys.argv[1].strip().split("\n")
assert lines[0].split()[:3] == ["block", "blocks", "judged"], lines[0]
rows = lines[1:]
assert [r.split()[0] for r in rows] == ["10", "100", "1000"], rows
for r in rows:
    f = r.split()
    n, judged, missed, false = (int(x) for x in f[2:6])
    assert n == 20 and 0 <= judged <= n and 0 <= missed <= n and 0 <= false <= judged, r
    wm, wx = float(f[6].rstrip("%")), float(f[7].rstrip("%"))
    assert math.isfinite(wm) and math.isfinite(wx) and 0 <= wm <= wx, r
    tm, tx = float(f[8].rstrip("ms")), float(f[9].rstrip("ms"))
    assert 0 < tm <= tx, r
PY
echo "sched_block: ok"
