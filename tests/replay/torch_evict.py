#!/usr/bin/python3
"""The torch backend's rows timed alone meet the caches as a model leaves
them (data/torch_replay.py Evict, docs/measuring.md "Small ops in the
model"): before each timed call of a row that is not a GEMM and whose
inputs are below 64 MiB, 64 MiB is read and small ops of other kinds run;
a GEMM (its weights rotate instead) and a row from 64 MiB (its data streams
anyway) run back to back, as do all rows with PERFDB_TORCH_EVICT=0; and
a GEMM's rotated operands go through copies, 64 MiB of them (at most 64).

Checked by counting the evictions, and by rule, not by value: a small op
after the eviction takes longer than back to back (the median of 5
interleaved pairs), on any CPU whose caches hold less than 64 MiB of the
op's code and data.  Exit 77 (skipped) without PyTorch."""
import os
import statistics
import subprocess
import sys

try:
    import torch  # noqa: F401
except ImportError:
    print("no PyTorch for this python: skipped")
    sys.exit(77)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "data"))
import torch_replay  # noqa: E402

os.environ["PERFDB_SCHED"] = "0"   # nothing dropped: every timed call is a sample
torch.set_num_threads(1)


class Counted(torch_replay.Evict):
    def __init__(self):
        super().__init__()
        self.n = 0

    def __call__(self):
        self.n += 1
        super().__call__()


def row(table, shapes, dtypes):
    return {"table": table, "line": 2, "shapes": '"%s"' % shapes, "dtypes": dtypes,
            "out_dtypes": dtypes.split(";")[0], "strides": ""}


bad = []
mean = row("aten.mean", "8,1,1024;;;", "FLOAT;;;")
cases = [
    # (what, row, evicted before each timed call)
    ("a decode RMSNorm's mean, 32 KiB", mean, True),
    ("a bf16 add, 16 KiB each side", row("aten.add", "8,1,1024;8,1,1024;", "DT_BF16;DT_BF16;"), True),
    ("a decode linear: its weight rotates instead", row("aten.linear", "8,1,1024;1024,1024;", "DT_BF16;DT_BF16;"), False),
    ("an add of 2 x 16 MiB: the LLC keeps part of it back to back",
     row("aten.add", "1,1024,4096;1,1024,4096;", "FLOAT;FLOAT;"), True),
    ("an add of 2 x 32 MiB: its data streams anyway", row("aten.add", "1,2048,4096;1,2048,4096;", "FLOAT;FLOAT;"), False),
]
for what, r, want in cases:
    ev = Counted()
    res = torch_replay.measure(r, 5, 0.01, ev)
    if res.get("status") != "ok":
        bad.append("%s: %r" % (what, res))
        continue
    # one eviction a timed call: at least the kept samples, at most every call timed
    if want and not res["samples"] <= ev.n <= res["samples"] + 10000:
        bad.append("%s: %d evictions for %d samples" % (what, ev.n, res["samples"]))
    if not want and ev.n:
        bad.append("%s: evicted %d times" % (what, ev.n))
    if want and ev.n < 5:
        bad.append("%s: %d evictions, 5 samples asked" % (what, ev.n))

# the GEMM rotation holds 64 MiB (at most 64 copies): copies worked by hand
MiB = 1 << 20
for size, want in ((0, 1), (1024, 64), (2 * MiB, 32), (16.8e6, 4), (33.6e6, 2), (64 * MiB - 1, 2),
                   (64 * MiB, 1), (200 * MiB, 1)):
    got = torch_replay.rotation_copies(int(size))
    if got != want:
        bad.append("rotation_copies(%d): %d, expected %d" % (size, got, want))

# the effect, by rule: evicted against back to back, interleaved
ev = torch_replay.Evict()
pairs = []
for _ in range(5):
    cold = torch_replay.measure(mean, 20, 0.02, ev)["median_us"]
    warm = torch_replay.measure(mean, 20, 0.02, None)["median_us"]
    pairs.append(cold / warm)
if statistics.median(pairs) <= 1.0:
    bad.append("the mean after the eviction is not slower than back to back: cold/warm %s"
               % " ".join("%.2f" % p for p in pairs))

# the whole replay (main): one Evict for the run, used by its small rows,
# none with PERFDB_TORCH_EVICT=0
import json  # noqa: E402
import tempfile  # noqa: E402
made = []


class Made(Counted):
    def __init__(self):
        super().__init__()
        made.append(self)


torch_replay.Evict = Made
with tempfile.TemporaryDirectory() as d:
    req, out = os.path.join(d, "request.json"), os.path.join(d, "result.json")
    with open(req, "w") as f:
        json.dump({"threads": 1, "repeat": 3, "budget_s": 0.01, "rows": [mean]}, f)
    for setting, want in (("1", True), ("0", False)):
        os.environ["PERFDB_TORCH_EVICT"] = setting
        made.clear()
        sys.argv = ["torch_replay.py", req, out]
        torch_replay.main()
        with open(out) as f:
            st = json.load(f)["rows"][0].get("status")
        n = sum(m.n for m in made)
        if st != "ok" or (n >= 3) != want or (not want and (made or n)):
            bad.append("main with PERFDB_TORCH_EVICT=%s: status %s, %d Evict made, %d evictions"
                       % (setting, st, len(made), n))

for b in bad:
    print("FAIL: " + b)
print("torch_evict: %d case(s) failed" % len(bad) if bad else "torch_evict: ok")
sys.exit(1 if bad else 0)
