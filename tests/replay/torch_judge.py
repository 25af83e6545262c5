#!/usr/bin/python3
"""The torch backend's contamination judge (data/torch_replay.py
foreign_wait_ns): a block's run-queue wait counts against it only where
another process caused it, not where the framework's own threads (OpenBLAS's
beside OpenMP's) wanted more CPUs than the process may use.  Cases worked by
hand for a process allowed n CPUs (1, 2 and 16: the rule, not this
machine), block wall time w; and the whole judgement of a block, with the
other processes running at its edges against the CPUs left free, and
PERFDB_SCHED=0 judging nothing.  Exit 77 (skipped)
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
# the whole judgement (contaminated): readings (run, wait, other processes'
# running tasks) around a block of w ns, for a process allowed 2 CPUs with
# free CPUs left to others
os.environ["PERFDB_SCHED"] = "1"
judged = [
    # (what happened, before, after, free, dropped)
    ("2 threads busy, nobody else", (0, 0, 0), (2 * w, 0, 0), 0, False),
    ("another process waited us out for w/10: 10 % > 5 %", (0, 0, 0), (2 * w - w / 10, w / 10, 0), 0, True),
    ("w/50 of foreign wait: 2 %, kept", (0, 0, 0), (2 * w - w / 50, w / 50, 0), 0, False),
    ("two busy loops at the end, no CPU left free", (0, 0, 0), (2 * w, 0, 2), 0, True),
    ("one busy loop at the start, no CPU left free", (0, 0, 1), (2 * w, 0, 0), 0, True),
    ("one busy loop, one CPU left free", (0, 0, 1), (2 * w, 0, 1), 1, False),
    ("two busy loops, one CPU left free", (0, 0, 2), (2 * w, 0, 1), 1, True),
]
for what, before, after, free, want in judged:
    got = torch_replay.contaminated(before, after, w, 2, free)
    if got != want:
        print("FAIL: %s: dropped %s, expected %s" % (what, got, want))
        bad = 1
# PERFDB_SCHED=0 judges nothing, as perfdb's own replay
os.environ["PERFDB_SCHED"] = "0"
if torch_replay.contaminated((0, 0, 5), (0, w, 5), w, 2, 0):
    print("FAIL: PERFDB_SCHED=0 still judged")
    bad = 1
if not bad:
    print("ok: 5 wait cases for 1, 2 and 16 CPUs, %d judgements" % (len(judged) + 1))
sys.exit(bad)
