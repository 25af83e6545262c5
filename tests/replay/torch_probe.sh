#!/usr/bin/env bash
# The torch backend's memory-bandwidth probe (docs/replay.md "The torch
# backend"), its readings scripted (PERFDB_TEST_PROBE_GBS, the last
# repeating) and the load judge off (PERFDB_SCHED=0), so that the probe
# alone decides; the replay is the real one, through /usr/bin/python3's
# PyTorch.  Worked by hand:
#  1. rows alone, readings 40,40,40,40 then 20, no quiet figure: each row
#     reads before and after (the lower kept), so rows 1 and 2 keep 40 and
#     every later row 20, below 80 % of the median 40 of the readings kept:
#     each is measured again twice (--contention-retries 2), still low, and
#     left contended, unwritten; with --contention-retries 0, once; the
#     run's median reading (20: 4 readings of 40, 18 of 20; 6 of 20 without
#     retries) is recorded all the same;
#  2. in the sequence, readings 40,40,20 then 40: a pass keeps the lower of
#     its edges, so pass 1 keeps 40, passes 2 and 3 keep 20 (dropped, low),
#     the later ones 40: the rows are written from the clean passes, and
#     the run's median reading, 40, is recorded;
#  3. readings 40,40 then 20: every pass after the first is low, the rows
#     timed in the sequence are contended and left unwritten;
#  4. a quiet reading of 50 recorded: readings of 38 are low against it (a
#     slow state that outlasts the run, which the run's own median would
#     not see), every row contended, 38 recorded; the figure is the highest
#     reading kept, still 50, and readings of 45 are not low against it:
#     every row written, 45 recorded;
#  5. PERFDB_PROBE=0: no probe in the request, and the env record says so;
#  7. the end of the run's pass, no quiet figure: readings 20,20 then 40:
#     the first row keeps 20 (nothing to hold it to), the others 40 (against
#     the medians 20, then 30, then 40); at the end the median of the kept
#     readings is 40 and the first row, 20 < 32 and never retried, is
#     measured again held to it: 40, written, "[MEASURED AGAIN] 1 row ...
#     1 now written", rows_measured_again=1, _written=1;
#  8. the same with the row's readings low again at the end: 20,20, then 40
#     for the other rows' readings, then 20: measured again (retry 1), low,
#     once more (retry 2), low: contended, "against the run's median 40.0
#     after 2 retries", its cell left empty, rows_measured_again_written=0;
#  9. the sequence's passes, the same way: readings 20,20,20 then 40, at
#     --repeat-count 10 (10 passes): the start reads 20, passes 1 and 2 keep
#     20 (nothing to hold them to, then the median 20), pass 3 the lower
#     of 20 and 40, the other 7 keep 40; at the end the median of the kept
#     readings is 40 and the first 3 passes, 20 < 32, are dropped with
#     their samples: 10 passes, 3 dropped for the bandwidth, the rows
#     written from the other 7;
#  6. --threads as many as the CPUs, readings not scripted: the probe runs
#     (it waits for the run's own workers to rest, and refuses a reading
#     taken beside them), and the env record counts the readings taken and
#     refused: some taken, fewer refused than taken.
# Exit 77 (skipped) without PyTorch for /usr/bin/python3.
# usage: torch_probe.sh PERFDB
set -u
PERFDB=$1
HERE=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "no PyTorch for /usr/bin/python3: skipped"; exit 77; }
NCPU=$(getconf _NPROCESSORS_ONLN)
W=$(mktemp -d "${TMPDIR:-/tmp}/perfdb-torch-probe.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W"
export PERFDB_TIMESTAMP=t PERFDB_SCHED=0 PERFDB_PROBE=1 PERFDB_TORCH_PYTHON="$W/py"
cat >py <<'SH'
#!/bin/sh
[ "$1" = "-c" ] || cp "$2" "$(dirname "$0")/request.json"
exec /usr/bin/python3 "$@"
SH
chmod +x py
TRACE=$HERE/../cli/microbench/torch_sequence/t.pt.trace.json
"$PERFDB" parse --profiling-path "$TRACE" --database-path db >/dev/null 2>&1 || { echo "FAIL: parse"; exit 1; }
run() {   # run NAME READINGS [flags...]: a fresh copy of db, microbench, its request kept
	local name=$1 readings=$2
	shift 2
	rm -rf "$name" && cp -r db "$name"
	PERFDB_STATE_DIR=${STATE:-$W/state-$name} PERFDB_TEST_PROBE_GBS=$readings "$PERFDB" microbench \
		--backend torch --database-path "$name" --threads 1 --repeat-count 3 --row-budget 0.01 "$@" \
		>"$name.out" 2>"$name.err" || { echo "FAIL: $name: microbench exited $?"; cat "$name.err"; exit 1; }
	cp request.json "$name.request.json"
}
run alone 40,40,40,40,20
run alone0 40,40,40,40,20 --contention-retries 0
run seq 40,40,20,40 --sequence-trace "$TRACE"
run seqlow 40,40,20 --sequence-trace "$TRACE"
mkdir -p "$W/state-q"
echo '{"host": "h", "torch_gbs": [50]}' >"$W/state-q/quiet-$(hostname | tr / _).json"
STATE=$W/state-q run slow 38
cp "$W/state-q/quiet-$(hostname | tr / _).json" slow.state.json
STATE=$W/state-q run fast 45
cp "$W/state-q/quiet-$(hostname | tr / _).json" fast.state.json
run late 20,20,40
N=$(/usr/bin/python3 -c 'import json; print(sum(1 for r in json.load(open("alone.request.json"))["rows"] if not r.get("untimed")))')
run latelow "20,20,$(/usr/bin/python3 -c "print(','.join(['40'] * (2 * ($N - 1))))"),20"
run seqlate 20,20,20,40 --sequence-trace "$TRACE" --repeat-count 10 --row-budget 1
rm -rf off && cp -r db off
PERFDB_STATE_DIR=$W/state-off PERFDB_PROBE=0 "$PERFDB" microbench --backend torch --database-path off \
	--threads 1 --repeat-count 3 --row-budget 0.01 >off.out 2>off.err || { echo "FAIL: off: microbench exited $?"; exit 1; }
cp request.json off.request.json
rm -rf all && cp -r db all
PERFDB_STATE_DIR=$W/state-all "$PERFDB" microbench --backend torch --database-path all --threads "$NCPU" \
	--repeat-count 3 --row-budget 0.01 >all.out 2>all.err || { echo "FAIL: all: microbench exited $?"; exit 1; }
cp request.json all.request.json
/usr/bin/python3 - <<'PY'
import csv, json, re, socket
bad = []
def env(name):
    return dict(l.rstrip("\n").split("=", 1) for l in open(name + "/reports/microbench_env_t.txt"))
def avg(name, table, line):
    rows = list(csv.DictReader(open("%s/%s.csv" % (name, table), newline="")))
    return rows[line - 2].get("Average Duration(us)") or ""
def timed(name):
    return [(r["table"], r["line"]) for r in json.load(open(name + ".request.json"))["rows"] if not r.get("untimed")]

def contended(name):
    return [l for l in open(name + ".err") if l.startswith("[CONTENDED]") and ".csv:" in l]
def state(name):
    try:
        return json.load(open("state-%s/quiet-%s.json" % (name, socket.gethostname().replace("/", "_")))).get("torch_gbs")
    except OSError:
        return None

# 1. rows alone
req = json.load(open("alone.request.json"))
if req.get("probe") != {"tolerance": 0.2, "retries": 2, "quiet_gbs": 0.0}:
    bad.append("the request's probe: %r" % req.get("probe"))
t = timed("alone")
if len(t) < 4:
    bad.append("only %d rows timed" % len(t))
for name, retries in (("alone", 2), ("alone0", 0)):
    want = ["[CONTENDED] %s.csv:%d: not written: %s: measured with 20.0 GB/s of memory bandwidth against "
            "the run's median 40.0 after %d retries\n" % (tb, ln, tb, retries) for tb, ln in t[2:]]
    if contended(name) != want:
        bad.append("%s: CONTENDED lines %r, expected %r" % (name, contended(name), want))
    for tb, ln in t:
        if bool(avg(name, tb, ln)) != ((tb, ln) in t[:2]):
            bad.append("%s: %s:%d written %r" % (name, tb, ln, avg(name, tb, ln)))
    e = env(name)
    if e.get("rows_low_bandwidth") != str(len(t) - 2) or e.get("probe_median_gbs") != "20.0" \
            or e.get("contention_retries") != str(retries) or e.get("probe_quiet_gbs") != "0.0":
        bad.append("%s: env %r" % (name, {k: v for k, v in e.items() if "probe" in k or "low" in k or "retr" in k}))
    if state(name) != [20.0]:
        bad.append("%s: recorded %r" % (name, state(name)))

# 2. two low passes dropped, the rows written, 40 recorded
e = env("seq")
if (e.get("sequence_passes_low_bandwidth"), e.get("sequence_passes_dropped")) != ("2", "2") \
        or int(e.get("rows_in_sequence", "0")) < 3 or e.get("rows_contended") != "0":
    bad.append("seq: env %r" % {k: v for k, v in e.items() if k.startswith("sequence") or k.startswith("rows")})
if state("seq") != [40.0]:
    bad.append("seq: recorded %r" % state("seq"))

# 3. every pass after the first low: the sequence's rows contended, unwritten
e = env("seqlow")
n = int(e.get("rows_in_sequence", "-1"))
cont = [l for l in contended("seqlow") if re.search(r"and [1-9][0-9]* read the memory bandwidth low$", l.strip())]
if n != 0 or len(cont) < 3:
    bad.append("seqlow: rows_in_sequence %d, contended lines %r" % (n, cont))
for l in contended("seqlow"):
    m = re.match(r"\[CONTENDED\] (\S+)\.csv:(\d+):", l)
    if not m or avg("seqlow", m.group(1), int(m.group(2))):
        bad.append("seqlow: %s written" % l.strip())

# 4. the quiet figure
if json.load(open("slow.request.json"))["probe"].get("quiet_gbs") != 50.0:
    bad.append("slow: the request's quiet figure %r" % json.load(open("slow.request.json"))["probe"])
want = ["[CONTENDED] %s.csv:%d: not written: %s: measured with 38.0 GB/s of memory bandwidth against "
        "this machine's quiet 50.0 after 2 retries\n" % (tb, ln, tb) for tb, ln in t]
if contended("slow") != want or env("slow").get("probe_quiet_gbs") != "50.0":
    bad.append("slow: %r, env quiet %r" % (contended("slow"), env("slow").get("probe_quiet_gbs")))
if json.load(open("slow.state.json")).get("torch_gbs") != [50.0, 38.0]:
    bad.append("slow: state %r" % json.load(open("slow.state.json")))
if contended("fast") or not all(avg("fast", tb, ln) for tb, ln in t) \
        or json.load(open("fast.state.json")).get("torch_gbs") != [50.0, 38.0, 45.0] \
        or env("fast").get("probe_quiet_gbs") != "50.0":
    bad.append("fast: %r, state %r" % (contended("fast"), json.load(open("fast.state.json"))))

# 5. off
if "probe" in json.load(open("off.request.json")) or env("off").get("probe") != "off (PERFDB_PROBE=0)":
    bad.append("off: probe in the request or env %r" % env("off").get("probe"))
# 7. the first row measured again at the end and written
e = env("late")
again = [l for l in open("late.err") if l.startswith("[MEASURED AGAIN]")]
if (e.get("rows_measured_again"), e.get("rows_measured_again_written"), e.get("rows_contended")) != ("1", "1", "0") \
        or again != ["[MEASURED AGAIN] 1 row measured before the run had a median to hold it to read low "
                     "against it: measured again at the end, 1 now written\n"] \
        or contended("late") or not all(avg("late", tb, ln) for tb, ln in t):
    bad.append("late: env %r, %r, contended %r" % ({k: v for k, v in e.items() if "again" in k or "contended" in k},
                                                   again, contended("late")))
# 8. still low when measured again: contended, unwritten
e = env("latelow")
want = ["[CONTENDED] %s.csv:%d: not written: %s: measured with 20.0 GB/s of memory bandwidth against "
        "the run's median 40.0 after 2 retries\n" % (t[0][0], t[0][1], t[0][0])]
if (e.get("rows_measured_again"), e.get("rows_measured_again_written"), e.get("rows_contended")) != ("1", "0", "1") \
        or contended("latelow") != want or avg("latelow", *t[0]) \
        or not all(avg("latelow", tb, ln) for tb, ln in t[1:]):
    bad.append("latelow: env %r, contended %r" % ({k: v for k, v in e.items() if "again" in k or "contended" in k},
                                                  contended("latelow")))
# 7 and 8: the status file counts every timed row, and the pass, as the env record does
def rows(name):
    return json.load(open(name + "/reports/run_all_op_status_t.json")).get("rows")
for name, want in (("late", [len(t), 0, 0, 1, 1]), ("latelow", [len(t) - 1, 1, 0, 1, 0])):
    want = dict(zip(["measured", "contended", "failed", "measured_again", "measured_again_written"], want),
                skipped=0)
    if rows(name) != want:
        bad.append("%s: the status's rows %r, not %r" % (name, rows(name), want))
# 9. the sequence's first passes dropped at its end
e = env("seqlate")
said = [l for l in open("seqlate.err") if "read low against it: dropped" in l]
if (e.get("sequence_passes"), e.get("sequence_passes_dropped"), e.get("sequence_passes_low_bandwidth"),
        e.get("rows_contended")) != ("10", "3", "3", "0") or int(e.get("rows_in_sequence", "0")) < 3 \
        or len(said) != 1 or "3 passes kept before the run had a median" not in said[0]:
    bad.append("seqlate: env %r, %r" % ({k: v for k, v in e.items() if k.startswith("sequence") or k.startswith("rows")}, said))
# 6. every CPU, real readings
e = env("all")
taken, none = int(e.get("probe_readings", "0")), int(e.get("probe_readings_none", "-1"))
if "probe" not in json.load(open("all.request.json")) or not e.get("probe", "").startswith("memory bandwidth") \
        or not 0 <= none < taken:
    bad.append("all: probe %r, readings %d taken, %d refused" % (e.get("probe"), taken, none))
for b in bad:
    print("FAIL:", b)
print("ok" if not bad else "FAIL")
raise SystemExit(1 if bad else 0)
PY
