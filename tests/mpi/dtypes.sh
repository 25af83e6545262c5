#!/usr/bin/env bash
# Every dtype on 3 ranks (an odd group: uneven all_to_all blocks), results
# checked element by element: bf16/fp16 sums through user-defined MPI_Ops,
# fp32 and int8 through MPI_SUM (spec §1 dtypes).
. "$(dirname "$0")/lib.sh"
for dt in torch.bfloat16:DT_BF16 torch.float16:DT_FP16 torch.float32:DT_FLOAT torch.int8:DT_INT8; do
  mpirun -np 3 --oversubscribe "$PERFDB" comm --num-devices 3 --dtype "${dt%%:*}" \
    --bytes-grid 1001 4096 65536 --iters 5 --warmup 1 --repeats 0 --json \
    > "${dt%%:*}.json" 2> err.txt || fail "${dt%%:*}: $(cat err.txt)"
  tables report "${dt%%:*}.json" cases=12 dtype="${dt##*:}" topology_tier=1
done
echo ok
