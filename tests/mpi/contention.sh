#!/usr/bin/env bash
# Another process burning a CPU during a case: the case is flagged
# contended and measured again `--repeats` times (docs/comm.md).  One rank
# copying 64 MiB (all_to_all on a group of 1) keeps each case long enough
# for /proc/stat's clock ticks.
. "$(dirname "$0")/lib.sh"
bash -c 'while :; do :; done' &
burner=$!
trap 'kill $burner 2>/dev/null || true; rm -rf "$WORK"' EXIT
sleep 0.2
"$PERFDB" comm --ops all_to_all --num-devices 1 --bytes-grid 67108864 --iters 20 --warmup 2 \
  --repeats 2 --json > run.json 2> err.txt || fail "run: $(cat err.txt)"
kill $burner
tables report run.json cases=1 contended=true attempts=3
python3 -c 'import json,sys; c=json.load(open("run.json"))["cases"][0]; sys.exit(not c["other_cpu"] >= 0.25)' ||
  fail "other_cpu below the threshold"
echo ok
