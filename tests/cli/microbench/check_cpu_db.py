#!/usr/bin/env python3
"""Checks a database after `perfdb microbench --backend cpu` (tests/cli/microbench/cpu_*).

Usage: check_cpu_db.py DB TABLE...  For each table: every row has a positive
Average Duration(us), MicroBench Samples >= 1 and min <= median, min <= mean;
the report's Update Summary row of the table counts every row as updated or
unchanged, and the Overview's "Rows updated" is the sum.  Prints one line per
table and 'report matches'.
"""
import csv, glob, sys

db, tables = sys.argv[1], sys.argv[2:]
md = open(glob.glob(db + "/reports/profile_update_report_*.md")[0], encoding="utf-8").read()
summary = {}
for line in md.split("\n## Update Summary\n")[1].split("\n\n")[0].splitlines()[2:]:
    cells = [c.strip() for c in line.strip("|").split("|")]
    summary[cells[0]] = cells
total_updated = 0
for t in tables:
    with open(f"{db}/{t}.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    bad = 0
    for r in rows:
        mean = float(r["Average Duration(us)"] or 0)
        mn = float(r["MicroBench Min Duration(us)"] or 0)
        med = float(r["MicroBench Median Duration(us)"] or 0)
        n = int(r["MicroBench Samples"] or 0)
        if not (mean > 0 and n >= 1 and 0 < mn <= med and mn <= mean):
            bad += 1
    s = summary.get(t)
    counted = int(s[1]) + int(s[4]) if s else -1
    total_updated += int(s[1]) if s else 0
    print(f"{t}: {'all rows positive' if not bad else f'{bad} bad rows'}, "
          f"report {'matches' if counted == len(rows) else f'counts {counted} of {len(rows)}'}")
ov = [l for l in md.splitlines() if l.startswith("| Rows updated")][0]
print("report matches" if int(ov.split("|")[2]) == total_updated else "overview differs")
