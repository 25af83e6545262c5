#!/usr/bin/env python3
"""Writes an msprof op_summary CSV whose rows are the rows of a database
(every <db>/*.csv row becomes LAUNCHES launches of its OP Type with fresh
durations), so that `perfdb writeback` updates every table of the database.
   usage: gen_op_summary.py DB OUT.csv [LAUNCHES]"""
import csv, glob, os, random, sys

db, out = sys.argv[1], sys.argv[2]
launches = int(sys.argv[3]) if len(sys.argv) > 3 else 3
rnd = random.Random(7)
cols = ["Input Shapes", "Input Data Types", "Input Formats",
        "Output Shapes", "Output Data Types", "Output Formats"]
os.makedirs(os.path.dirname(out), exist_ok=True)
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["Op Name", "OP Type", "Task Type", "Task Duration(us)"] + cols)
    for path in sorted(glob.glob(os.path.join(db, "*.csv"))):
        op = os.path.basename(path)[:-4]
        with open(path, newline="") as t:
            for i, r in enumerate(csv.DictReader(t)):
                for k in range(launches):
                    w.writerow(["%s_%d_%d" % (op, i, k), op,
                                r.get("Accelerator Core") or "AI_CORE",
                                "%.3f" % rnd.uniform(1, 100)] + [r.get(c, "") for c in cols])
