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
                        "seq": len(ops)})
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
        for thr, ts, fid in flows:
            cand = [s for s in slices if s["thr"] == thr and s["ts"] <= ts and s.get("own") is None]
            if not cand:
                continue
            s = max(cand, key=lambda s: (s["ts"], s["seq2"]))
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
    launch_op = {}
    for l in launches:
        if l["corr"] is None:
            continue
        inside = [o for o in by_thr.get(l["thr"], []) if o["ts"] <= l["ts"] <= o["end"]]
        order = lambda o: (o["ts"], -o["end"], o["seq"])
        named = [o for o in inside if l["ext"] is not None and o["ext"] == l["ext"]]
        pick = max(named, key=order) if named else (max(inside, key=order) if inside else None)
        launch_op.setdefault(l["corr"], pick)
    return ops, [(d, launch_op.get(d["corr"]) if d["corr"] is not None else None) for d in devs]


def tables(events, per_kernel):
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
        if per_kernel:
            rows += [(d["name"], op["cells"], d["dur"], None, d["name"]) for d in ds if d["kernel"]]
            continue
        for dev in dict.fromkeys(d["device"] for d in ds):
            mine = [d for d in ds if d["device"] == dev]
            total, share = 0.0, {}
            for d in mine:
                total += d["dur"]
                share[d["name"]] = share.get(d["name"], 0.0) + d["dur"]
            rows.append((op_table(op["name"]), op["cells"], total, share, op["name"]))
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
    rows = []
    for f in files:
        rows += tables(load(f)[0], "--per-kernel" in sys.argv[3:])
    write(rows, Path(sys.argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
