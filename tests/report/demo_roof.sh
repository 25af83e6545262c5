#!/usr/bin/env bash
# Issue 23: no demo point lies above its roof.  Runs the demo (examples/demo.sh:
# the example database, the parsed example profile, grid rows replayed on the
# CPU, two-rank MPI collectives) into a scratch directory, then reads the
# report's --json summary: every plotted roofline point must be at or under
# the roof of the device that measured it, and enough points must be plotted
# for that to mean something.  The demo's durations are set from the A3 die's
# roof by hand (examples/README.md) and by bench/gen_profile.c, which derives
# each op's FLOPs and bytes from its shapes independently of perfdb's costs.
#   demo_roof.sh PERFDB SCRATCH_DIR MIN_POINTS
set -u
PERFDB=$1 SCRATCH=$2 MIN=$3
HERE=$(cd "$(dirname "$0")" && pwd)
command -v mpirun >/dev/null || { echo "mpirun not installed: skipped"; exit 77; }
DEMO_DIR=$SCRATCH DEMO_REPEAT_COUNT=2 DEMO_CLOSURE=0 NO_COLOR=1 bash "$HERE/../../examples/demo.sh" "$PERFDB" >"$SCRATCH.log" 2>&1 || {
  tail -n 30 "$SCRATCH.log"; echo "demo failed (log: $SCRATCH.log)"; exit 1; }
cd "$SCRATCH" || exit 1
"$PERFDB" report --database-root database --vllm-version 0.13.0 --torch-version 2.8.0 \
  --cann-version 8.3 --json >report.json || { echo "report --json failed"; exit 1; }
python3 - report.json "$MIN" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
k = json.load(open(sys.argv[1]))["kernels"]
bad = [x["kernel"] + ": " + str(x["above_roof"]) for x in k if x["above_roof"]]
print(f"demo: {s['roof']} roofline points, {s['above']} above the roof;"
      f" {s['no_cost']} without a cost, {s['no_device']} without a known roof")
if s["above"] != 0 or bad:
    sys.exit("points above the roof: " + ", ".join(bad))
if s["roof"] < int(sys.argv[2]):
    sys.exit(f"only {s['roof']} points plotted, expected at least {sys.argv[2]}")
if sum(x["roofline_points"] for x in k) != s["roof"]:
    sys.exit("per-kernel roofline points do not add up to the summary")
PY
