#!/usr/bin/python3
"""The model of bench/closure.sh: a small Llama-like decoder on the CPU.

Random weights (seed 0): hidden 1024, 8 layers ($CLOSURE_LAYERS), 16 heads, SwiGLU MLP (2816),
RMSNorm written as Llama writes it (pow, mean, rsqrt, mul), matmul + softmax
attention (torch 1.13 has no scaled_dot_product_attention).  Two phases:
  prefill  batch 1, 512 tokens, causal mask added to the scores
  decode   batch 8, one new token each, against a static KV cache of 1024
           tokens (the new key/value copied into slot 1025, as HF's
           StaticCache does; torch 1.13's profiler records no shapes for a
           cat's tensor list, so a growing cache could not be replayed)

Usage (Debian's /usr/bin/python3 with python3-torch):
  closure_model.py record OUT.json --dtype bf16|fp32 --phase prefill|decode --threads N
      one forward under torch.profiler (record_shapes=True), written in
      Kineto's layout by tests/data/torch_trace/record_trace.py's writer
      (Debian's torch 1.13 has no Kineto), with "Input Strides" as newer
      Kineto writes them, taken from the same forward run again under a
      TorchFunctionMode (torch 1.13's profiler records none)
  closure_model.py measure --dtype ... --phase ... --threads N --runs R
      the forward's wall time, outside any profiler: prints the median and
      the min and max of R timed runs (us), after 3 warm-up runs, how
      many runs were dropped, and how many were clean (R, or fewer when the
      slow state held through 3 R runs: then the median is of the clean
      ones, or of all where none was): the torch backend's memory-bandwidth probe
      (data/torch_replay.py) reads before and after each run, and a run
      whose lower reading is 20 % below this machine's quiet torch figure
      (the per-host state perfdb microbench --backend torch keeps) ran in
      the VM's slow state, which the database does not describe either; at
      most 3 R runs, and all of them where none was clean (PERFDB_PROBE=0:
      no probe)
"""
import argparse
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

HIDDEN, HEADS, FFN = 1024, 16, 2816
# CLOSURE_LAYERS: fewer layers for a quick look (the CTest smoke run takes 2)
LAYERS = int(os.environ.get("CLOSURE_LAYERS", "8"))
PREFILL_TOKENS = 512
DECODE_BATCH, DECODE_KV = 8, 1024


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + self.eps)).to(x.dtype) * self.weight


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = RMSNorm(HIDDEN)
        self.norm2 = RMSNorm(HIDDEN)
        self.q = torch.nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.k = torch.nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.v = torch.nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.o = torch.nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.gate = torch.nn.Linear(HIDDEN, FFN, bias=False)
        self.up = torch.nn.Linear(HIDDEN, FFN, bias=False)
        self.down = torch.nn.Linear(FFN, HIDDEN, bias=False)

    def attention(self, x, mask, cache):
        b, t, _ = x.shape
        hd = HIDDEN // HEADS
        q = self.q(x).view(b, t, HEADS, hd).transpose(1, 2)
        k = self.k(x).view(b, t, HEADS, hd).transpose(1, 2)
        v = self.v(x).view(b, t, HEADS, hd).transpose(1, 2)
        if cache is not None:
            # a static cache: the new token's key and value are written
            # into its last slot, and attention reads the whole cache
            cache[0][:, :, -1:].copy_(k)
            cache[1][:, :, -1:].copy_(v)
            k, v = cache
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hd)
        if mask is not None:
            scores = scores + mask
        p = torch.softmax(scores, dim=-1)
        out = torch.matmul(p, v).transpose(1, 2).reshape(b, t, HIDDEN)
        return self.o(out)

    def forward(self, x, mask, cache):
        x = x + self.attention(self.norm1(x), mask, cache)
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer() for _ in range(LAYERS))
        self.norm = RMSNorm(HIDDEN)

    def forward(self, x, mask, caches):
        for i, layer in enumerate(self.layers):
            x = layer(x, mask, caches[i] if caches else None)
        return self.norm(x)


def build(dtype, phase):
    torch.manual_seed(0)
    dt = {"bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
    model = Decoder().to(dt).eval()
    hd = HIDDEN // HEADS
    if phase == "prefill":
        x = torch.randn(1, PREFILL_TOKENS, HIDDEN, dtype=dt)
        mask = torch.full((PREFILL_TOKENS, PREFILL_TOKENS), float("-inf")).triu(1)
        mask = mask.to(dt).view(1, 1, PREFILL_TOKENS, PREFILL_TOKENS)
        return model, (x, mask, None)
    x = torch.randn(DECODE_BATCH, 1, HIDDEN, dtype=dt)
    caches = [(torch.randn(DECODE_BATCH, HEADS, DECODE_KV + 1, hd, dtype=dt),
               torch.randn(DECODE_BATCH, HEADS, DECODE_KV + 1, hd, dtype=dt))
              for _ in range(LAYERS)]
    return model, (x, None, caches)


def quiet_torch_gbs():
    """This machine's quiet torch figure, as perfdb keeps it (src/core/quiet.c:
    $PERFDB_STATE_DIR, else $XDG_STATE_HOME/perfdb, else ~/.local/state/perfdb,
    quiet-<host>.json, the highest of "torch_gbs"); 0 when none."""
    import json
    import socket
    d = os.environ.get("PERFDB_STATE_DIR") or (os.environ.get("XDG_STATE_HOME") and
                                               os.environ["XDG_STATE_HOME"] + "/perfdb") \
        or os.path.expanduser("~/.local/state/perfdb")
    try:
        v = json.load(open("%s/quiet-%s.json" % (d, socket.gethostname().replace("/", "_")))).get("torch_gbs")
        return max(v[-9:]) if v else 0.0
    except (OSError, ValueError, TypeError, AttributeError):
        return 0.0


def measure(model, args, runs):
    """(times us, runs dropped, runs clean) of runs forwards judged by the
    probe: the clean ones, else (none clean in 3 runs tries) all of them."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "data"))
    import torch_replay
    on = os.environ.get("PERFDB_PROBE", "1") != "0"
    probe = torch_replay.Probe({"tolerance": 0.2, "retries": 0, "quiet_gbs": quiet_torch_gbs()} if on else None)
    kept, dropped, every = [], 0, []
    edge = probe.read()
    while len(kept) < runs and len(every) < 3 * runs:
        t0 = time.perf_counter()
        model(*args)
        t = (time.perf_counter() - t0) * 1e6
        after = probe.read()
        gbs, edge = torch_replay.lower(edge, after), after
        every.append(t)
        if probe.low(gbs):
            dropped += 1
        else:
            kept.append(t)
            probe.note(gbs)
    return (kept or every), dropped, len(kept)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["record", "measure"])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--dtype", choices=["bf16", "fp32"], required=True)
    ap.add_argument("--phase", choices=["prefill", "decode"], required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model, args = build(a.dtype, a.phase)
    with torch.no_grad():
        for _ in range(3):
            model(*args)
        if a.what == "measure":
            ts, dropped, clean = measure(model, args, a.runs)
            print("%.1f %.1f %.1f %d %d" % (statistics.median(ts), min(ts), max(ts), dropped, clean))
            return
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            model(*args)
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "tests", "data", "torch_trace"))
        import record_trace
        # the same forward again, outside the profiler, for its inputs' strides
        strides = record_trace.record_strides(lambda: model(*args))
    import json
    with open(a.out, "w") as f:
        json.dump(record_trace.kineto_layout(prof, os.path.basename(a.out), strides), f)


if __name__ == "__main__":
    main()
