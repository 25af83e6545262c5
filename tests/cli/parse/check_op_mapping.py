#!/usr/bin/env python3
"""Check a database's op_mapping.yaml with PyYAML (the simulator's own loader),
independently of perfdb's generator (docs/database.md "op_mapping.yaml"):

  check_op_mapping.py DB_DIR [KEY ...]

Prints 'tables N unnamed [..]' (tables no entry names), the per-op rule
violations (an entry of table aten.X keyed by another op), and for each KEY:
'KEY kernel_type=.. alternates=.. query_mode=.. tc_input_count=.. zero_cost=..'."""
import os
import sys
import urllib.parse

import yaml

db = sys.argv[1]
doc = yaml.safe_load(open(os.path.join(db, "op_mapping.yaml"), encoding="utf-8"))
m = doc["operator_mappings"]
assert isinstance(m, dict), "operator_mappings is not a mapping"
tables = sorted(f[:-4] for f in os.listdir(db) if f.endswith(".csv"))
named = set()
for key, e in m.items():
    named.add(e.get("kernel_type"))
    named.update(e.get("alternate_kernel_types") or [])
    named.update(e.get("sub_kernels") or [])
print("tables", len(tables), "unnamed", [t for t in tables if t not in named])
print("names no table", sorted(n for n in named if n is not None and n not in tables))
bad = []
for key, e in m.items():
    kt = e.get("kernel_type") or ""
    ns, dot, rest = kt.partition(".")
    if not dot or key.startswith("profiling."):
        continue
    op, _, ovl = urllib.parse.unquote(rest).partition(".")
    want = f"{ns}.{op}.{ovl}" if ovl else f"{ns}.{op}."
    if not (key == want if ovl else key.startswith(want)):
        bad.append((key, kt))
print("keyed by another op", bad)
for key in sys.argv[2:]:
    e = m.get(key)
    if e is None:
        print(key, "absent")
        continue
    print(key, " ".join(f"{f}={e.get(f)}" for f in
                        ("kernel_type", "alternate_kernel_types", "query_mode", "tc_input_count", "zero_cost")))
