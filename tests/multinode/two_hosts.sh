#!/usr/bin/env bash
# Two hosts on one machine (docs/comm.md "Two or more hosts"): two network
# namespaces joined by a private veth link, each with its own address and
# its own hostname (a UTS namespace), stand in for two nodes; mpirun runs
# in the first, and a launcher agent that enters the second stands in for
# ssh.  Open MPI carries everything over TCP on the link: the BTL and the
# launcher's own connections (orted back to mpirun) are restricted to its
# subnet, and a namespace has no other interface but its loopback.
#  1. perfdb comm: a group of 2 spans both hosts and lands on the
#     inter-node tier, the run record says 2 hosts, the link carried it;
#  2. perfdb microbench: rows shared between the hosts, each row once;
#  3. the rank on the second host dies after its first row: the run fails,
#     the tables are untouched, and --resume takes the journaled rows.
# Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN), ip and unshare; without them
# it exits 77, which CTest reports as skipped, with the reason.
#   usage: two_hosts.sh PERFDB
source "$(dirname "$0")/../mpi/lib.sh"
SKIP=77
skip() { echo "SKIP: $*"; exit $SKIP; }
for tool in ip unshare timeout mpirun python3; do
  command -v $tool >/dev/null || skip "no '$tool' on this machine"
done
[ "$(id -u)" = 0 ] || skip "network namespaces need root (CAP_NET_ADMIN); running as uid $(id -u)"

# names unique to this run; the subnet exists only inside the two namespaces
tag=pdb$$
NS_A=${tag}a NS_B=${tag}b VETH_A=${tag}va VETH_B=${tag}vb
NET=10.231.7 ADDR_A=10.231.7.1 ADDR_B=10.231.7.2 HOST_A=${tag}-node-a HOST_B=${tag}-node-b
cleanup() {
  for ns in "$NS_A" "$NS_B"; do
    if ip netns list 2>/dev/null | grep -qw "$ns"; then
      for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
      ip netns del "$ns" 2>/dev/null || true   # takes its end of the veth with it
    fi
  done
  ip link del "$VETH_A" 2>/dev/null || true    # if it never left this namespace
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add "$NS_A" 2>err.txt || skip "cannot create a network namespace: $(head -1 err.txt)"
ip netns add "$NS_B" 2>err.txt || skip "cannot create a network namespace: $(head -1 err.txt)"
ip link add "$VETH_A" type veth peer name "$VETH_B" 2>err.txt || skip "cannot create a veth pair: $(head -1 err.txt)"
ip link set "$VETH_A" netns "$NS_A"
ip link set "$VETH_B" netns "$NS_B"
ip -n "$NS_A" addr add "$ADDR_A/24" dev "$VETH_A"
ip -n "$NS_B" addr add "$ADDR_B/24" dev "$VETH_B"
for ns in "$NS_A" "$NS_B"; do ip -n "$ns" link set lo up; done
ip -n "$NS_A" link set "$VETH_A" up
ip -n "$NS_B" link set "$VETH_B" up
ip netns exec "$NS_A" unshare --uts true 2>err.txt || skip "cannot create a UTS namespace: $(head -1 err.txt)"

# the ssh of this cluster: "agent HOST COMMAND..." runs COMMAND (a shell
# line from mpirun) on HOST's namespace, under HOST's hostname
cat > agent.sh <<EOF
#!/bin/sh
host=\$1; shift
case \$host in
  $ADDR_A) ns=$NS_A name=$HOST_A ;;
  $ADDR_B) ns=$NS_B name=$HOST_B ;;
  *) echo "agent: unknown host '\$host'" >&2; exit 255 ;;
esac
exec ip netns exec "\$ns" unshare --uts sh -c 'hostname "\$0" && exec sh -c "\$1"' "\$name" "\$*"
EOF
# each rank records where it runs; DIE_RANK's rank dies after its first row
cat > rank.sh <<EOF
#!/bin/sh
echo "\$(hostname) \$OMPI_COMM_WORLD_RANK" >> "$WORK/ranks.txt"
if [ "\${DIE_RANK:-}" = "\$OMPI_COMM_WORLD_RANK" ]; then
  PERFDB_TEST_EXIT_AFTER_ROWS=1; export PERFDB_TEST_EXIT_AFTER_ROWS
fi
exec "\$@"
EOF
chmod +x agent.sh rank.sh
printf '%s slots=1\n%s slots=1\n' "$ADDR_A" "$ADDR_B" > hostfile
# no shared memory between the "hosts": TCP on the link, for MPI and for the launcher
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=$NET.0/24 OMPI_MCA_oob_tcp_if_include=$NET.0/24
export OMPI_MCA_plm_rsh_agent=$WORK/agent.sh
unset OMPI_MCA_btl_vader_single_copy_mechanism
export DIE_RANK= PERFDB_TIMESTAMP=t
two_hosts() {  # COMMAND...: under mpirun -np 2 from host A, one rank per host (at most 120 s)
  : > ranks.txt
  timeout -k 5 120 ip netns exec "$NS_A" unshare --uts sh -c 'hostname "$0" && exec "$@"' \
    "$HOST_A" mpirun --hostfile hostfile -np 2 -x DIE_RANK -x PERFDB_TIMESTAMP -x PERFDB_DATA_ROOT \
    "$WORK/rank.sh" "$@"
}
tx() { ip -n "$NS_A" -s -j link show "$VETH_A" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["bytes"])'; }
ranks_on_hosts() {  # rank 0 ran on host A and rank 1 on host B
  sort ranks.txt | tr '\n' ' ' | grep -qx "$HOST_A 0 $HOST_B 1 " || fail "ranks ran on: $(cat ranks.txt)"
}

echo "== perfdb comm across the two hosts: grid 2 x 1, groups of 1 and 2"
before=$(tx)
two_hosts "$PERFDB" comm --ops all_reduce all_gather --num-devices 1 2 --grid-shape 2 1 \
  --bytes-grid 1024 262144 --iters 5 --min-iters 2 --warmup 1 --repeats 0 --time-budget 0.5 \
  --database-path db --json -q > rep.json 2> err.txt || fail "comm: $(cat err.txt)"
ranks_on_hosts
after=$(tx)
python3 - "$HOST_A" "$HOST_B" "$before" "$after" <<'PY' || fail "comm across two hosts"
import glob, json, sys
a, b, before, after = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
r = json.load(open("rep.json"))
x = r["context"]
assert x["hosts"] == 2 and x["ranks_per_host"] == f"{a}:1 {b}:1", x
assert x["world_size"] == 2, x
for c in r["cases"]:
    assert c["check"] == "ok", c
    # grid [2, 1]: rank 0 = [0, 0], rank 1 = [1, 0]; the pair differs in the
    # outer (node) dimension: tier 0; a rank alone sits on the inner tier 1
    assert c["topology_tier"] == (0 if c["num_devices"] == 2 else 1), c
assert len(r["cases"]) == 8, len(r["cases"])
# the same report on disk, the run record of the database
rec = json.load(open(glob.glob("db/reports/comm_*.json")[0]))
assert rec["context"]["hosts"] == 2 and rec["backend"] == "mpi", rec["context"]
# the pair's all_gather of 256 KiB moved at least that much over the link
assert after - before >= 262144, (before, after)
PY
tables table db/hcom_allReduce_.csv 4
tables table db/hcom_allGather_.csv 4

DB="$HERE/../cli/microbench/cpu_resume/input/db"
mb=(microbench --backend cpu --force-device --repeat-count 3 --row-budget 0.02)

echo "== perfdb microbench: rows shared between the two hosts"
cp -r "$DB" mdb
two_hosts "$PERFDB" "${mb[@]}" --database-path mdb > out.txt 2> err.txt || fail "microbench: $(cat err.txt)"
ranks_on_hosts
grep -qx "mpi_ranks=2" mdb/reports/microbench_env_t.txt || fail "mpi_ranks not recorded"
python3 - "$DB" <<'PY' || fail "sharded results"
import csv, sys
src = sys.argv[1]
rows = list(csv.DictReader(open("mdb/reports/microbench_rows_t.csv", newline="")))
want = []
for t in ("Add", "RmsNorm"):
    n = sum(1 for _ in csv.DictReader(open(f"{src}/{t}.csv", newline="")))
    want += [(t, str(i)) for i in range(2, n + 2)]
assert [(r["Operator"], r["Line"]) for r in rows] == want, rows   # each row once
assert all(r["Status"] == "ok" for r in rows), rows
# round-robin: row k on rank k % 2, so on host A and host B in turn
assert [r["Rank"] for r in rows] == [str(k % 2) for k in range(len(rows))], rows
for t in ("Add", "RmsNorm"):
    for r in csv.DictReader(open(f"mdb/{t}.csv", newline="")):
        assert float(r["Average Duration(us)"]) > 0, r
PY

echo "== the rank on host B dies after one row; --resume across the hosts takes the journals"
rm -rf mdb && cp -r "$DB" mdb
DIE_RANK=1
two_hosts "$PERFDB" "${mb[@]}" --database-path mdb > out1.txt 2> err1.txt &&
  fail "a run whose rank died exited 0"
DIE_RANK=
ranks_on_hosts
j1=mdb/reports/microbench_journal.jsonl.rank1
[ -s "$j1" ] || fail "host B's journal is missing: $(ls mdb/reports)"
[ "$(wc -l < "$j1")" = 1 ] || fail "host B journaled $(wc -l < "$j1") rows before dying"
for t in Add RmsNorm; do cmp -s "mdb/$t.csv" "$DB/$t.csv" || fail "the failed run changed $t.csv"; done
taken=$(cat mdb/reports/microbench_journal.jsonl.rank* | wc -l)
two_hosts "$PERFDB" "${mb[@]}" --database-path mdb --resume > out2.txt 2> err2.txt ||
  fail "resume: $(cat err2.txt)"
ranks_on_hosts
grep -q "^\[RESUME\] $taken rows taken from" err2.txt || fail "resume took not $taken rows: $(cat err2.txt)"
python3 - <<'PY' || fail "resumed results"
import csv
rows = list(csv.DictReader(open("mdb/reports/microbench_rows_t.csv", newline="")))
assert len(rows) == 6 and all(r["Status"] == "ok" for r in rows), rows
for t in ("Add", "RmsNorm"):
    for r in csv.DictReader(open(f"mdb/{t}.csv", newline="")):
        assert float(r["Average Duration(us)"]) > 0, r
PY
echo ok
