#!/usr/bin/env bash
# The run record names the shared-memory single-copy mechanism in effect
# (docs/comm.md "Shared-memory copies"), read back from Open MPI through
# MPI_T after the last size, so its line follows the table: forced to none
# it says none; left to Open MPI it is one of the transport's mechanisms
# (which one depends on the machine: CMA needs ptrace rights); an MPI
# without the variable says unknown.
. "$(dirname "$0")/lib.sh"
one() {  # LABEL: a 2-rank run, its report in LABEL.json and its table in LABEL.txt
  mpirun -np 2 "$PERFDB" comm --ops all_gather --num-devices 2 --bytes-grid 4096 --iters 3 --warmup 1 \
    --repeats 0 --json > "$1.json" 2> "$1.err" || fail "$1 run: $(cat "$1.err")"
  mpirun -np 2 "$PERFDB" comm --ops all_gather --num-devices 2 --bytes-grid 4096 --iters 3 --warmup 1 \
    --repeats 0 > "$1.txt" 2> "$1.err" || fail "$1 table run: $(cat "$1.err")"
}
one forced
unset OMPI_MCA_btl_vader_single_copy_mechanism
one default
python3 - forced.json default.json forced.txt <<'PY' || fail "shared-memory single copy not recorded as documented"
import json, re, sys
forced, default = (json.load(open(p))["context"] for p in sys.argv[1:3])
lib = forced["mpi_library"]
v4 = re.match(r"Open MPI v4\.", lib) is not None
for ctx, want in ((forced, "none"), (default, None)):
    got = ctx["shm_single_copy"]
    if not v4:
        # another MPI (or Open MPI 5, whose sm transport has no such variable) may not have it
        assert got.startswith("unknown (") or got.endswith("_single_copy_mechanism)"), got
        continue
    m = re.fullmatch(r"(\w+) \(btl_vader_single_copy_mechanism\)", got)
    assert m, got
    assert m.group(1) in ("xpmem", "cma", "knem", "none", "emulated"), got
    if want:
        assert m.group(1) == want, (got, want)
table = open(sys.argv[3]).read().splitlines()
line = [i for i, l in enumerate(table) if l.startswith("# shared-memory single copy: ")]
assert len(line) == 1 and table[line[0]].endswith(forced["shm_single_copy"]), line
# read after the last size: below the table's rows, right above "Completed"
rows = [i for i, l in enumerate(table) if l.strip() and not l.startswith("#")
        and not l.startswith("Completed ")]
assert rows and line[0] > rows[-1], (line, rows)
assert table[line[0] + 1].startswith("Completed "), table[line[0] + 1:]
print("shm_single_copy:", forced["shm_single_copy"], "/", default["shm_single_copy"], "in", lib)
PY
echo ok
