#!/usr/bin/python3
"""Summarise one consumer_check.py run (bench/consumer.sh).

usage: consumer_summary.py LABEL DB_DIR LOOKUPS.tsv [--mapping YAML] [--only TABLE]

Prints one line: the tables of DB_DIR (its *.csv) and how many of them the
mapping names (DB_DIR/op_mapping.yaml, else --mapping: an entry's
kernel_type, alternate_kernel_types or sub_kernels; the simulator can reach
no other table), the row lookups asked through the real mapping entries
("tc": the simulator's path) and the share that hit, and the same for
"kernel" mode (each table asked through a plain mapping of its own).
--only restricts everything to one table.  Exits 0 always:
bench/consumer.sh compares with the targets.
"""
import argparse
import os
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("label")
    ap.add_argument("db")
    ap.add_argument("tsv")
    ap.add_argument("--only")
    ap.add_argument("--mapping")
    a = ap.parse_args()
    import yaml
    mp = os.path.join(a.db, "op_mapping.yaml")
    if not os.path.exists(mp):
        mp = a.mapping
    named = set()
    if mp and os.path.exists(mp):
        doc = yaml.safe_load(open(mp, encoding="utf-8")) or {}
        for m in (doc.get("operator_mappings") or {}).values():
            if isinstance(m, dict):
                named.update(k for k in [m.get("kernel_type")] + list(m.get("alternate_kernel_types") or [])
                             + list(m.get("sub_kernels") or []) if isinstance(k, str))
    tables = sorted(f[:-4] for f in os.listdir(a.db) if f.endswith(".csv"))
    rows = {"tc": [0, 0], "kernel": [0, 0]}
    for line in open(a.tsv, encoding="utf-8"):
        if not line.startswith("# ") or line.startswith("# total") or line.startswith("# summary"):
            continue
        f = line[2:].rstrip("\n").split("\t")
        if len(f) < 9 or f[2] != "row" or f[1] not in rows:
            continue
        table = f[0]
        if a.only and table != a.only:
            continue
        rows[f[1]][0] += int(f[3])
        rows[f[1]][1] += int(f[4])
    if a.only:
        tables = [t for t in tables if t == a.only]
    unreached = [t for t in tables if t not in named]
    def rate(q, h):
        return f"{h}/{q} = {100.0 * h / q:5.1f} %" if q else "no rows"
    print(f"{a.label:<34} tables {len(tables) - len(unreached):>3}/{len(tables):<3} mapped   "
          f"tc rows {rate(*rows['tc']):<22} kernel rows {rate(*rows['kernel'])}")
    if unreached:
        print(f"{'':<34} not in the mapping: {', '.join(unreached[:8])}{' …' if len(unreached) > 8 else ''}")
    q, h = rows["tc"]
    print(f"#rate {a.label}\t{(100.0 * h / q) if q else 0:.1f}\t{len(unreached)}", file=sys.stderr)


if __name__ == "__main__":
    main()
