#!/usr/bin/env python3
"""Checks a CPU database parsed from a PyTorch trace after `perfdb microbench
--backend cpu` (tests/cli/microbench/cpu_torch_trace), against rules restated
here from aten's schemas independently of src/ops/aten_lower.c
(docs/ops.md "PyTorch operators").

Usage: check_torch_db.py BEFORE AFTER ROWS_CSV.  BEFORE is a copy of the
database before the run.  For every aten table the rules say a row either
replays (then its MicroBench columns are filled, Average Duration positive,
and its Profiling cells are as before) or fails with the stated reason (then
the row is as before).  Tables of ops perfdb does not replay stay byte for
byte.  Prints one line per replayed table and a summary.
"""
import csv, os, sys

before, after, rows_csv = sys.argv[1:4]
REPLAYED = {  # stem -> what its rows run as (docs/ops.md)
    "aten.mm": "gemm", "aten.addmm": "gemm", "aten.linear": "gemm", "aten.matmul": "gemm",
    "aten.bmm": "gemm", "aten.baddbmm": "gemm", "aten._softmax": "self", "aten.softmax": "self",
    "aten.silu": "self", "aten.silu_": "self", "aten.gelu": "self",
    "aten.native_layer_norm": "norm", "aten.layer_norm": "norm", "aten.rms_norm": "norm",
    "aten.add": "binary", "aten.add_": "binary", "aten.mul": "binary", "aten.mul_": "binary",
    "aten.sub": "binary", "aten.sub_": "binary", "aten.div": "binary", "aten.div_": "binary",
    "aten.copy_": "copy", "aten.to": "to", "aten._to_copy": "to",
    "aten.embedding": "gather", "aten.index_select": "gather",
    "aten.pow": "unary", "aten.rsqrt": "unary", "aten.clone": "unary", "aten.fill_": "unary",
    "aten.mean": "reduce", "aten.sum": "reduce",
    "aten.masked_fill": "masked", "aten.masked_fill_": "masked",
}

def slots(cell):
    s = cell.strip('"')
    return [[int(d) for d in x.split(",")] if x else None for x in s.split(";")]

def numel(d):
    n = 1
    for x in d:
        n *= x
    return n

def bcast(b, o):  # numpy's rule: b right-aligned to o, each dim o's or 1
    while len(b) > len(o) and b[0] == 1:
        b = b[1:]
    return len(b) <= len(o) and all(x in (1, y) for x, y in zip(reversed(b), reversed(o)))

def expect(kind, stem, row):
    """None when the row replays, else a fragment of the failure reason."""
    ins = slots(row["Input Shapes"])
    out_dt = row["Output Data Types"]
    if kind == "copy":
        if not ins[0]:
            return "self slot records no tensor shape"
        return None if numel(ins[0]) == numel(ins[1] or []) else "broadcasts into self"
    if kind == "to":
        if not ins[0]:
            return "self slot records no tensor shape"
        return None if out_dt else "target dtype (a scalar argument) is not recorded"
    if kind == "masked":   # self and a bool mask that broadcasts trailing-wise
        if not ins[0]:
            return "self slot records no tensor shape"
        if len(ins) < 2 or not ins[1]:
            return "mask slot records no tensor shape"
        m, o = ins[1], ins[0]
        while m and m[0] == 1:
            m = m[1:]
        return None if len(m) <= len(o) and m == o[len(o) - len(m):] else "does not broadcast"
    if kind in ("unary", "reduce"):   # a self with dims (a 0-d self reads as no tensor)
        return None if ins and ins[0] else "self slot records no tensor shape"
    if kind == "binary":
        a, b = ins[0], ins[1] if len(ins) > 1 else None
        if b and not stem.endswith("_") and numel(b) > numel(a):
            a, b = b, a
        return None if not b or bcast(b, a) else "does not broadcast"
    return None

def sigkey(row):
    sh = row["Input Shapes"].strip('"').split(";")
    dt = row["Input Data Types"].split(";")
    return (row["Input Shapes"], tuple(d for d, x in zip(dt, sh) if x), row["Output Shapes"],
            row["Output Data Types"])

def load(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))

status = {}
for r in load(rows_csv):
    status[(r["Operator"], int(r["Line"]))] = (r["Status"], r["Reason"])
ok = bad = 0
for name in sorted(os.listdir(before)):
    if not name.endswith(".csv"):
        continue
    stem = name[:-4]
    b_path, a_path = os.path.join(before, name), os.path.join(after, name)
    if stem not in REPLAYED:
        if open(b_path, "rb").read() != open(a_path, "rb").read():
            print(f"{stem}: changed, but perfdb does not replay it")
            bad += 1
        continue
    rows_b, rows_a = load(b_path), load(a_path)
    nrep = nfail = 0
    seen = set()
    for i, (rb, ra) in enumerate(zip(rows_b, rows_a)):
        line = i + 2
        # rows sharing a signature: only the first is ever written
        # (docs/database.md "Row identity"; a dtype without a shape drops out)
        key = sigkey(rb)
        if key in seen:
            prof_same = all(ra.get(k) == v for k, v in rb.items())
            if not prof_same:
                print(f"{stem}:{line}: shares a signature with an earlier row but was written")
                bad += 1
            continue
        seen.add(key)
        want = expect(REPLAYED[stem], stem, rb)
        got = status.get((stem, line), ("absent", ""))
        prof_same = all(ra.get(k) == v for k, v in rb.items() if k.startswith("Profiling") or k == "Input Shapes")
        if want is None:
            good = got[0] == "ok" and float(ra["Average Duration(us)"] or 0) > 0 and \
                int(ra["MicroBench Samples"] or 0) >= 1 and prof_same
            nrep += good
        else:
            good = got[0] == "failed" and want in got[1] and prof_same and not ra.get("MicroBench Samples")
            nfail += good
        if not good:
            print(f"{stem}:{line}: expected {'ok' if want is None else 'failed: ' + want}, got {got}")
            bad += 1
    if len(rows_a) != len(rows_b):
        print(f"{stem}: {len(rows_b)} rows became {len(rows_a)}")
        bad += 1
    print(f"{stem}: {nrep} replayed, {nfail} failed as the rules say")
    ok += 1
print(f"{ok} replayed tables, {bad} problems")
