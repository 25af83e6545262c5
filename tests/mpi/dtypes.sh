#!/usr/bin/env bash
# Every dtype on 3 ranks (an odd group: uneven all_to_all blocks), results
# checked element by element: bf16/fp16 sums through user-defined MPI_Ops,
# fp32 and int8 through MPI_SUM (spec §1 dtypes).  Then bf16 and fp16 again
# with PERFDB_MAX_CPU_ISA holding the reductions down to each lower level
# (docs/comm.md "16-bit reductions"), at an odd element count so Open MPI's
# segments end in the kernels' tails.
. "$(dirname "$0")/lib.sh"
for dt in torch.bfloat16:DT_BF16 torch.float16:DT_FP16 torch.float32:DT_FLOAT torch.int8:DT_INT8; do
  mpirun -np 3 --oversubscribe "$PERFDB" comm --num-devices 3 --dtype "${dt%%:*}" \
    --bytes-grid 1001 4096 65536 --iters 5 --warmup 1 --repeats 0 --json \
    > "${dt%%:*}.json" 2> err.txt || fail "${dt%%:*}: $(cat err.txt)"
  tables report "${dt%%:*}.json" cases=12 dtype="${dt##*:}" topology_tier=1
done
for isa in sse2 avx2 avx512; do
  for dt in torch.bfloat16:DT_BF16 torch.float16:DT_FP16; do
    PERFDB_MAX_CPU_ISA=$isa mpirun -np 3 --oversubscribe "$PERFDB" comm --num-devices 3 \
      --dtype "${dt%%:*}" --ops all_reduce reduce_scatter --bytes-grid 1998 65538 \
      --iters 2 --warmup 0 --repeats 0 --json > "$isa.json" 2> err.txt \
      || fail "$isa ${dt%%:*}: $(cat err.txt)"
    tables report "$isa.json" cases=4 dtype="${dt##*:}" topology_tier=1
  done
done
echo ok
