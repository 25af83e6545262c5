#!/usr/bin/env bash
# `perfdb predict` on a 10,000-call trace: its wall time beside `perfdb parse`
# of the same trace (reading the same file, the floor of any answer from
# it) and the target, in one run.
#
#   bash bench/predict.sh [BUILD_DIR] [CALLS]
#
# Writes under $TMPDIR (deleted at exit) a Kineto CPU trace of CALLS
# top-level calls (default 10000) as a decoder's forward records them: per
# layer RMSNorm's pow/mean/rsqrt/mul, four linears each with t + addmm
# inside, matmul/softmax attention, SiLU MLP, adds and views; the token
# count varies over 16 values so the database has a token axis.  The
# database is `perfdb parse` of that trace, with every other token count's
# rows removed from the linear and matmul tables, so part of the calls are
# interpolated and the lookups' slow path is timed too.  Best of 5, page
# cache warm.  Target (issue 46): <= 1 s for 10,000 calls.
set -eu
BUILD=${1:-build}
CALLS=${2:-10000}
PERFDB=$BUILD/bin/perfdb
[ -x "$PERFDB" ] || { echo "build first: make (missing $PERFDB)" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-bench-predict.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

python3 - "$TMP/step.pt.trace.json" "$CALLS" <<'PY'
import json, sys
out, calls = sys.argv[1], int(sys.argv[2])
BF = "c10::BFloat16"
H, F = 1024, 2816
ev, ts, n, ext = [], 0, 0, 0
def op(name, t, dur, dims, types):
    global ext
    ext += 1
    ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": t,
               "dur": dur, "args": {"External id": ext, "Input Dims": dims, "Input type": types}})
def top(name, dur, dims, types, kids=()):
    global ts, n
    op(name, ts, dur, dims, types)
    k = ts + 1
    for kn, kd, kdims, ktypes in kids:
        op(kn, k, kd, kdims, ktypes)
        k += kd + 1
    ts += dur + 3
    n += 1
layer = 0
while n < calls:
    T = 16 * (1 + layer % 16)
    lin = lambda o, i: (
        "aten::linear", 40, [[T, i], [o, i], []], [BF, BF, ""],
        [("aten::t", 2, [[o, i]], [BF]), ("aten::addmm", 30, [[o], [T, i], [i, o], [], []],
                                                           [BF, BF, BF, "Scalar", "Scalar"])])
    seq = [
        ("aten::pow", 5, [[T, H], []], ["float", "Scalar"], []),
        ("aten::mean", 6, [[T, H], [], [], []], ["float", "", "Scalar", ""], []),
        ("aten::rsqrt", 2, [[T, 1]], ["float"], []),
        ("aten::mul", 4, [[T, H], [T, 1]], ["float", "float"], []),
        lin(H, H), lin(H, H), lin(H, H),
        ("aten::view", 1, [[T, H], []], [BF, "Scalar"], []),
        ("aten::matmul", 20, [[16, T, 64], [16, 64, T]], [BF, BF], []),
        ("aten::softmax", 8, [[16, T, T], [], []], [BF, "Scalar", ""], []),
        ("aten::matmul", 20, [[16, T, T], [16, T, 64]], [BF, BF], []),
        lin(H, H),
        ("aten::add", 3, [[T, H], [T, H], []], [BF, BF, "Scalar"], []),
        lin(F, H),
        ("aten::silu", 4, [[T, F]], [BF], []),
        lin(H, F),
        ("aten::add", 3, [[T, H], [T, H], []], [BF, BF, "Scalar"], []),
    ]
    for s in seq:
        if n >= calls:
            break
        top(*s)
    layer += 1
with open(out, "w") as f:
    json.dump({"schemaVersion": 1, "traceEvents": ev}, f)
print("trace: %d top-level calls, %d events, %.1f MB" % (n, len(ev), len(json.dumps(ev)) / 1e6),
      file=sys.stderr)
PY

"$PERFDB" parse --profiling-path "$TMP/step.pt.trace.json" --database-path "$TMP/db" --quiet >/dev/null
# every other token count of the GEMMs only by interpolation
python3 - "$TMP/db" <<'PY'
import csv, sys
for name in ("aten.linear", "aten.matmul", "aten.addmm"):
    p = "%s/%s.csv" % (sys.argv[1], name)
    rows = list(csv.reader(open(p, newline="")))
    keep = [rows[0]]
    for r in rows[1:]:
        tok = int(r[rows[0].index("Input Shapes")].strip('"').split(";")[0].split(",")[-2 if name == "aten.matmul" else 0])
        if (tok // 16) % 2 == 1 or tok in (16, 256):
            keep.append(r)
    csv.writer(open(p, "w", newline=""), lineterminator="\r\n").writerows(keep)
PY

best() {   # command... -> best wall seconds of 5
  local b=999999 t0 t1
  for _ in 1 2 3 4 5; do
    t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N)
    b=$(awk -v a="$t0" -v c="$t1" -v b="$b" 'BEGIN { d = c - a; print (d < b) ? d : b }')
  done
  echo "$b"
}
cat "$TMP/step.pt.trace.json" >/dev/null
t_parse=$(best "$PERFDB" parse --profiling-path "$TMP/step.pt.trace.json" --database-path "$TMP/db2" --quiet)
t_pred=$(best "$PERFDB" predict --trace "$TMP/step.pt.trace.json" --database-path "$TMP/db" --json)
"$PERFDB" predict --trace "$TMP/step.pt.trace.json" --database-path "$TMP/db" --json >"$TMP/p.json"
python3 - "$TMP/p.json" "$t_parse" "$t_pred" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
tp, tq = float(sys.argv[2]), float(sys.argv[3])
a = j["answers"]
print("calls: %d top-level (%d nested); hit %d, interpolated %d, children %d, zero-cost %d, missing %d"
      % (j["calls"], j["nested_calls"], a["hit"]["calls"], a["interpolated"]["calls"],
         a["children"]["calls"], a["zero-cost"]["calls"], a["missing"]["calls"]))
print("%-44s %10s" % ("", "seconds"))
print("%-44s %10.3f" % ("perfdb parse of the same trace (reference)", tp))
print("%-44s %10.3f" % ("perfdb predict (ours)", tq))
print("%-44s %10.3f" % ("target (issue 46)", 1.0))
print("verdict: %s" % ("meets the target" if tq <= 1.0 else "MISSES the target"))
PY
