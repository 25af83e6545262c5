#!/usr/bin/python3
"""Record tests/data/torch_trace/cpu_block.pt.trace.json.

A small pre-norm transformer block (RMSNorm, q/k/v/o Linear, causal
matmul+softmax attention, SiLU-gated MLP) in bf16 on the CPU, run a few
times under torch.profiler with record_shapes=True and exported with
export_chrome_trace: the input format of perfdb's PyTorch Chrome-trace
reader (src/parse/chrome_trace.c).  Deterministic shapes; timings vary per
run, so re-recording changes the expected durations in
tests/unit/test_chrome_trace.c.

Usage: /usr/bin/python3 record_trace.py [OUT.json]
"""
import math
import sys

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


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "cpu_block.pt.trace.json"
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Block().to(DTYPE).eval()
    x = torch.randn(TOKENS, HIDDEN, dtype=DTYPE)
    with torch.no_grad():
        model(x)  # warm-up outside the profile (first-call allocations)
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            for _ in range(ITERS):
                model(x)
    prof.export_chrome_trace(out)


if __name__ == "__main__":
    main()
