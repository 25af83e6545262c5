#!/usr/bin/python3
"""Rows timed alone against the same rows in the trace's op sequence, in
one process, interleaved (docs/measuring.md "Small ops in the model").

Usage: torch_alone.py REQUEST.json ROUNDS
  REQUEST.json is the torch backend's request for a database replayed with
  --sequence-trace (bench/torch_alone.sh writes one).  Each round times:
    sequence   every call of the step in its order, 3 passes, the median per call
    back2back  each timed row alone, its calls back to back (PERFDB_TORCH_EVICT=0)
    evicted    each timed row alone as the torch backend times it: 64 MiB read
               and small ops of other kinds before each call of a row that
               is not a GEMM (data/torch_replay.py Evict)
    sequence'  the sequence again: against the first, the A/A figure
  Each row's figure is its mean per call times its calls in the step.
  Prints the rounds, then each figure over the sequence's (median [min,
  max] over the rounds), for the GEMM rows, the others, and all; a round
  in which a row was left contended (its blocks dropped by the judge) has
  no figure for it ("nan") and is left out of that figure's ratios.  Then
  each row's figures (the second sequence's for the sequence), largest
  gap between the sequence and the evicted first.
"""
import collections
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.environ.get("PERFDB_TORCH_REPLAY_DIR",
                                  os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")))
import torch  # noqa: E402
import torch_replay as tr  # noqa: E402


def main():
    req = json.load(open(sys.argv[1]))
    rounds = int(sys.argv[2])
    torch.set_num_threads(int(req["threads"]))
    rows, seq = req["rows"], req["sequence"]
    # the steps as the backend's sequence builds them, and its timed rows
    steps, failed, _ = tr.build_steps(rows, seq)
    timed = sorted({k for k, _ in steps if not rows[k].get("untimed") and k not in failed})
    ncalls = collections.Counter(k for k, _ in steps)
    kind = {k: "gemm" if rows[k]["table"] in tr.GEMMS else "other" for k in timed}
    evict = tr.Evict()
    tot = collections.defaultdict(list)
    per_row = collections.defaultdict(lambda: collections.defaultdict(list))

    def sequence():
        per = collections.defaultdict(list)
        for _ in range(3):
            for i, (k, c) in enumerate(steps):
                a = time.perf_counter()
                c()
                per[i].append((time.perf_counter() - a) * 1e6)
        s = collections.Counter()
        for i, (k, _) in enumerate(steps):
            s[k] += statistics.median(per[i])
        return s

    with torch.no_grad():
        for _ in range(2):
            for _, c in steps:
                c()
        for r in range(rounds):
            sums = collections.Counter()
            s = sequence()
            for k in timed:
                sums["sequence " + kind[k]] += s[k]
                for name, ev in (("back2back", None), ("evicted", evict)):
                    m = tr.measure(rows[k], int(req["repeat"]), float(req["budget_s"]), ev)
                    # a row the judge left contended (its blocks dropped) leaves the
                    # round's figure unknown: nan, left out of the ratios below
                    sums[name + " " + kind[k]] += m.get("mean_us", float("nan")) * ncalls[k]
                    per_row[k][name].append(m.get("mean_us", float("nan")) * ncalls[k])
            s = sequence()
            for k in timed:
                sums["sequence' " + kind[k]] += s[k]
                per_row[k]["sequence"].append(s[k])
            for name in ("sequence", "back2back", "evicted", "sequence'"):
                sums[name + " all"] = sums[name + " gemm"] + sums[name + " other"]
            for key, v in sums.items():
                tot[key].append(v)
            print("round %d: ms, sequence %.2f (GEMMs %.2f, others %.2f), back2back %.2f (others %.2f), "
                  "evicted %.2f (others %.2f), sequence' %.2f" % (
                      r + 1, sums["sequence all"] / 1e3, sums["sequence gemm"] / 1e3, sums["sequence other"] / 1e3,
                      sums["back2back all"] / 1e3, sums["back2back other"] / 1e3, sums["evicted all"] / 1e3,
                      sums["evicted other"] / 1e3, sums["sequence' all"] / 1e3), flush=True)
    print("%d rows timed (%d GEMM), %d calls in the step; over the sequence's time, median [min, max] of %d rounds:"
          % (len(timed), sum(1 for k in timed if kind[k] == "gemm"), len(steps), rounds))
    for part in ("other", "gemm", "all"):
        line = []
        for name in ("back2back", "evicted", "sequence'"):
            q = [a / b for a, b in zip(tot[name + " " + part], tot["sequence " + part])
                 if b > 0 and not math.isnan(a)]
            line.append("%s %.2f [%.2f, %.2f]" % (name if name != "sequence'" else "A/A", statistics.median(q),
                                                 min(q), max(q)) if q else name + " -")
        print("  %-6s %s" % ({"other": "others", "gemm": "GEMMs", "all": "all"}[part], "   ".join(line)))
    # per row, the largest gaps first: us in the step (its calls), medians over the rounds
    print("per row, us in the step (calls x mean), medians of the rounds, largest |sequence - evicted| first:")
    med = {k: {n: statistics.median([x for x in v if not math.isnan(x)] or [float("nan")])
               for n, v in per_row[k].items()} for k in timed}
    for k in sorted(timed, key=lambda k: -abs(med[k]["sequence"] - med[k]["evicted"])):
        r = rows[k]
        print("  %-14s x%-3d sequence %9.0f  back2back %9.0f  evicted %9.0f  %s %s" % (
            r["table"], ncalls[k], med[k]["sequence"], med[k]["back2back"], med[k]["evicted"],
            r["shapes"].strip('"')[:48], r["dtypes"][:28]))


if __name__ == "__main__":
    main()
