#!/usr/bin/env bash
# mpirun -np 4 --oversubscribe: groups of 4, 3 and 2 carved from one world
# with MPI_Comm_split, a group of 8 skipped with a warning (Decision 1),
# tiers of [0..n-1] on 48 8 2 (spec §2), fp16 sums checked.
. "$(dirname "$0")/lib.sh"
mpirun -np 4 --oversubscribe "$PERFDB" comm --num-devices 8 4 3 2 --bytes-grid 1024 4096 \
  --dtype torch.float16 --database-path db --iters 10 --warmup 2 --repeats 0 --json \
  > run.json 2> err.txt || fail "run: $(cat err.txt)"
grep -q 'warning: skipping num_devices=8: the group is larger than the world (4 ranks)' err.txt ||
  fail "no skip warning: $(cat err.txt)"
tables report run.json cases=24 dtype=DT_FP16
for t in hcom_allReduce_ hcom_allGather_ hcom_reduceScatter_ hcom_alltoallv_; do
  tables table "db/$t.csv" 6 dtype=DT_FP16
done
# n=4 -> tier 1, n=3 ([0,0,0] [0,0,1] [0,1,0]) -> tier 1, n=2 -> tier 2
awk -F, 'NR > 1 { printf "%s:%s ", $2, $4 } END { print "" }' db/hcom_allReduce_.csv > tiers.txt
[ "$(cat tiers.txt)" = "4:1 4:1 3:1 3:1 2:2 2:2 " ] || fail "tiers: $(cat tiers.txt)"
echo ok
