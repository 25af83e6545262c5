#!/usr/bin/python3
"""The torch backend's contamination judge (data/torch_replay.py
foreign_wait_ns): a block's run-queue wait counts against it only where
another process caused it, not where the framework's own threads (OpenBLAS's
beside OpenMP's) wanted more CPUs than the process may use.  Cases worked by
hand for a process allowed n CPUs (1, 2 and 16: the rule, not this
machine), block wall time w.  Exit 77 (skipped)
without PyTorch: torch_replay.py imports it."""
import os
import sys

try:
    import torch  # noqa: F401
except ImportError:
    print("no PyTorch for this python: skipped")
    sys.exit(77)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data"))
import torch_replay  # noqa: E402

w = 1e6
bad = 0
# the same cases for a process allowed 1, 2 and 16 CPUs
for n in (1, 2, 16):
    cases = [
        # (what happened, run, wait, the foreign wait)
        ("n threads busy, nobody else", n * w, 0.0, 0.0),
        ("one thread more than CPUs, nobody else: it waits for its siblings", n * w, w, 0.0),
        ("one thread more than CPUs, and another process held a CPU for w/4", n * w - w / 4, w + w / 4, w / 4),
        ("n threads, another process held a CPU for w/2", n * w - w / 2, w / 2, w / 2),
        ("idle: no demand, no wait", 0.0, 0.0, 0.0),
    ]
    for what, run, wait, want in cases:
        got = torch_replay.foreign_wait_ns(run, wait, w, n)
        if abs(got - want) > 1e-6:
            print("FAIL: %d CPUs: %s: foreign wait %.0f ns, expected %.0f" % (n, what, got, want))
            bad = 1
if not bad:
    print("ok: 5 cases for 1, 2 and 16 CPUs")
sys.exit(bad)
