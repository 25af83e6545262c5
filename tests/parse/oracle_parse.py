#!/usr/bin/env python3
"""Independent oracle for `perfdb parse` into an empty database.

Written from docs/spec/parse.md (§1-§5) and perfdb's Decisions 1-5 and 8, in the
style of the reference parser (Python csv, statistics), sharing no code with
perfdb. It is the "second method" for the parse golden tests: expected tables
under tests/cli/parse/*/expected_files/ are produced by it, and
tests/parse/compare_oracle.sh runs it against perfdb on generated profiles.

usage: oracle_parse.py PROFILING_PATH OUTDIR
"""
import csv
import math
import re
import statistics
import sys
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
FIA = "FusedInferAttentionScore"
FIA_COLS = ["Runtime source_profile", "Runtime actual_seq_lengths_shape",
            "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_shape",
            "Runtime actual_seq_lengths_kv_values", "Runtime avg_seq_len",
            "Runtime block_table_shape", "Runtime block_table_valid_blocks",
            "Runtime num_heads", "Runtime num_key_value_heads", "Runtime sparse_mode",
            "Runtime input_layout", "Runtime block_size", "Runtime attn_state",
            "Runtime kv_cache_mode", "Runtime metadata_completeness"]
RENAMES = {"split_qkv_rmsnorm_rope_kernel_0": "split_qkv_rmsnorm_rope_kernel",
           "muls_add_kernel_1": "muls_add_kernel"}


def read(path):
    with open(path, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f))
    rows = [r for r in rows if r]
    header = [h.strip() for h in rows[0]]
    out = []
    for r in rows[1:]:
        r = [c.strip() for c in r] + [""] * (len(header) - len(r))
        out.append(dict(zip(header, r)))
    return header, out


def kind_of(header):
    if "OP Type" in header and "Task Duration(us)" in header:
        return "op_summary"
    if "Type" in header or "Duration(us)" in header or "Input Shapes" in header:
        return "kernel_details"
    return None


def inputs(root):
    root = Path(root)
    if root.is_file():
        header, _ = read(root)
        return [(root, kind_of(header))], []
    kd, osum, ops = [], [], []
    for p in sorted(root.rglob("*")):
        if p.is_dir():
            continue
        if p.name == "operator_details.csv":
            ops.append(p)
        elif p.suffix == ".csv":
            try:
                k = kind_of(read(p)[0])
            except (IndexError, UnicodeDecodeError):
                k = None
            if k == "kernel_details":
                kd.append((p, k))
            elif k == "op_summary":
                osum.append((p, k))
    return (kd if kd else osum), ops


def num(v):
    try:
        x = float(v)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def is_na(v):
    return v.strip().strip('"').upper() == "N/A"


def col(row, kind, name):
    if kind == "op_summary":
        name = {"Type": "OP Type", "Accelerator Core": "Task Type",
                "Duration(us)": "Task Duration(us)", "Name": "Op Name"}.get(name, name)
    return row.get(name, "") or ""


def fia_slots(text):
    """Slots 5, 6, 14 as comma-joined ints; None for a slot that is not integers."""
    cleaned = text.strip().strip('"')
    slots = cleaned.split(";") if cleaned else []
    res = []
    for i in (5, 6, 14):
        if i >= len(slots):
            res.append("")
            continue
        s = slots[i].strip().strip('"').strip()
        if s in ("", "()", "N/A", "NA", "NULL", "None", "none") or s.upper() == "N/A":
            res.append("")
            continue
        if s.startswith("(") and s.endswith(")"):
            s = s[1:-1]
        parts = [p for p in re.split(r"[,\s]+", s) if p]
        try:
            dims = [int(p) for p in parts]
        except ValueError:
            res.append("")
            continue
        res.append(",".join(str(d) for d in dims) if all(d >= 0 for d in dims) else "")
    return res


def main():
    src, outdir = sys.argv[1], Path(sys.argv[2])
    files, ops = inputs(src)
    groups = {}
    fia_kernel = {}   # dir -> [(in, out)]
    for path, kind in files:
        _, rows = read(path)
        for r in rows:
            t = col(r, kind, "Type")
            ins, outs = col(r, kind, "Input Shapes"), col(r, kind, "Output Shapes")
            if t == FIA:
                fia_kernel.setdefault(path.parent, []).append((ins, outs))
            if is_na(ins) or is_na(outs):
                continue
            t = RENAMES.get(t, t)
            if not t:
                continue
            # Types are pooled per output file: `A/B` and `A_B` share A_B.csv.
            t = re.sub(r'[<>:"/\\|?*\x00-\x1F]', "_", t)
            key = (t, ins, col(r, kind, "Input Data Types"), col(r, kind, "Input Formats"), outs)
            g = groups.setdefault(key, {"d": [], "meta": {}, "c": {c: [] for c in CNT}})
            for m in ("OP State", "Accelerator Core", "Output Data Types", "Output Formats"):
                v = col(r, kind, m)
                if v and not g["meta"].get(m):
                    g["meta"][m] = v
            d = num(col(r, kind, "Duration(us)"))
            if d is not None and d >= 0:
                g["d"].append(d)
            for c in CNT:
                v = col(r, kind, c)
                if v and v.upper() != "N/A" and num(v) is not None:
                    g["c"][c].append(num(v))

    # FIA runtime metadata (spec §5, Decision 8)
    op_rows = {}
    for p in ops:
        _, rows = read(p)
        keep = []
        for r in rows:
            names = " ".join(re.sub(r"[^a-z0-9]+", "", (r.get(k, "") or "").lower())
                             for k in ("Type", "Name", "Op Type", "Op Name", "Operator Type",
                                       "Operator Name"))
            if "fusedinferattentionscore" in names and r.get("Input Shapes") and r.get("Output Shapes"):
                keep.append(r)
        op_rows[p.parent] = keep
    fia_meta = {}
    for d, krows in fia_kernel.items():
        orows = op_rows.get(d, [])
        for i, (ins, outs) in enumerate(krows):
            if (ins, outs) in fia_meta:
                continue
            text = orows[i]["Input Shapes"] if i < len(orows) else ""
            s5, s6, s14 = fia_slots(text or ins)
            fia_meta[(ins, outs)] = [d.name, s5, "", s6, "", "", s14, "", "", "", "", "", "",
                                     "", "", "profile_shapes_only"]

    files_out = {}
    for key, g in groups.items():
        name = re.sub(r'[<>:"/\\|?*\x00-\x1F]', "_", key[0].strip()) or "UNKNOWN_TYPE"
        files_out.setdefault(name, []).append((key, g))
    outdir.mkdir(parents=True, exist_ok=True)
    for name, items in files_out.items():
        has_fia = any(k[0] == FIA for k, _ in items)
        cols = BASE + (FIA_COLS if has_fia else []) + ["Profiling Count"]
        with open(outdir / f"{name}.csv", "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\r\n")
            w.writerow(cols)
            for (t, ins, idt, ifm, outs), g in items:
                xs = g["d"]
                stats = ["", "", ""]
                if xs:
                    stats = [f"{math.fsum(xs) / len(xs):.6f}", f"{statistics.median(xs):.6f}",
                             f"{statistics.pstdev(xs):.6f}"]
                cnt = [f"{math.fsum(v) / len(v):.6f}" if v else "" for v in g["c"].values()]
                m = g["meta"]
                row = [m.get("OP State", ""), m.get("Accelerator Core", ""), ins, idt, ifm, outs,
                       m.get("Output Data Types", ""), m.get("Output Formats", "")] + stats + cnt
                if has_fia:
                    row += fia_meta.get((ins, outs), [""] * 16) if t == FIA else [""] * 16
                w.writerow(row + [str(len(xs))])


if __name__ == "__main__":
    main()
