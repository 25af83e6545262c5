#!/usr/bin/env bash
# --output-csv: every row of the one op in one file (its directory created),
# appended with a single header, no report directory (spec §1 output priority).
. "$(dirname "$0")/lib.sh"
for i in 1 2; do
  mpirun -np 2 "$PERFDB" comm --ops reduce_scatter --num-devices 2 --bytes-grid 2048 8192 \
    --output-csv out/rs.csv --database-path ignored --iters 5 --warmup 1 --repeats 0 --quiet \
    > run$i.txt 2> err.txt || fail "run $i: $(cat err.txt)"
done
grep -q '^Completed 2 benchmarks. Results saved to out/rs.csv$' run2.txt || fail "$(tail -1 run2.txt)"
tables table out/rs.csv 4 num_devices=2 topology_tier=2
[ ! -e ignored ] && [ ! -e out/reports ] || fail "--output-csv must win over --database-path"
echo ok
