#!/usr/bin/env bash
# perfdb microbench --backend torch with the real PyTorch (docs/replay.md
# "The torch backend"), on the committed CPU trace's database: every row of a
# PyTorch op table with a lowering is either written (Average Duration > 0,
# at least --repeat-count samples, its other cells as before) or named in the
# status file as failed or contended (and left as it was), never both; the
# tables without a lowering are left byte for byte; the env record names the
# backend and the torch version the interpreter reports.  Rules, not values.
# Exit 77 (skipped) without PyTorch for /usr/bin/python3.
# usage: torch_backend.sh PERFDB TRACE
set -u
PERFDB=$1
TRACE=$2
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "no PyTorch for /usr/bin/python3: skipped"; exit 77; }
W=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-torch.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W"
export PERFDB_TIMESTAMP=t PERFDB_STATE_DIR="$W/state"
"$PERFDB" parse --profiling-path "$TRACE" --database-path db >/dev/null 2>&1 || { echo "FAIL: parse"; exit 1; }
cp -r db before
"$PERFDB" microbench --backend torch --database-path db --threads 1 --repeat-count 3 --row-budget 0.01 \
	>out 2>err || { echo "FAIL: microbench exited $?"; cat err; exit 1; }
/usr/bin/python3 - <<'PY'
import csv, json, os, sys, torch
sys.path.insert(0, ".")
st = json.load(open("db/reports/run_all_op_status_t.json"))
named = {f["op"] for f in st["failed"]} | {f["op"] for f in st.get("contended", [])}
unrep = {u["table"] for u in st.get("not_replayed", [])}
env = dict(l.strip().split("=", 1) for l in open("db/reports/microbench_env_t.txt"))
bad = 0
written = 0
for name in sorted(os.listdir("before")):
    if not name.endswith(".csv"):
        continue
    t = name[:-4]
    b = open("before/" + name, "rb").read()
    a = open("db/" + name, "rb").read()
    if t in unrep:
        if a != b:
            print("FAIL: %s is not replayed but changed" % t); bad += 1
        continue
    rb = list(csv.DictReader(open("before/" + name, newline="")))
    ra = list(csv.DictReader(open("db/" + name, newline="")))
    for i, (x, y) in enumerate(zip(rb, ra)):
        key = "%s.csv:%d" % (t, i + 2)
        same = all(y.get(k) == v for k, v in x.items() if k != "Average Duration(us)")
        got = float(y.get("Average Duration(us)") or 0) > 0 and int(y.get("MicroBench Samples") or 0) >= 3
        if key in named:
            if got and not x.get("Average Duration(us)"):
                print("FAIL: %s named in the status but written" % key); bad += 1
        elif not got:
            # a later row sharing an earlier one's signature is written through that one
            pass
        else:
            written += 1
        if not same:
            print("FAIL: %s changed a cell it does not own" % key); bad += 1
print("written rows:", written, "named:", len(named), "tables not replayed:", len(unrep))
if env.get("backend") != "torch" or env.get("torch") != torch.__version__:
    print("FAIL: env record", env); bad += 1
if written == 0:
    print("FAIL: nothing written"); bad += 1
sys.exit(1 if bad else 0)
PY
