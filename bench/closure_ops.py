#!/usr/bin/python3
"""Per op: the trace, perfdb's replay, and the framework's own kernel alone.

Usage: closure_ops.py CASE_DIR --threads N [--top K]
  CASE_DIR is one case of bench/closure.sh kept with CLOSURE_KEEP=1 (it
  holds step.pt.trace.json and db/, replayed).  For the K rows of
  `perfdb predict --json` with the most trace time, prints per call:
    trace     the op inside the model, under the profiler
    perfdb    the database's answer (perfdb microbench --backend cpu)
    torch     the same aten op called alone through PyTorch on tensors of
              the row's shapes and dtypes (median of 20 calls after 3), the
              question being whether an isolated replay of the framework's
              own kernel tracks the in-model time better than perfdb's
              kernels do (docs/measuring.md "Closure").
  Scalars the trace does not record are the model's: softmax over the last
  dim, pow 2, mean over the last dim, div by 8.0.
Needs /usr/bin/python3 with python3-torch, and perfdb on PATH or $PERFDB.
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import torch
import torch.nn.functional as F

DT = {"DT_BF16": torch.bfloat16, "BF16": torch.bfloat16, "FLOAT": torch.float32,
      "DT_FLOAT": torch.float32, "FLOAT16": torch.float16, "DT_FLOAT16": torch.float16}


def tensors(shapes, dtypes):
    out = []
    for s, d in zip(shapes.strip('"').split(";"), dtypes.split(";")):
        if s and d in DT:
            out.append(torch.randn(*[int(x) for x in s.split(",")]).to(DT[d]))
        else:
            out.append(None)
    return out


def call(table, t):
    a = t[0]
    b = t[1] if len(t) > 1 else None
    ops = {
        "aten.linear": lambda: F.linear(a, b, t[2] if len(t) > 2 else None),
        "aten.matmul": lambda: torch.matmul(a, b),
        "aten.bmm": lambda: torch.bmm(a, b),
        "aten.mm": lambda: torch.mm(a, b),
        "aten.softmax": lambda: torch.softmax(a, -1),
        "aten._softmax": lambda: torch.softmax(a, -1),
        "aten.silu": lambda: F.silu(a),
        "aten.add": lambda: a + (b if b is not None else 1.0),
        "aten.sub": lambda: a - (b if b is not None else 1.0),
        "aten.mul": lambda: a * (b if b is not None else 1.0),
        "aten.div": lambda: a / (b if b is not None else 8.0),
        "aten.pow": lambda: a.pow(2),
        "aten.mean": lambda: a.mean(-1, keepdim=True),
        "aten.rsqrt": lambda: torch.rsqrt(a.abs() + 1),
        "aten.copy_": lambda: a.copy_(b),
    }
    return ops.get(table)


def timed(fn, n=20):
    for _ in range(3):
        fn()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    perfdb = os.environ.get("PERFDB", "perfdb")
    j = json.loads(subprocess.run(
        [perfdb, "predict", "--trace", os.path.join(a.case, "step.pt.trace.json"),
         "--database-path", os.path.join(a.case, "db"), "--measured-only", "--json"],
        check=True, capture_output=True, text=True).stdout)
    print("%-13s %-32s %10s %10s %10s %8s %8s" % ("op", "inputs", "trace us", "perfdb us", "torch us",
                                                  "perfdb/tr", "torch/tr"))
    n = 0
    for r in j["rows"]:
        if n >= a.top:
            break
        fn = None
        if r["how"] == "hit":
            fn = call(r["table"], tensors(r["input_shapes"], r["input_dtypes"]))
        if fn is None:
            continue
        n += 1
        tr = r["trace_us"] / r["calls"]
        db = r["db_us"] / r["calls"]
        to = timed(fn)
        print("%-13s %-32s %10.1f %10.1f %10.1f %8.2f %8.2f" % (
            r["table"], r["input_shapes"].strip('"')[:32] + " " + r["input_dtypes"].split(";")[0],
            tr, db, to, db / tr, to / tr))


if __name__ == "__main__":
    main()
