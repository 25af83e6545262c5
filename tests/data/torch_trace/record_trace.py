#!/usr/bin/python3
"""Record the PyTorch profiler fixture cpu_block.pt.trace.json.

A small pre-norm transformer block (RMSNorm, q/k/v/o Linear, causal
matmul+softmax attention, LayerNorm, SiLU-gated MLP) in bf16 on the CPU,
run ITERS times under torch.profiler.profile(activities=[CPU],
record_shapes=True): the input of perfdb's PyTorch Chrome-trace reader
(src/parse/chrome_trace.c).  Shapes are deterministic; timings are not, so
re-recording changes the durations that tests/unit/parse/test_chrome_trace.c
expects.

Where torch has Kineto (pip/conda wheels), the Kineto file comes straight
from prof.export_chrome_trace().  Debian's python3-torch 1.13.1 is built
without Kineto (torch.autograd.kineto_available() is False): its
export_chrome_trace() writes the legacy autograd layout, a bare array of
{"name","ph":"X","ts","dur","tid","pid":"CPU functions","args":{}} events
with no category, no shapes and no dtypes.  The profiler still records the
shapes, dtypes, correlation ids and timings (prof.profiler.kineto_results),
so on such a build this script writes those same events itself in the
layout Kineto's ChromeTraceLogger writes for CPU ops (libkineto
output_json.cpp handleActivity + torch's "Input Dims"/"Input type"
metadata), and keeps the legacy export beside it as cpu_block.legacy.json.

Usage: /usr/bin/python3 record_trace.py [OUTDIR]
"""
import json
import math
import os
import sys
import threading

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

HIDDEN, HEADS, FFN, TOKENS = 64, 4, 128, 8
ITERS = 2
DTYPE = torch.bfloat16


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + self.eps)).to(x.dtype) * self.weight


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = RMSNorm(HIDDEN)
        self.q = torch.nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.k = torch.nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.v = torch.nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.o = torch.nn.Linear(HIDDEN, HIDDEN, bias=True)
        self.norm2 = torch.nn.LayerNorm(HIDDEN)
        self.gate = torch.nn.Linear(HIDDEN, FFN, bias=False)
        self.up = torch.nn.Linear(HIDDEN, FFN, bias=False)
        self.down = torch.nn.Linear(FFN, HIDDEN, bias=False)

    def attention(self, x):
        t = x.shape[0]
        hd = HIDDEN // HEADS
        q = self.q(x).view(t, HEADS, hd).transpose(0, 1)
        k = self.k(x).view(t, HEADS, hd).transpose(0, 1)
        v = self.v(x).view(t, HEADS, hd).transpose(0, 1)
        # torch 1.13 has no scaled_dot_product_attention: matmul + softmax.
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hd)
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        p = torch.softmax(scores, dim=-1)
        out = torch.matmul(p, v).transpose(0, 1).reshape(t, HIDDEN)
        return self.o(out)

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


# Python-level names of the calls whose aten op has another name
DUNDER = {"__matmul__": "matmul", "__rmatmul__": "matmul", "__mul__": "mul", "__rmul__": "mul",
          "__add__": "add", "__radd__": "add", "__sub__": "sub", "__rsub__": "rsub",
          "__truediv__": "div", "__rtruediv__": "div", "__iadd__": "add_", "__imul__": "mul_"}


def record_strides(run):
    """run() once under a TorchFunctionMode: per aten op name, the calls'
    tensor dims and strides in call order (torch 1.13's profiler records no
    strides; newer Kineto writes them as "Input Strides")."""
    from torch.overrides import TorchFunctionMode
    calls = {}

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            name = DUNDER.get(name, name)
            ts = [a for a in args if isinstance(a, torch.Tensor)]
            if name and ts:
                calls.setdefault("aten::" + name, []).append(
                    ([list(t.shape) for t in ts], [list(t.stride()) for t in ts]))
            return func(*args, **(kwargs or {}))

    with Mode():
        run()
    return calls


def input_strides(calls, name, dims):
    """Input Strides for an event: the next recorded call of its op whose
    tensors have the event's dims (slots without dims get []), else None."""
    q = calls.get(name)
    tensors = [d for d in dims if d]
    if not q or not tensors or [d for d in q[0][0] if d] != tensors:
        return None
    shapes, strides = q.pop(0)
    it = iter(s for d, s in zip(shapes, strides) if d)
    return [next(it) if d else [] for d in dims]


def kineto_layout(prof, name, strides=None):
    """The profile's CPU ops as Kineto's ChromeTraceLogger lays them out;
    strides: record_strides()'s calls, written as "Input Strides"."""
    res = prof.profiler.kineto_results
    base = res.trace_start_us()
    pid, tid = os.getpid(), threading.get_native_id()
    events = [
        {"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0,
         "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": pid, "tid": 0,
         "args": {"labels": "CPU"}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": tid,
         "args": {"name": "thread %d (python3)" % tid}},
    ]
    end = 0
    for e in res.events():
        if e.device_type() != torch.autograd.DeviceType.CPU:
            continue
        args = {"External id": e.correlation_id()}
        if e.shapes() or e.dtypes():
            args["Input Dims"] = e.shapes()
            args["Input type"] = e.dtypes()
            st = input_strides(strides, e.name(), e.shapes()) if strides else None
            if st is not None:
                args["Input Strides"] = st
        if e.sequence_nr() >= 0:
            args["Fwd thread id"] = e.fwd_thread_id()
            args["Sequence number"] = e.sequence_nr()
        ts = e.start_us() - base
        events.append({"ph": "X", "cat": "cpu_op", "name": e.name(),
                       "pid": pid, "tid": tid, "ts": ts,
                       "dur": e.duration_us(), "args": args})
        end = max(end, ts + e.duration_us())
    events.append({"ph": "X", "cat": "Trace", "ts": 0, "dur": end,
                   "pid": "Spans", "tid": "PyTorch Profiler",
                   "name": "PyTorch Profiler (0)", "args": {"Op count": 0}})
    events.append({"name": "Record Window End", "ph": "i", "s": "g",
                   "pid": "", "tid": "", "ts": end})
    return {"schemaVersion": 1, "deviceProperties": [],
            "displayTimeUnit": "ms", "baseTimeNanoseconds": base * 1000,
            "traceEvents": events, "traceName": name}


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "."
    out = os.path.join(outdir, "cpu_block.pt.trace.json")
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Block().to(DTYPE).eval()
    x = torch.randn(TOKENS, HIDDEN, dtype=DTYPE)
    with torch.no_grad():
        model(x)  # warm-up outside the profile (first-call allocations)
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            for _ in range(ITERS):
                model(x)
    if torch.autograd.kineto_available():
        prof.export_chrome_trace(out)
        return
    prof.export_chrome_trace(os.path.join(outdir, "cpu_block.legacy.json"))
    with open(out, "w") as f:
        # One event per line: small diffs, readable line numbers.
        trace = kineto_layout(prof, os.path.basename(out))
        events = trace.pop("traceEvents")
        name = trace.pop("traceName")
        f.write("{\n")
        for k, v in trace.items():
            f.write("  %s: %s,\n" % (json.dumps(k), json.dumps(v)))
        f.write('  "traceEvents": [\n')
        f.write(",\n".join("  " + json.dumps(e) for e in events))
        f.write('\n  ],\n  "traceName": %s\n}\n' % json.dumps(name))


if __name__ == "__main__":
    main()
