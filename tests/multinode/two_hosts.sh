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
#  3. the rank on the second host is killed (SIGKILL) after journaling a
#     row: the run fails, the tables are untouched, and --resume takes the
#     journaled rows of both hosts.
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
# each rank records where it runs, and its pid (the exec keeps it)
cat > rank.sh <<EOF
#!/bin/sh
echo "\$(hostname) \$OMPI_COMM_WORLD_RANK \$\$" >> "$WORK/ranks.txt"
exec "\$@"
EOF
chmod +x agent.sh rank.sh
printf '%s slots=1\n%s slots=1\n' "$ADDR_A" "$ADDR_B" > hostfile
# no shared memory between the "hosts": TCP on the link, for MPI and for the launcher
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=$NET.0/24 OMPI_MCA_oob_tcp_if_include=$NET.0/24
export OMPI_MCA_plm_rsh_agent=$WORK/agent.sh
unset OMPI_MCA_btl_vader_single_copy_mechanism
export PERFDB_TIMESTAMP=t
two_hosts() {  # COMMAND...: under mpirun -np 2 from host A, one rank per host (at most 120 s)
  : > ranks.txt
  timeout -k 5 120 ip netns exec "$NS_A" unshare --uts sh -c 'hostname "$0" && exec "$@"' \
    "$HOST_A" mpirun --hostfile hostfile -np 2 -x PERFDB_TIMESTAMP -x PERFDB_DATA_ROOT \
    "$WORK/rank.sh" "$@"
}
tx() { ip -n "$NS_A" -s -j link show "$VETH_A" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["bytes"])'; }
ranks_on_hosts() {  # rank 0 ran on host A and rank 1 on host B
  cut -d' ' -f1,2 ranks.txt | sort | tr '\n' ' ' | grep -qx "$HOST_A 0 $HOST_B 1 " ||
    fail "ranks ran on: $(cat ranks.txt)"
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

echo "== the rank on host B is killed (SIGKILL) mid-run; --resume across the hosts takes the journals"
pid_of() {  # RANK: its pid, once rank.sh has recorded it and it runs perfdb microbench
  local p
  p=$(sed -n "s/^[^ ]* $1 \([0-9]*\)$/\1/p" ranks.txt 2>/dev/null | head -1)
  [ -n "$p" ] && tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -q " microbench " && echo "$p"
  return 0
}
# 40 Add rows of distinct shapes, 20 per host, so the rows last long
# enough for the watcher below
mkdir -p kdb
head -1 "$DB/Add.csv" > kdb/Add.csv
for k in $(seq 1 40); do
  echo "dynamic,AI_VECTOR_CORE,\"\"\"$((k * 8)),4096;$((k * 8)),4096\"\"\",DT_FLOAT;DT_FLOAT,ND;ND,\"\"\"$((k * 8)),4096\"\"\",DT_FLOAT,ND,"
done >> kdb/Add.csv
# one journal per run (issue 49): microbench_journal.<host>.<rank 0 pid>.jsonl.rank<R>
jrank() { ls mdb/reports/microbench_journal.*.jsonl.rank"$1" 2>/dev/null | head -1; }
# A watcher: once rank 0 has journaled a row (both ranks are past the
# start-up collectives; rows are independent until the final gather) it is
# stopped (SIGSTOP), so the run cannot end; once host B's rank has
# journaled a row too, that rank is killed (SIGKILL) and rank 0 continued
# for mpirun to end the job.  A run over before the watcher caught it is
# tried again, three times at most; every wait is bounded.
killed=0
for attempt in 1 2 3; do
  rm -rf mdb && cp -r kdb mdb
  : > ranks.txt   # no pid of an earlier run may be signalled
  two_hosts "$PERFDB" "${mb[@]}" --database-path mdb > out1.txt 2> err1.txt &
  run=$!
  p0= p1=
  for _ in $(seq 2000); do
    [ -n "$p0" ] || p0=$(pid_of 0)
    [ -n "$p0" ] && [ -s "$(jrank 0)" ] && break
    kill -0 $run 2>/dev/null || break
    sleep 0.002
  done
  stopped=no
  [ -n "$p0" ] && [ -s "$(jrank 0)" ] && kill -STOP "$p0" && stopped=yes
  for _ in $(seq 1000); do
    [ -s "$(jrank 1)" ] && break
    kill -0 $run 2>/dev/null || break
    sleep 0.01
  done
  p1=$(pid_of 1)
  if [ $stopped = yes ] && [ -s "$(jrank 1)" ] && [ -n "$p1" ]; then
    kill -KILL "$p1" && killed=1
  fi
  [ $stopped = yes ] && kill -CONT "$p0" 2>/dev/null
  rc=0
  wait $run || rc=$?
  [ $killed = 1 ] && break
  echo "attempt $attempt: the run ended before its rank could be killed (exit $rc, rank 0 pid ${p0:-none} stopped $stopped, host B pid ${p1:-none}; $(cat ranks.txt | tr '\n' ' '))"
done
[ $killed = 1 ] || fail "could not catch the run to kill its rank in 3 attempts"
[ $rc != 0 ] || fail "a run whose rank was killed exited 0"
ranks_on_hosts
[ -s "$(jrank 1)" ] || fail "host B's journal is missing: $(ls mdb/reports)"
cmp -s mdb/Add.csv kdb/Add.csv || fail "the killed run changed Add.csv"
taken=$(cat mdb/reports/microbench_journal.*.jsonl.rank* | wc -l)
two_hosts "$PERFDB" "${mb[@]}" --database-path mdb --resume > out2.txt 2> err2.txt ||
  fail "resume: $(cat err2.txt)"
ranks_on_hosts
grep -q "^\[RESUME\] $taken rows taken from" err2.txt || fail "resume took not $taken rows: $(cat err2.txt)"
python3 - <<'PY' || fail "resumed results"
import csv
rows = list(csv.DictReader(open("mdb/reports/microbench_rows_t.csv", newline="")))
assert [r["Line"] for r in rows] == [str(i) for i in range(2, 42)], rows   # every row once
assert all(r["Status"] == "ok" for r in rows), rows
assert {r["Rank"] for r in rows} == {"0", "1"}, rows
body = list(csv.DictReader(open("mdb/Add.csv", newline="")))
assert len(body) == 40 and all(float(r["Average Duration(us)"]) > 0 for r in body), body
PY
echo ok
