#!/usr/bin/env bash
# Children die with the parent (docs/reliability.md guarantee 11): with
# --execution-mode subprocess the operator runs in a child; kill -9 of
# perfdb must take the child with it (PR_SET_PDEATHSIG), not leave it
# measuring, unwatched, into the journal.
#   usage: orphan.sh PERFDB GEN_PROFILE
. "$(dirname "$0")/lib.sh"
P=$PERFDB
cp -a "$HERE/../cli/microbench/cpu_subprocess_crash/input/db" "$WORK/db"
for round in 1 2 3; do
  PERFDB_PROBE=0 "$P" microbench --backend cpu --force-device --database-path "$WORK/db" --ops RmsNorm \
    --repeat-count 100000 --row-budget 30 --row-timeout 60 --execution-mode subprocess \
    >/dev/null 2>&1 &
  parent=$!
  child=
  for _ in $(seq 1 200); do   # up to 10 s for the child to start
    child=$(pgrep -P $parent | head -1)
    [ -n "$child" ] && break
    sleep 0.05
  done
  [ -n "$child" ] || { fail "round $round: no operator child appeared"; kill -9 $parent; continue; }
  kill -9 $parent; wait $parent 2>/dev/null
  gone=0
  for _ in $(seq 1 40); do   # 2 s
    kill -0 "$child" 2>/dev/null || { gone=1; break; }
    sleep 0.05
  done
  [ $gone -eq 1 ] || { fail "round $round: operator child $child outlived its parent"; kill -9 "$child"; }
  lines=$(cat "$WORK"/db/reports/microbench_journal*.jsonl 2>/dev/null | wc -l)
  sleep 0.5
  after=$(cat "$WORK"/db/reports/microbench_journal*.jsonl 2>/dev/null | wc -l)
  [ "$lines" = "$after" ] || fail "round $round: the journal grew after the parent died"
done
echo "kill -9 of perfdb during a subprocess measurement: the child went with it (3 rounds)"
finish
