#!/usr/bin/python3
"""perfdb's PyTorch replay: time each database row through the framework itself.

Run by `perfdb microbench --backend torch` (src/replay/torch_run.c), never by
hand: perfdb writes the request, this script answers it, perfdb writes the
figures back (docs/replay.md "The torch backend").

  torch_replay.py REQUEST.json RESULT.json

REQUEST: {"threads": N, "repeat": R, "budget_s": S, "rows": [{"table": "aten.linear",
"line": 2, "shapes": "\"\"\"512,1024;2816,1024;\"\"\"", "dtypes": "DT_BF16;DT_BF16;",
"out_dtypes": "DT_BF16", "strides": ""}, ...], "sequence": [0, 3, 0, ...]}
("sequence", with --sequence-trace: the traced step's calls as indices into
"rows", in its order; a row with "untimed": true runs in it and is not timed)
RESULT:  {"torch": "1.13.1", "threads": N, "rows": [{"table", "line", "status": "ok" |
"failed" | "contended" | "untimed", "reason", "samples", "mean_us", "median_us", "min_us",
"std_us", "blocks", "contended_blocks", "context": "sequence" where timed in it}, ...]}

Per row: tensors of the row's shapes and dtypes (normal values, scaled so no
op overflows or goes denormal; the in-place ops' other operand is 1 or 0, so
repeating them changes nothing); a GEMM's operands after the first rotate
through copies (64 MiB of them, at most 64), as the native backends' do, so that each call
finds them cold as a model's weights and KV cache are (PERFDB_TORCH_ROTATE=0
leaves them as the previous call left them; docs/measuring.md "Weights,
cold or warm"); any other row whose inputs are below 64 MiB has, before each
timed call, 64 MiB read and a few small ops of other kinds run, so that it
meets its own code and data cold and the framework's dispatch path warm, as
an op does between a model's layers (PERFDB_TORCH_EVICT=0 leaves it as its
previous call left it; docs/measuring.md "Small ops in the model"), 3 warm-up calls, then calls in blocks of about 1 ms until R
samples and S seconds (at most 10,000); a block whose threads waited for a
CPU that another process held over 5 % of its wall time, or that began or
ended with more tasks of other processes running than the CPUs its threads
leave free, is dropped (the wait this process's own threads cause each
other does not count), and a row still short of R clean
samples after 4 such blocks and 4 S is "contended" (not written).  Kept samples: those up to max(Q3 + 3 IQR, 2 x median), the
rule of perfdb's own replay; mean, median, min and std over them, us.
A row whose Input Strides cell is set (a CPU trace from newer Kineto) gets
its inputs laid out with those strides (a transposed view stays one), each
slot whose strides fit its dims; the others are contiguous.
Scalars the trace does not record take the models' values: softmax, mean
and sum over the last dim (keepdim), pow 2, div by 8, fill 0.
"""
import json
import math
import os
import statistics
import sys
import threading
import time

import torch
import torch.nn.functional as F

DTYPES = {
    "FLOAT": torch.float32, "DT_FLOAT": torch.float32, "FLOAT32": torch.float32,
    "DT_BF16": torch.bfloat16, "BF16": torch.bfloat16, "FLOAT16": torch.float16,
    "DT_FLOAT16": torch.float16, "DOUBLE": torch.float64, "DT_DOUBLE": torch.float64,
    "INT64": torch.int64, "DT_INT64": torch.int64, "INT32": torch.int32, "DT_INT32": torch.int32,
    "INT8": torch.int8, "DT_INT8": torch.int8, "UINT8": torch.uint8, "DT_UINT8": torch.uint8,
    "BOOL": torch.bool, "DT_BOOL": torch.bool,
}
ROTATE_BYTES = 64 << 20
BLOCK_S = 1e-3
GEMMS = {"aten.linear", "aten.addmm", "aten.mm", "aten.bmm", "aten.baddbmm", "aten.matmul"}
BAD_BLOCKS = 4
# a row timed alone whose inputs are below what the eviction reads is evicted
# before each call: 64 MiB, not only a 32 MiB LLC, since an add of 36-60 MiB
# in all read 1.1-1.5x slower after a 64 MiB read than back to back, where
# one of 96 MiB read the same (docs/measuring.md "Working sets between one
# and two L3s")
COLD_BELOW = ROTATE_BYTES


class Refused(Exception):
    pass


def slots(cell):
    return cell.strip().strip('"').split(";") if cell.strip().strip('"') else []


def make(shape, dtype, stride=""):
    dims = [int(x) for x in shape.split(",")]
    if dtype.is_floating_point:
        t = (torch.randn(*dims) * 0.5).to(dtype)
    elif dtype == torch.bool:
        t = torch.rand(*dims) < 0.5
    else:
        t = torch.randint(0, 2, dims, dtype=dtype)
    st = [int(x) for x in stride.split(",")] if stride else []
    if len(st) != len(dims) or any(x < 0 for x in st):
        return t
    # the same values in the recorded layout: a buffer that reaches the
    # farthest element, viewed with the trace's strides
    span = 1 + sum((d - 1) * s for d, s in zip(dims, st) if d > 0)
    if span > 4 * t.numel() + 64:
        return t
    out = torch.empty_strided(dims, st, dtype=dtype)
    try:
        out.copy_(t)
    except RuntimeError:
        return t   # overlapping strides (an expanded view, stride 0): kept contiguous
    return out


def inputs(row):
    sh, dt = slots(row["shapes"]), row["dtypes"].split(";")
    st = slots(row.get("strides", ""))
    if len(st) != len(sh):
        st = [""] * len(sh)
    out = []
    for i, s in enumerate(sh):
        d = dt[i].strip() if i < len(dt) else ""
        out.append(make(s, DTYPES[d], st[i]) if s and d in DTYPES else None)
    return out


def need(t, i, what):
    if len(t) <= i or t[i] is None:
        raise Refused("the %s slot records no tensor shape" % what)
    return t[i]


def binary(fn, inplace_other):
    def call(t):
        a = need(t, 0, "self")
        b = t[1] if len(t) > 1 else None
        if b is not None and b.numel() > a.numel():
            a, b = b, a
        if inplace_other is not None:
            b = torch.full_like(b, inplace_other) if b is not None else inplace_other
            return lambda: fn(a, b)
        return lambda: fn(a, b if b is not None else 8.0)
    return call


def sdpa(t):
    if not hasattr(F, "scaled_dot_product_attention"):
        raise Refused("this PyTorch has no scaled_dot_product_attention")
    q, k, v = need(t, 0, "query"), need(t, 1, "key"), need(t, 2, "value")
    return lambda: F.scaled_dot_product_attention(q, k, v)


def out_dtype(row):
    d = row.get("out_dtypes", "").split(";")[0].strip()
    if d not in DTYPES:
        raise Refused("the target dtype (a scalar argument) is not recorded")
    return DTYPES[d]


def recipe(table, row):
    """A function of the row's tensors that returns the call to time."""
    r = {
        "aten.linear": lambda t: (lambda a, w, b: lambda: F.linear(a, w, b))(
            need(t, 0, "input"), need(t, 1, "weight"), t[2] if len(t) > 2 else None),
        "aten.addmm": lambda t: (lambda b, x, y: lambda: torch.addmm(b, x, y))(
            need(t, 0, "bias"), need(t, 1, "mat1"), need(t, 2, "mat2")),
        "aten.mm": lambda t: (lambda a, b: lambda: torch.mm(a, b))(need(t, 0, "self"), need(t, 1, "mat2")),
        "aten.bmm": lambda t: (lambda a, b: lambda: torch.bmm(a, b))(need(t, 0, "self"), need(t, 1, "mat2")),
        "aten.baddbmm": lambda t: (lambda c, a, b: lambda: torch.baddbmm(c, a, b))(
            need(t, 0, "self"), need(t, 1, "batch1"), need(t, 2, "batch2")),
        "aten.matmul": lambda t: (lambda a, b: lambda: torch.matmul(a, b))(need(t, 0, "self"), need(t, 1, "other")),
        "aten.softmax": lambda t: (lambda a: lambda: torch.softmax(a, -1))(need(t, 0, "self")),
        "aten._softmax": lambda t: (lambda a: lambda: torch._softmax(a, -1, False))(need(t, 0, "self")),
        "aten.silu": lambda t: (lambda a: lambda: F.silu(a))(need(t, 0, "self")),
        "aten.silu_": lambda t: (lambda a: lambda: F.silu(a, inplace=True))(need(t, 0, "self")),
        "aten.gelu": lambda t: (lambda a: lambda: F.gelu(a))(need(t, 0, "self")),
        "aten.add": binary(lambda a, b: a + b, None),
        "aten.sub": binary(lambda a, b: a - b, None),
        "aten.mul": binary(lambda a, b: a * b, None),
        "aten.div": binary(lambda a, b: a / b, None),
        "aten.add_": binary(lambda a, b: a.add_(b), 0.0),
        "aten.sub_": binary(lambda a, b: a.sub_(b), 0.0),
        "aten.mul_": binary(lambda a, b: a.mul_(b), 1.0),
        "aten.div_": binary(lambda a, b: a.div_(b), 1.0),
        "aten.masked_fill": lambda t: (lambda a, m: lambda: a.masked_fill(m, 0.0))(
            need(t, 0, "self"), need(t, 1, "mask")),
        "aten.masked_fill_": lambda t: (lambda a, m: lambda: a.masked_fill_(m, 0.0))(
            need(t, 0, "self"), need(t, 1, "mask")),
        "aten.pow": lambda t: (lambda a: lambda: a.pow(2))(need(t, 0, "self")),
        "aten.rsqrt": lambda t: (lambda a: lambda: torch.rsqrt(a))(need(t, 0, "self").abs() + 1),
        "aten.mean": lambda t: (lambda a: lambda: a.mean(-1, keepdim=True))(need(t, 0, "self")),
        "aten.sum": lambda t: (lambda a: lambda: a.sum(-1, keepdim=True))(need(t, 0, "self")),
        "aten.copy_": lambda t: (lambda d, s: lambda: d.copy_(s))(need(t, 0, "self"), need(t, 1, "src")),
        "aten.clone": lambda t: (lambda a: lambda: a.clone())(need(t, 0, "self")),
        "aten.fill_": lambda t: (lambda a: lambda: a.fill_(0.0))(need(t, 0, "self")),
        "aten.to": lambda t: (lambda a, d: lambda: a.to(d))(need(t, 0, "self"), out_dtype(row)),
        "aten._to_copy": lambda t: (lambda a, d: lambda: a.to(d, copy=True))(need(t, 0, "self"), out_dtype(row)),
        "aten.layer_norm": lambda t: (lambda a, w, b: lambda: F.layer_norm(a, w.shape, w, b))(
            need(t, 0, "input"), need(t, 2, "weight"), t[3] if len(t) > 3 else None),
        "aten.embedding": lambda t: (lambda w, i: lambda: F.embedding(i, w))(
            need(t, 0, "weight"), need(t, 1, "indices")),
        "aten.scaled_dot_product_attention": sdpa,
        "aten._scaled_dot_product_flash_attention": sdpa,
        "aten._scaled_dot_product_flash_attention_for_cpu": sdpa,
        "aten._scaled_dot_product_efficient_attention": sdpa,
        "aten.native_layer_norm": lambda t: (lambda a, w, b: lambda: torch.native_layer_norm(a, w.shape, w, b, 1e-5))(
            need(t, 0, "input"), need(t, 2, "weight"), t[3] if len(t) > 3 else None),
    }
    if table not in r:
        raise Refused("no recipe for %s in torch_replay.py" % table)
    return r[table]


def kept(samples):
    s = sorted(samples)
    q1, q3 = s[len(s) // 4], s[(3 * len(s)) // 4]
    med = statistics.median(s)
    top = max(q3 + 3 * (q3 - q1), 2 * med)
    return [x for x in samples if x <= top]


def schedstat(tid):
    """(CPU time, run-queue wait) of this process's thread tid, ns, from
    its schedstat; None where it cannot be read (the thread ended)."""
    try:
        with open("/proc/self/task/%s/schedstat" % tid) as f:
            v = f.read().split()
        return int(v[0]), int(v[1])
    except (OSError, ValueError, IndexError):
        return None


def sched_ns():
    """CPU time and run-queue wait of every thread of this process (OpenMP's
    and OpenBLAS's included), ns, from /proc/self/task/*/schedstat; and the
    tasks of other processes running or runnable at the reading (the
    machine's, from /proc/loadavg, less this process's threads in state R),
    or 0 where /proc/loadavg cannot be read."""
    run = wait = ours = 0
    for tid in os.listdir("/proc/self/task"):
        st = schedstat(tid)
        if st is None:
            continue
        run, wait = run + st[0], wait + st[1]
        try:
            with open("/proc/self/task/%s/status" % tid) as f:
                ours += any(l.startswith("State:") and l.split()[1] == "R" for l in f)
        except (OSError, IndexError):
            pass
    try:
        with open("/proc/loadavg") as f:
            others = max(0, int(f.read().split()[3].split("/")[0]) - ours)
    except (OSError, ValueError, IndexError):
        others = 0
    return run, wait, others


def foreign_wait_ns(run, wait, wall_ns, cpus):
    """The part of a block's run-queue wait that other processes caused.

    Threads of this process that want more CPU than it may use wait for
    each other: Debian's torch 1.13 runs fp32 GEMMs in OpenBLAS's pthreads
    while OpenMP's workers still spin from the op before, as they do inside
    the model.  That is the framework's own condition, not contamination.
    What they wanted beyond the cpus the process may run on is their own
    doing; the rest of the wait was another process's."""
    own = max(0.0, run + wait - cpus * wall_ns)
    return max(0.0, wait - own)


def free_cpus():
    """The CPUs this process's threads leave to others: another process's
    task beyond them shares a CPU we time on, whether or not our threads'
    wait shows it (a busy loop on the guest's other vCPU slowed 5 us rows
    1.5-2.7x with no wait at all: docs/measuring.md "Other processes at the
    block's edges")."""
    return max(0, (os.cpu_count() or len(os.sched_getaffinity(0))) - int(torch.get_num_threads()))


def contaminated(before, after, wall_ns, cpus, free):
    """Whether a block (or a pass of the sequence) between two sched_ns()
    readings is dropped: another process's wait over 5 % of its wall time
    and 50 us, or more tasks of other processes running at either reading
    than the free CPUs.  Never with PERFDB_SCHED=0 in the environment, as
    perfdb's own replay (the test suite sets it: a golden output cannot
    depend on the machine's load)."""
    if os.environ.get("PERFDB_SCHED", "1") == "0":
        return False
    wait = foreign_wait_ns(after[0] - before[0], after[1] - before[1], wall_ns, cpus)
    return (wait > 0.05 * wall_ns and wait > 50e3) or max(before[2], after[2]) > free


PROBE_BYTES = 64 << 20
PROBE_OTHERS, PROBE_SETTLE_S = 0.1, 0.25   # perfdb/probe.h's PERFDB_PROBE_OTHERS and _SETTLE_S


def others_run_ns(me):
    """(CPU time ns, count) of this process's threads other than tid me,
    read from each thread's CPU-time clock (the clock id glibc's
    pthread_getcpuclockid builds from a thread id): unlike schedstat, whose
    count of a thread running on another CPU moves only at that CPU's tick
    (4 ms here), the clock brings it up to date, so a 1 ms window sees a
    spinner (src/core/sched.c perfdb_sched_others_run_ns)."""
    ns = n = 0
    for t in os.listdir("/proc/self/task"):
        if t == me:
            continue
        try:
            ns += time.clock_gettime_ns(((~int(t)) << 3) | 6)
            n += 1
        except OSError:
            pass   # gone since the listing
    return ns, n


def lower(a, b):
    """The lower of two readings, of those taken (0: no reading, not the lowest)."""
    return min(a, b) if a > 0 and b > 0 else max(a, b)


def settle(me):
    """Wait until the process's other threads are at rest: until they ran
    under PROBE_OTHERS of a 1 ms window, at most PROBE_SETTLE_S.  OpenMP's
    workers spin ~5 ms after an op here, OpenBLAS's ~130 ms after an fp32
    GEMM; a reading beside them reads the run, not the machine.  Returns
    their CPU time at the end of the wait, for the reading to start from."""
    ns, n = others_run_ns(me)
    t0 = time.perf_counter()
    while n:
        a, w0 = ns, time.perf_counter()
        time.sleep(0.001)
        ns, n = others_run_ns(me)
        if ns - a < PROBE_OTHERS * (time.perf_counter() - w0) * 1e9 or time.perf_counter() - t0 > PROBE_SETTLE_S:
            break
    return ns


class Probe:
    """The memory-bandwidth probe (docs/replay.md "Contention", perfdb's own
    replay's rule): one thread reads one word of each 64-byte line of a
    64 MiB buffer, the fastest of three passes, GB/s of the buffer.  This
    VM's slow states are the memory's: a bf16 decode forward that ran 59.5
    ms instead of 43.5 found the probe read just before it at 29.9 GB/s
    against 43.6, where a compute loop moved 3 % (docs/measuring.md "The
    VM's slow state").  A reading more than `tolerance` below the
    reference is low: this machine's quiet figure for this probe where
    perfdb has one ("quiet_gbs": the highest of the last runs' medians,
    kept per host, since a slow state outlasts a run and can hold the
    median of several), else the median of the readings kept so far; a
    low reading is not kept, so that a slow state does not become its own
    reference.  The request's "probe" (absent with PERFDB_PROBE=0) turns it
    on; PERFDB_TEST_PROBE_GBS=a,b,... are its readings, in order, the last
    repeating (the test suite's hook, as perfdb's own replay has)."""

    def __init__(self, spec):
        self.on = bool(spec)
        self.tolerance = float(spec.get("tolerance", 0.2)) if spec else 0.0
        self.retries = int(spec.get("retries", 2)) if spec else 0
        self.quiet = float(spec.get("quiet_gbs", 0) or 0) if spec else 0.0
        self.fixed = 0.0   # the end of the run's pass (measure_again): the run's median, held
        self.kept = []
        self.every = []
        self.none = 0   # readings refused: the process's own threads ran beside them
        script = os.environ.get("PERFDB_TEST_PROBE_GBS", "")
        self.script = [float(x) for x in script.split(",") if x.strip()] if self.on else []
        self.pos = 0
        self.lines = None
        if self.on and not self.script:
            try:
                import numpy
                # numpy reduces on one thread whatever torch's setting
                self.lines = numpy.arange(PROBE_BYTES // 8, dtype=numpy.uint64)[::8]
            except ImportError:
                self.lines = torch.arange(PROBE_BYTES // 8, dtype=torch.int64)[::8]

    def read(self):
        """GB/s now, once the process's other threads are at rest (settle);
        0 (no reading, judged by nothing) when off, or when they ran for over
        a tenth of the probe's time all the same: a reading taken beside
        them is of the run (OpenMP's or OpenBLAS's workers still spinning
        after an op share the probe's core and read as a slow memory), not
        of the machine."""
        if not self.on:
            return 0.0
        if self.script:
            best = self.script[min(self.pos, len(self.script) - 1)]
            self.pos += 1
        else:
            best, me = 0.0, "%d" % threading.get_native_id()
            o0, w0 = settle(me), time.perf_counter()
            for _ in range(3):
                a = time.perf_counter()
                self.lines.sum()
                d = time.perf_counter() - a
                best = max(best, PROBE_BYTES / d / 1e9 if d > 0 else 0.0)
            if others_run_ns(me)[0] - o0 > PROBE_OTHERS * (time.perf_counter() - w0) * 1e9:
                self.none += 1
                return 0.0
        self.every.append(best)
        return best

    def reference(self):
        if self.quiet > 0:
            return self.quiet
        if self.fixed > 0:
            return self.fixed
        return statistics.median(self.kept) if self.kept else 0.0

    def median(self):
        """The median of every reading taken, low or not (the run's reading of
        this machine, which perfdb keeps per host), 0 when none."""
        return statistics.median(self.every) if self.every else 0.0

    def against(self):
        return "this machine's quiet" if self.quiet > 0 else "the run's median"

    def low(self, gbs):
        """Whether a reading is low against the readings kept before it."""
        ref = self.reference()
        return self.on and gbs > 0 and ref > 0 and gbs < (1.0 - self.tolerance) * ref

    def note(self, gbs):
        if gbs > 0:
            self.kept.append(gbs)


class Evict:
    """What runs before each timed call of a row timed alone that is not a
    GEMM: 64 MiB read, twice the 32 MiB LLC the native replay's flush
    assumes (the LLC's contents gone, as a model's layer reads
    its weights between two calls of the same small op), then small ops of
    other kinds (the dispatcher's own code and data warm again, as every
    op of a model keeps them).  In one process, interleaved with the
    trace's sequence (bench/torch_alone.sh), a decode step's ops other than
    GEMMs then replay at 0.92x (bf16) and 0.69x (fp32) their time in it,
    where back-to-back calls read 0.53x and 0.36x (docs/measuring.md "Small
    ops in the model")."""

    def __init__(self):
        self.buf = torch.zeros(ROTATE_BYTES // 4)
        self.y = torch.rand(8, 1, 2816) + 1.0
        self.yb = self.y.bfloat16()

    def __call__(self):
        self.buf.sum()
        y, yb = self.y, self.yb
        y.softmax(-1), yb * yb, y.sum(-1), yb.float(), F.silu(yb), y.rsqrt(), y.div(3.0), torch.cat([yb, yb], -1)


def rotation_copies(size):
    """How many copies of a GEMM's rotated operands (size bytes in all) its
    calls go through: enough for 64 MiB, twice a 32 MiB LLC, at most 64;
    one from 64 MiB.  fp32 decode's KV operand of 33.6 MB had one copy
    when the rule was "none from 32 MiB", and its p.v read 5-8 % lower so
    than through 2 or 4 copies, in 6 of 6 interleaved rounds: the LLC kept
    part of it from call to call (docs/measuring.md "Small ops in the
    model")."""
    return 1 if size >= ROTATE_BYTES or size <= 0 else min(64, -(-ROTATE_BYTES // size))


def measure(row, repeat, budget, evict=None):
    """A row alone: R samples of its calls, each judged by the scheduler's
    accounts.  evict: an Evict, run before each timed call of a row that
    is not a GEMM and whose inputs are below 64 MiB; None: calls back to
    back."""
    table = row["table"]
    mk = recipe(table, row)
    t0 = inputs(row)
    # A model reads each layer's weights and KV cache once a step: cold.
    # Rotating them through copies (64 MiB in all, as the native backends
    # do) and laying them out as recorded put decode's GEMMs at 0.89-0.99x
    # their time in the model where warm, contiguous copies read 0.49-1.92x
    # (docs/measuring.md "Weights, cold or warm"); PERFDB_TORCH_ROTATE=0
    # keeps them warm
    rotate = os.environ.get("PERFDB_TORCH_ROTATE", "1") != "0"
    rot = [rotate and x is not None and i > 0 and table in GEMMS for i, x in enumerate(t0)]
    size = sum(x.numel() * x.element_size() for x, r in zip(t0, rot) if r)
    copies = rotation_copies(size)
    calls = [mk(t0)] + [mk([x.clone() if r else x for x, r in zip(t0, rot)]) for _ in range(copies - 1)]
    small = sum(x.numel() * x.element_size() for x in t0 if x is not None) < COLD_BELOW
    ev = evict if evict is not None and table not in GEMMS and small else None
    samples, blocks, dropped, start, i = [], 0, 0, time.perf_counter(), 0
    cpus, free = len(os.sched_getaffinity(0)), free_cpus()
    with torch.no_grad():
        for c in calls[:3]:
            c()
        # blocks of about 1 ms, each judged by the scheduler's accounts as
        # perfdb's own replay judges them (docs/measuring.md "The scheduler's
        # accounts"): a block whose threads waited for a CPU more than 5 % of
        # its wall time (and 50 us) is contaminated and dropped
        while len(samples) < 10000:
            s0, b0, block = sched_ns(), time.perf_counter(), []
            while True:
                c = calls[i % len(calls)]
                i += 1
                if ev is not None:
                    ev()
                a = time.perf_counter()
                c()
                e = time.perf_counter()
                block.append((e - a) * 1e6)
                if e - b0 >= BLOCK_S:
                    break
            wall_ns = (time.perf_counter() - b0) * 1e9
            blocks += 1
            if contaminated(s0, sched_ns(), wall_ns, cpus, free):
                dropped += 1
            else:
                samples.extend(block)
            over = time.perf_counter() - start >= budget
            if len(samples) >= repeat and over:
                break
            if over and dropped >= BAD_BLOCKS and time.perf_counter() - start >= 4 * budget:
                break
    if len(samples) < repeat:
        return {"status": "contended", "reason": "%s: %d clean samples of %d wanted; %d of %d blocks "
                "waited for a CPU or had other processes running on the CPUs it uses" % (row["table"], len(samples), repeat,
                                                                   dropped, blocks),
                "blocks": blocks, "contended_blocks": dropped}
    k = kept(samples)
    return {"status": "ok", "samples": len(k), "mean_us": statistics.fmean(k),
            "median_us": statistics.median(k), "min_us": min(k),
            "std_us": statistics.pstdev(k) if len(k) > 1 else 0.0,
            "blocks": blocks, "contended_blocks": dropped}


def replay(row, repeat, budget, probe, tries=0, evict=None):
    """A row alone, the probe read before and after it (the lower kept): a
    row whose reading is low is measured again, up to the probe's retries,
    and keeps the measurement with the most bandwidth; one still low is
    contended, not written ("low_bandwidth").  tries: the retries the row
    had before this call (measure_again's is one)."""
    best = None
    while True:
        before = probe.read()
        res = measure(row, repeat, budget, evict)
        res["probe_gbs"] = lower(before, probe.read())
        if best is None or res["probe_gbs"] > best["probe_gbs"]:
            best = res
        if not probe.low(res["probe_gbs"]) or tries >= probe.retries:
            break
        tries += 1
    best["retries"] = tries
    if best.get("status") == "ok" and probe.low(best["probe_gbs"]):
        return {"status": "contended", "low_bandwidth": True, "probe_gbs": best["probe_gbs"],
                "retries": tries, "blocks": best["blocks"], "contended_blocks": best["contended_blocks"],
                "reason": "%s: measured with %.1f GB/s of memory bandwidth against %s %.1f after %d "
                "%s" % (row["table"], best["probe_gbs"], probe.against(), probe.reference(), tries,
                        "retry" if tries == 1 else "retries")}
    if best.get("status") == "ok":
        probe.note(best["probe_gbs"])
    return best


def add_samples(samples, cur):
    """A clean pass's call times (row index, us) onto the timed rows' samples."""
    for k, us in cur:
        if k in samples:
            samples[k].append(us)


def build_steps(rows, seq):
    """The sequence's steps, each with tensors of its own: ([(row index,
    call)], the row indexes whose step could not be built, the inputs'
    bytes).  Shared with bench/torch_alone.py."""
    steps, failed, size = [], set(), 0
    for k in seq:
        row = rows[k]
        try:
            t = inputs(row)
            steps.append((k, recipe(row["table"], row)(t)))
            size += sum(x.numel() * x.element_size() for x in t if x is not None)
        except (Refused, RuntimeError, ValueError, TypeError, IndexError, KeyError):
            failed.add(k)
    return steps, failed, size


def replay_sequence(rows, seq, repeat, budget, probe):
    """The rows the request's "sequence" runs, timed in it (docs/replay.md
    "In the trace's sequence"): each step gets its own tensors (a model's
    layers have their own weights: cold ones, where they outgrow the
    caches), two passes warm up, then whole passes of the step, each call
    timed, until every timed row has R samples or the rows' budgets are
    spent, after at least 3 clean passes.  A pass is judged as a block is:
    foreign wait over 5 % of it (and 50 us), or other processes' tasks
    beyond the CPUs left free at its start or end, drops it; so does a
    memory bandwidth probed at its edges (the lower reading) that is low
    against the passes before it.  A row whose step cannot be built is
    left to be timed alone.  Returns ({row index: answer}, the passes'
    counts)."""
    steps, failed, size = build_steps(rows, seq)
    phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    counts = {"passes": 0, "dropped": 0, "low_bandwidth": 0}
    if size > phys // 2:
        print("[torch] the sequence's inputs take %.1f GiB, over half of this machine's memory: "
              "every row timed alone" % (size / 2 ** 30), file=sys.stderr, flush=True)
        return {}, counts
    timed = sorted({k for k, _ in steps if not rows[k].get("untimed") and k not in failed})
    if not timed:
        return {}, counts
    samples = {k: [] for k in timed}
    cpus, free = len(os.sched_getaffinity(0)), free_cpus()
    limit = budget * len(timed)
    clean = dropped = low = 0
    passes = []   # the clean passes: (their probe reading, their call times)
    print("[torch] the sequence: %d steps, %d rows timed in it" % (len(steps), len(timed)),
          file=sys.stderr, flush=True)
    with torch.no_grad():
        for _ in range(2):
            for _, c in steps:
                c()
        start, edge = time.perf_counter(), probe.read()
        while True:
            s0, b0, cur = sched_ns(), time.perf_counter(), []
            for k, c in steps:
                a = time.perf_counter()
                c()
                cur.append((k, (time.perf_counter() - a) * 1e6))
            wall_ns = (time.perf_counter() - b0) * 1e9
            s1 = sched_ns()
            after = probe.read()
            gbs, edge = lower(edge, after), after
            if contaminated(s0, s1, wall_ns, cpus, free):
                dropped += 1
            elif probe.low(gbs):
                dropped += 1
                low += 1
            else:
                clean += 1
                probe.note(gbs)
                passes.append((gbs, cur))
                add_samples(samples, cur)
            el = time.perf_counter() - start
            if clean >= 3 and (el >= limit or all(len(v) >= repeat for v in samples.values())):
                break
            if clean < 3 and dropped >= BAD_BLOCKS and el >= 4 * limit:
                break
    # the end of the sequence, as measure_again for rows alone: without a
    # quiet figure the first passes were held to no reference, or to the
    # few before them; a pass low against the median of all the kept
    # readings is dropped now, its samples with it
    lows = [probe.on and probe.quiet <= 0 and probe.low(g) for g, _ in passes]
    late = [g for (g, _), is_low in zip(passes, lows) if is_low]
    if late:
        passes = [p for p, is_low in zip(passes, lows) if not is_low]
        for g in late:
            probe.kept.remove(g)   # a low reading is not kept
        clean, dropped, low = clean - len(late), dropped + len(late), low + len(late)
        samples = {k: [] for k in timed}
        for _, cur in passes:
            add_samples(samples, cur)
        print("[torch] the sequence: %d pass%s kept before the run had a median read low against it: "
              "dropped" % (len(late), "" if len(late) == 1 else "es"), file=sys.stderr, flush=True)
    kept_gbs = [g for g, _ in passes]
    out = {}
    counts = {"passes": clean + dropped, "dropped": dropped, "low_bandwidth": low}
    for k in timed:
        if clean < 3:
            out[k] = {"status": "contended", "reason": "%s: %d clean passes of the sequence of the 3 "
                      "needed; of %d passes, %d waited for a CPU or had other processes running on "
                      "the CPUs it uses and %d read the memory bandwidth low" % (
                          rows[k]["table"], clean, clean + dropped, dropped - low, low),
                      "blocks": clean + dropped, "contended_blocks": dropped, "context": "sequence"}
            continue
        v = kept(samples[k])
        out[k] = {"status": "ok", "samples": len(v), "mean_us": statistics.fmean(v),
                  "median_us": statistics.median(v), "min_us": min(v),
                  "std_us": statistics.pstdev(v) if len(v) > 1 else 0.0,
                  "blocks": clean + dropped, "contended_blocks": dropped, "context": "sequence",
                  "probe_gbs": statistics.median(kept_gbs) if kept_gbs else 0.0, "retries": 0}
    return out, counts


def measure_again(rows, answers, repeat, budget, probe, evict=None):
    """The end of the run (docs/replay.md "Contention"), as perfdb's own
    replay does it: without a quiet figure a row was held to the readings
    kept before it, none for the first row and a few, as low as it, for the
    next ones when the run starts in the VM's slow state.  A row timed alone
    and written ok without a retry whose reading is low against the whole
    run's kept readings is measured again now, held to their median, the
    new measurement counting as its first retry; what is still low is
    contended.  Returns (rows measured again, of them now ok)."""
    if not probe.on or probe.quiet > 0 or probe.retries < 1:
        return 0, 0
    late = [k for k, a in enumerate(answers) if a.get("status") == "ok" and a.get("context") != "sequence"
            and a.get("retries", 0) == 0 and probe.low(a.get("probe_gbs", 0.0))]
    probe.fixed = probe.reference()
    ok = 0
    for k in late:
        row, res = rows[k], {"table": rows[k]["table"], "line": rows[k]["line"]}
        try:
            res.update(replay(row, repeat, budget, probe, tries=1, evict=evict))
        except (Refused, RuntimeError, ValueError, TypeError, IndexError) as e:
            first = answers[k]
            res.update({"status": "contended", "low_bandwidth": True, "probe_gbs": first["probe_gbs"],
                        "retries": 0, "reason": "%s: measured with %.1f GB/s of memory bandwidth against %s "
                        "%.1f, and could not be measured again (%s)" % (row["table"], first["probe_gbs"],
                        probe.against(), probe.reference(), str(e).splitlines()[0][:200])})
        ok += res.get("status") == "ok"
        answers[k] = res
        print("[torch] %s:%d measured again: %s" % (row["table"], row["line"], res["status"]),
              file=sys.stderr, flush=True)
    return len(late), ok


def main():
    req = json.load(open(sys.argv[1]))
    torch.set_num_threads(int(req["threads"]))
    torch.manual_seed(0)
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(), "rows": []}
    probe = Probe(req.get("probe"))
    in_seq = {}
    if req.get("sequence"):
        in_seq, out["sequence"] = replay_sequence(req["rows"], req["sequence"], int(req["repeat"]),
                                                  float(req["budget_s"]), probe)
    # its 64 MiB only where a row is timed alone
    alone = any(i not in in_seq and not row.get("untimed") for i, row in enumerate(req["rows"]))
    evict = Evict() if alone and os.environ.get("PERFDB_TORCH_EVICT", "1") != "0" else None
    for i, row in enumerate(req["rows"]):
        res = {"table": row["table"], "line": row["line"]}
        if row.get("untimed"):
            res["status"] = "untimed"
            out["rows"].append(res)
            continue
        try:
            res.update(in_seq[i] if i in in_seq else replay(row, int(req["repeat"]), float(req["budget_s"]), probe,
                                                                         evict=evict))
        except Refused as e:
            res.update({"status": "failed", "reason": "%s: %s" % (row["table"], e)})
        except (RuntimeError, ValueError, TypeError, IndexError) as e:
            res.update({"status": "failed", "reason": "%s: PyTorch refused: %s" % (
                row["table"], str(e).splitlines()[0][:200])})
        if res.get("status") == "ok" and not all(math.isfinite(res[k]) for k in
                                                 ("mean_us", "median_us", "min_us", "std_us")):
            res = {"table": row["table"], "line": row["line"], "status": "failed",
                   "reason": "%s: no finite time" % row["table"]}
        out["rows"].append(res)
        print("[torch] %s:%d %s" % (row["table"], row["line"], res["status"]), file=sys.stderr, flush=True)
    out["rows_measured_again"], out["rows_measured_again_written"] = measure_again(
        req["rows"], out["rows"], int(req["repeat"]), float(req["budget_s"]), probe, evict)
    out["probe_median_gbs"] = probe.median()
    out["probe_readings"] = len(probe.every) + probe.none
    out["probe_readings_none"] = probe.none
    with open(sys.argv[2], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
