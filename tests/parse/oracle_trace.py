#!/usr/bin/env python3
"""Independent oracle for `perfdb parse` of a PyTorch profiler (Kineto) trace.

Written from docs/chrome_trace.md ("Linking", "Per-op tables", "Table names")
with Python's json and gzip, sharing no code with perfdb: it loads the whole
trace and links by direct search, where perfdb streams and joins by sorting.

usage: oracle_trace.py TRACE OUTDIR [--per-kernel]
       oracle_trace.py TRACE --acceptance PERFDB_DB_DIR
The second form checks the issue's acceptance figure on perfdb's tables: of
the kernel time whose op recorded shapes, the share that lands in rows
carrying those shapes (prints it; exits 1 below 95 %).
"""
import bisect
import csv
import re
import gzip
import json
import math
import statistics
import sys
from decimal import Decimal, ROUND_HALF_UP
from pathlib import Path

CNT = ["aicore_time(us)", "aic_total_cycles", "aic_mac_time(us)", "aic_mac_ratio",
       "aic_scalar_time(us)", "aic_scalar_ratio", "aic_mte1_time(us)", "aic_mte1_ratio",
       "aic_mte2_time(us)", "aic_mte2_ratio", "aic_fixpipe_time(us)", "aic_fixpipe_ratio",
       "aic_icache_miss_rate", "aiv_time(us)", "aiv_total_cycles", "aiv_vec_time(us)",
       "aiv_vec_ratio", "aiv_scalar_time(us)", "aiv_scalar_ratio", "aiv_mte2_time(us)",
       "aiv_mte2_ratio", "aiv_mte3_time(us)", "aiv_mte3_ratio", "aiv_icache_miss_rate",
       "cube_utilization(%)"]
BASE = ["OP State", "Accelerator Core", "Input Shapes", "Input Data Types", "Input Formats",
        "Output Shapes", "Output Data Types", "Output Formats",
        "Profiling Average Duration(us)", "Profiling Median Duration(us)",
        "Profiling Std Duration(us)"] + ["Profiling Average " + c for c in CNT]
LAUNCH = {"cuda_runtime", "cuda_driver", "privateuse1_runtime", "privateuse1_driver"}
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset"}
# torch's C++ spellings -> the Ascend profiler's (FLOAT, DOUBLE, DT_BF16, INT64, ...):
# what TensorCast's consumer compares cells against (docs/database.md "Dtype spellings")
TORCH = {"float": "FLOAT", "double": "DOUBLE", "c10::Half": "FLOAT16",
         "c10::BFloat16": "DT_BF16", "signed char": "INT8", "unsigned char": "UINT8",
         "short int": "INT16", "short": "INT16", "short unsigned int": "UINT16",
         "unsigned short": "UINT16", "int": "INT32", "unsigned int": "UINT32",
         "long int": "INT64", "long": "INT64", "long long int": "INT64",
         "long long": "INT64", "long unsigned int": "UINT64", "unsigned long": "UINT64",
         "long long unsigned int": "UINT64", "unsigned long long": "UINT64",
         "bool": "BOOL", "c10::Float8_e4m3fn": "FLOAT8_E4M3FN",
         "c10::Float8_e5m2": "FLOAT8_E5M2", "c10::complex<float>": "COMPLEX64"}


def load(path):
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw.decode("utf-8"), parse_float=Decimal)
    if isinstance(doc, list):
        return doc, {}
    return doc["traceEvents"], doc


def ns(v):
    """µs (number or numeric string) to integer ns, half up at the 4th decimal."""
    d = Decimal(str(v)) * 1000
    return int(d.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def cells(args):
    """Input Shapes / Data Types / Formats of a cpu_op (docs: "Input cells")."""
    dims = args.get("Input Dims")
    if dims is None or not dims:
        return "", "", ""
    types = args.get("Input type") or []
    sh, dt, fm = [], [], []
    for i, slot in enumerate(dims):
        t = types[i] if i < len(types) and isinstance(types[i], str) else ""
        elems = slot if slot and isinstance(slot[0], list) else [slot]
        lst = slot and isinstance(slot[0], list)
        for e in elems:
            sh.append(",".join(str(x) for x in e))
            if t in TORCH:
                dt.append(TORCH[t])
                fm.append("ND")
            elif e or lst:
                dt.append(t.strip().replace(";", "_"))
                fm.append("ND")
            else:
                dt.append("")
                fm.append("")
    return '"' + ";".join(sh) + '"', ";".join(dt), ";".join(fm)


def op_table(name):
    """docs/chrome_trace.md "Table names": `::` -> `.`, escapes as %XX."""
    out, i, b = [], 0, name.encode("utf-8")
    while i < len(b):
        c = b[i]
        if c == 0x3A and i + 1 < len(b) and b[i + 1] == 0x3A and i > 0:
            out.append(b".")
            i += 2
            continue
        if c < 0x20 or c == 0x7F or chr(c) in '<>:"/\\|?*.%' or (c == 0x20 and i in (0, len(b) - 1)):
            out.append(b"%%%02X" % c)
        else:
            out.append(bytes([c]))
        i += 1
    return b"".join(out).decode("utf-8")


def file_name(t):
    """The table writer's file-name rule (docs/parse.md): bad bytes -> _, long names hashed."""
    s = t.strip(" \t\r\n")
    if not s:
        return "UNKNOWN_TYPE"
    b = bytearray()
    for k, c in enumerate(s.encode("utf-8")):
        bad = c < 0x20 or chr(c) in '<>:"/\\|?*' or (k == 0 and c == 0x2E)
        b.append(0x5F if bad else c)
    if len(b) > 200:
        h = 1469598103934665603
        for c in b:
            h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
        keep = 183
        while keep and (b[keep] & 0xC0) == 0x80:
            keep -= 1
        b = b[:keep] + b"~%016x" % h
    return b.decode("utf-8")


def link(events):
    """Each device activity with the cpu_op call it belongs to (or None)."""
    ops, launches, sflows, fflows, devs = [], [], [], [], []
    for e in events:
        ph, cat, a = e.get("ph"), e.get("cat"), e.get("args") or {}
        # a collective's annotation with the tensor it moves is an op too (docs/chrome_trace.md "Collectives")
        coll = (cat == "user_annotation" and isinstance(a.get("Input Dims"), list)
                and e.get("name", "").startswith(("nccl:", "rccl:", "gloo:", "hccl:"))
                and len(e.get("name", "")) > 5)
        if ph == "X" and (cat == "cpu_op" or coll):
            ts = ns(e["ts"])
            ops.append({"thr": (e.get("pid"), e.get("tid")), "ts": ts, "end": ts + ns(e["dur"]),
                        "ext": a.get("External id"), "name": e["name"], "cells": cells(a),
                        "seq": len(ops), "args": a, "annotation": coll})
        elif ph == "X" and cat in LAUNCH:
            ts = ns(e["ts"])
            launches.append({"thr": (e.get("pid"), e.get("tid")), "ts": ts,
                             "end": ts + ns(e.get("dur", 0)), "corr": a.get("correlation"),
                             "ext": a.get("External id"), "seq": len(launches)})
        elif ph == "X" and cat in DEVICE:
            ts = ns(e["ts"])
            dev = a.get("device", e.get("pid"))
            devs.append({"thr": (e.get("pid"), e.get("tid")), "ts": ts, "end": ts + ns(e["dur"]),
                         "corr": a.get("correlation"), "dur": float(e["dur"]), "name": e["name"],
                         "device": dev if isinstance(dev, int) else -1,
                         "kernel": cat == "kernel"})
        elif cat == "ac2g" and ph in ("s", "f") and isinstance(e.get("id"), int) and "ts" in e:
            (sflows if ph == "s" else fflows).append(((e.get("pid"), e.get("tid")), ns(e["ts"]), e["id"]))

    def bind(flows, slices):
        # a flow endpoint gives its id to the latest slice (without an id of
        # its own) on its thread started at or before it, if still running
        by = {}
        for s in slices:
            if s.get("own") is None:
                by.setdefault(s["thr"], []).append(s)
        for v in by.values():
            v.sort(key=lambda s: (s["ts"], s["seq2"]))
        starts = {t: [s["ts"] for s in v] for t, v in by.items()}
        for thr, ts, fid in flows:
            k = bisect.bisect_right(starts.get(thr, []), ts)
            if not k:
                continue
            s = by[thr][k - 1]
            if ts <= s["end"] and s["corr"] is None:
                s["corr"] = fid
    for i, l in enumerate(launches):
        l["own"], l["seq2"] = None, i
    bind(sorted(sflows, key=lambda f: f[1]), launches)
    for i, d in enumerate(devs):
        d["own"] = d["corr"]
        d["seq2"] = i
    bind(sorted(fflows, key=lambda f: f[1]), devs)

    by_thr = {}
    for o in ops:
        by_thr.setdefault(o["thr"], []).append(o)
    # the ops containing each launch: a sweep over each thread's ops by start
    # time, keeping those that have started and not yet ended
    pick_of = {}
    for thr, tl in ((t, [l for l in launches if l["thr"] == t]) for t in {l["thr"] for l in launches}):
        tops = sorted(by_thr.get(thr, []), key=lambda o: o["ts"])
        active, at = [], 0
        for l in sorted(tl, key=lambda l: l["ts"]):
            while at < len(tops) and tops[at]["ts"] <= l["ts"]:
                active.append(tops[at])
                at += 1
            active = [o for o in active if o["end"] >= l["ts"]]
            order = lambda o: (o["ts"], -o["end"], o["seq"])
            named = [o for o in active if l["ext"] is not None and o["ext"] == l["ext"]]
            pick_of[l["seq"]] = max(named, key=order) if named else (max(active, key=order) if active else None)
    launch_op = {}
    for l in launches:
        if l["corr"] is None:
            continue
        launch_op.setdefault(l["corr"], pick_of[l["seq"]])
    return ops, [(d, launch_op.get(d["corr"]) if d["corr"] is not None else None) for d in devs]


# docs/chrome_trace.md "Collectives" and docs/comm.md "What a size means"
COMM_FILE = {"allreduce": "hcom_allReduce_", "allgather": "hcom_allGather_",
             "reducescatter": "hcom_reduceScatter_", "alltoall": "hcom_alltoallv_"}
ELEM = {"FLOAT": 4, "FLOAT16": 2, "DT_BF16": 2, "DOUBLE": 8, "INT8": 1, "UINT8": 1, "INT16": 2,
        "UINT16": 2, "INT32": 4, "UINT32": 4, "INT64": 8, "UINT64": 8, "BOOL": 1}
SCALAR = {"Float": "FLOAT", "Double": "DOUBLE", "Half": "FLOAT16", "BFloat16": "DT_BF16",
          "Char": "INT8", "Byte": "UINT8", "Short": "INT16", "Int": "INT32", "Long": "INT64",
          "Bool": "BOOL"}


def comm_kind(name):
    flat = name.replace("_", "").lower()
    for stem in COMM_FILE:
        if flat.startswith(stem):
            return stem
    return None


def comm_dtype(spelling):
    """The comm table's dtype column for a cell's dtype spelling."""
    return {"FLOAT": "DT_FLOAT", "FLOAT16": "DT_FP16", "DT_BF16": "DT_BF16", "INT8": "DT_INT8",
            "DOUBLE": "DT_FLOAT64"}.get(spelling, "DT_" + spelling)


def collective(op, dist):
    """(row name, cells) and (kind, bytes, group, dtype, backend) or None, for a collective op."""
    a = op["args"]
    backend = dist.get("backend") if isinstance(dist.get("backend"), str) and dist.get("backend") else "c10d"
    if op["annotation"]:
        be, coll = op["name"].split(":", 1)
        kind = comm_kind(coll)
        sh = op["cells"][0].strip('"').split(";")
        dt = op["cells"][1].split(";")
        total = 0
        for i, slot in enumerate(sh):
            t = dt[i] if i < len(dt) else ""
            n = math.prod(int(x) for x in slot.split(",")) if slot else 0
            if not n or t not in ELEM:
                total = -1
                break
            total += n * ELEM[t]
        group = dist.get("world_size") if isinstance(dist.get("world_size"), int) else 0
        if kind is None or group <= 0 or total <= 0:
            return (op["name"], op["cells"]), None
        if kind == "reducescatter":
            total //= group
        return (op["name"], op["cells"]), (kind, total, group, comm_dtype(dt[0]), "profiled:" + be)
    coll = a["Collective name"]
    title = re.sub(r"^(_?)all(reduce|gather)", r"\1all_\2", coll)
    t = SCALAR.get(a.get("dtype"), "")
    inn, out, group = a.get("In msg nelems"), a.get("Out msg nelems"), a.get("Group size")
    named = (backend + ":" + title, ('"%s"' % inn, t, "ND" if t else ""))
    kind = comm_kind(coll)
    elems = out if kind == "reducescatter" else inn
    if kind is None or not isinstance(group, int) or group <= 0 or t not in ELEM or not isinstance(elems, int) or elems <= 0:
        return named, None
    return named, (kind, elems * ELEM[t], group, comm_dtype(t), "profiled:" + backend)


def tables(events, per_kernel, dist=None, comm=None):
    dist = dist or {}
    ops, linked = link(events)
    calls = {}
    unlinked = []
    for d, op in linked:
        if op is None:
            unlinked.append(d)
        else:
            calls.setdefault(op["seq"], (op, []))[1].append(d)
    rows = []   # (type, cells, duration, {kernel: us}, the name as the trace spells it)
    for seq in sorted(calls):
        op, ds = calls[seq]
        name, c, obs = op["name"], op["cells"], None
        if op["annotation"] or isinstance(op["args"].get("Collective name"), str):
            (name, c), obs = collective(op, dist)
        for dev in dict.fromkeys(d["device"] for d in ds):
            mine = [d for d in ds if d["device"] == dev]
            total, share = 0.0, {}
            for d in mine:
                total += d["dur"]
                share[d["name"]] = share.get(d["name"], 0.0) + d["dur"]
            if obs is not None and comm is not None:
                comm.setdefault(obs, []).append(total)
            if not per_kernel:
                rows.append((op_table(name), c, total, share, name))
        if per_kernel:
            rows += [(d["name"], c, d["dur"], None, d["name"]) for d in ds if d["kernel"]]
    for d in unlinked:
        if per_kernel:
            if d["kernel"]:
                rows.append((d["name"], ("", "", ""), d["dur"], None, d["name"]))
        else:
            rows.append((d["name"], ("", "", ""), d["dur"], {d["name"]: d["dur"]}, d["name"]))
    return rows


# Output cells (docs/chrome_trace.md "Output cells"), aten's rules restated:
# same shape as input 0, numpy broadcasting, bool comparisons, GEMM products.
SELF = set("""neg tanh sigmoid exp exp_ log log_ log2 log10 sqrt rsqrt relu relu_ silu silu_ gelu
clamp clamp_ clamp_min nan_to_num logit abs reciprocal fill_ zero_ copy_ clone contiguous softmax
_softmax log_softmax _log_softmax masked_fill masked_fill_ threshold_backward sigmoid_backward
tanh_backward logit_backward gelu_backward silu_backward _softmax_backward_data dropout
native_dropout scatter_ scatter_add_ index_put_ _index_put_impl_ cumsum triu tril rms_norm
_fused_rms_norm layer_norm native_layer_norm add_ sub_ mul_ div_ pow_ addcmul_ addcdiv_
bitwise_not""".split())
BINARY = set("add sub mul div pow rsub maximum minimum addcmul addcdiv".split())
COMPARE = set("eq ne ge gt le lt logical_and logical_or logical_xor logical_not".split())


def bcast(a, b):
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        return None
    return [y if x == 1 else x for x, y in zip(a, b)]


def matmul(a, b):
    va, vb = len(a) == 1, len(b) == 1
    a = [1] + a if va else a
    b = b + [1] if vb else b
    if len(b) < 2 or a[-1] != b[-2]:
        return None
    batch = bcast(a[:-2], b[:-2])
    if batch is None:
        return None
    return batch + ([] if va else [a[-2]]) + ([] if vb else [b[-1]])


def outputs(table, ins, idt):
    """(Output Shapes, Output Data Types, Output Formats) of an op row."""
    none = ('""', "", "")
    if not table.startswith("aten.") or not ins:
        return none
    op = table[5:]
    slots = ins.strip('"').split(";")
    dts = idt.split(";")
    try:
        t = [([int(x) for x in sl.split(",")] if sl else [], dts[i] if i < len(dts) else "")
             for i, sl in enumerate(slots)]
    except ValueError:
        return none
    present = [(sh, dt) for (sh, dt), sl in zip(t, slots) if sl or dt]
    first = (t[0][0], t[0][1]) if (slots[0] or t[0][1]) else None
    r = None
    if op in SELF and first:
        r = first
    elif (op in BINARY or op in COMPARE) and first:
        sh = first[0]
        for (s2, d2), sl in zip(t[1:], slots[1:]):
            if (sl or d2) and sh is not None:
                sh = bcast(sh, s2)
        if sh is not None:
            r = (sh, "BOOL" if op in COMPARE else first[1])
    elif op in ("mm", "bmm") and len(present) >= 2:
        (a, da), (b, _) = present[:2]
        rank = 2 if op == "mm" else 3
        if len(a) == len(b) == rank and (op == "mm" or a[0] == b[0]):
            sh = matmul(a, b)
            r = (sh, da) if sh else None
    elif op in ("addmm", "baddbmm") and len(present) >= 3:
        (a, da), (b, _) = present[1:3]
        rank = 2 if op == "addmm" else 3
        if len(a) == len(b) == rank and (op == "addmm" or a[0] == b[0]):
            sh = matmul(a, b)
            r = (sh, da) if sh else None
    elif op == "linear" and len(present) >= 2:
        (x, dx), (w, _) = present[:2]
        if x and len(w) == 2 and x[-1] == w[1]:
            r = (x[:-1] + [w[0]], dx)
        elif x and len(w) == 1 and x[-1] == w[0]:
            r = (x[:-1], dx)
    elif op == "matmul" and len(present) >= 2:
        (a, da), (b, _) = present[:2]
        sh = matmul(a, b) if a and b else None
        r = (sh, da) if sh is not None else None
    elif op == "embedding" and len(present) >= 2:
        (w, dw), (ix, _) = present[:2]
        if len(w) == 2:
            r = (ix + [w[1]], dw)
    if r is None:
        return none
    return '"' + ",".join(str(x) for x in r[0]) + '"', r[1], "ND"


def readable(name):
    """docs/chrome_trace.md "Table names", restated: trimmed; a leading
    `void ` dropped; `(anonymous namespace)` (and the `::` after it) dropped;
    cut before the first `<` or `(` past the first character; `::` -> `.`;
    characters outside [A-Za-z0-9._+-] -> `_`, a run of them one `_`, none at
    either end or beside another `_`; no leading `.` or `-`, no trailing `.`;
    empty: UNKNOWN_OP; past 120 bytes: cut, `~` and 8 hex digits of FNV-1a."""
    s = name.strip(" \t\r\n")
    if len(s) > 5 and s.startswith("void "):
        s = s[5:]
    s = s.replace("(anonymous namespace)::", "").replace("(anonymous namespace)", "")
    cut = next((i for i, ch in enumerate(s) if i > 0 and ch in "<("), len(s))
    s = s[:cut].replace("::", ".")
    out, run = [], False
    for ch in s:
        if re.fullmatch(r"[A-Za-z0-9._+-]", ch):
            if run and out and out[-1] != "_":
                out.append("_")
            out.append(ch)
            run = False
        else:
            run = True
    r = "".join(out).lstrip(".-").rstrip(".")
    if not r:
        return "UNKNOWN_OP"
    if len(r) > 120:
        return r[:120].rstrip(".") + "~" + fnv8(name)
    return r


def fnv8(name):
    h = 1469598103934665603
    for c in name.encode("utf-8"):
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%08x" % (h & 0xFFFFFFFF)


def write(rows, outdir):
    groups = {}
    for t, c, dur, share, tname in rows:
        g = groups.setdefault((file_name(t), c), {"d": [], "s": {}, "n": tname})
        g["d"].append(dur)
        for k, v in (share or {}).items():
            g["s"][k] = g["s"].get(k, 0.0) + v
    # the file each trace name takes, in first-appearance order: the readable
    # name, or with the hash when another name took it first
    taken, where = {}, {}
    for (old, c), g in groups.items():
        n = g["n"]
        if n not in where:
            r = readable(n)
            if r in taken and taken[r] != n and "~" not in r:
                r = r[:111] + "~" + fnv8(n)
            taken.setdefault(r, n)
            where[n] = r
    files = {}
    for (old, c), g in groups.items():
        files.setdefault(where[g["n"]], []).append((old, c, g))
    outdir.mkdir(parents=True, exist_ok=True)
    for name, items in files.items():
        kern = any(g["s"] for _, _, g in items)
        with open(outdir / f"{name}.csv", "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\r\n")
            w.writerow(BASE + ["Profiling Count"] + (["Kernels"] if kern else []) + ["Trace Name"])
            for old, (ins, idt, ifm), g in items:
                xs = g["d"]
                stats = [f"{math.fsum(xs) / len(xs):.6f}", f"{statistics.median(xs):.6f}",
                         f"{statistics.pstdev(xs):.6f}"]
                # a shape cell nothing fills is the quoted empty list (pandas reads "" as NaN)
                row = ["", "GPU", ins or '""', idt, ifm, *outputs(old, ins, idt)] + stats + [""] * len(CNT) + [str(len(xs))]
                if kern:
                    tot = sum(g["s"].values())
                    ks = sorted(g["s"].items(), key=lambda kv: (-kv[1], kv[0].encode()))
                    row.append(";".join(f"{(v / tot if tot > 0 else 1 / len(ks)):.4f}:"
                                        + k.replace(";", "_") for k, v in ks))
                row.append(g["n"])
                w.writerow(row)


def round2(x):
    """Python's repr(round(x, 2)), as the comm tables write floats."""
    return repr(round(x, 2))


def write_comm(comm, outdir):
    """hcom_<op>_.csv from the collectives (docs/chrome_trace.md "Collectives")."""
    by_file = {}
    for key, xs in comm.items():
        by_file.setdefault(COMM_FILE[key[0]], []).append((key, xs))
    for fname, items in by_file.items():
        items.sort(key=lambda kv: (kv[0][2], kv[0][3], kv[0][4], kv[0][1]))
        with open(outdir / f"{fname}.csv", "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\r\n")
            w.writerow(["message_bytes", "num_devices", "dtype", "Duration(us)", "bandwidth_gbps",
                        "busbw_gbps", "Min Duration(us)", "Max Duration(us)", "Std Duration(us)",
                        "Samples", "Backend"])
            for (kind, nbytes, n, dt, be), xs in items:
                med = statistics.median(xs)
                size = {"DT_FLOAT": 4, "DT_FP16": 2, "DT_BF16": 2, "DT_INT8": 1,
                        "DT_FLOAT64": 8}.get(dt) or ELEM[dt[3:]]
                e = nbytes // size
                # nccl-tests' bus bandwidth: the larger buffer of a rank times the op's factor
                bus, factor = {"allreduce": (e, 2 * (n - 1) / n), "allgather": (n * e, (n - 1) / n),
                               "reducescatter": (n * e, (n - 1) / n),
                               "alltoall": (n * max(1, e // n), (n - 1) / n)}[kind]
                w.writerow([nbytes, n, dt, round2(med), round2(nbytes / med / 1e3),
                            round2(bus * size / med / 1e3 * factor), round2(min(xs)),
                            round2(max(xs)), round2(statistics.pstdev(xs)), len(xs), be])


def acceptance(events, dbdir):
    """Kernel time whose op has shapes, and how much of it perfdb's rows carry."""
    ops, linked = link(events)
    want = {}
    for d, op in linked:
        if op is not None and op["cells"][0]:
            k = (op["name"], op["cells"])
            want[k] = want.get(k, 0.0) + d["dur"]
    total = sum(want.values())
    # the rows of each op, found by the name the trace spelled (Trace Name), not by file name
    rows = {}
    for p in Path(dbdir).glob("*.csv"):
        with open(p, encoding="utf-8", newline="") as f:
            for r in csv.DictReader(f):
                if r.get("Trace Name"):
                    rows.setdefault(r["Trace Name"], []).append(r)
    got = 0.0
    for (name, c), t in want.items():
        for r in rows.get(name, []):
            if (r["Input Shapes"], r["Input Data Types"], r["Input Formats"]) == c:
                got += min(t, float(r["Profiling Average Duration(us)"]) * int(r["Profiling Count"]))
    return total, got


def traces(path):
    """A file, or a directory's traces (per-rank files, pooled in path order)."""
    p = Path(path)
    if p.is_file():
        return [p]
    return sorted(q for q in p.rglob("*") if q.is_file() and q.name.endswith((".json", ".json.gz")))


def main():
    files = traces(sys.argv[1])
    if len(sys.argv) > 3 and sys.argv[2] == "--acceptance":
        bad = 0
        for f in files:
            total, got = acceptance(load(f)[0], sys.argv[3])
            if total == 0:
                print(f"{f.name}: no kernel time under ops with shapes (nothing to check)")
                continue
            share = 100.0 * got / total
            print(f"{f.name}: {share:.2f} % of {total:.3f} us of kernel time under ops with "
                  f"shapes lands in rows with those shapes")
            bad += share < 95.0
        return 1 if bad else 0
    rows, comm = [], {}
    for f in files:
        events, doc = load(f)
        rows += tables(events, "--per-kernel" in sys.argv[3:], doc.get("distributedInfo") or {}, comm)
    write(rows, Path(sys.argv[2]))
    write_comm(comm, Path(sys.argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
