#!/usr/bin/env bash
# perfdb comm --backend hccl against the stand-in CANN of tests/hccl/
# (libascendcl.so and libhccl.so on host memory, the collectives over MPI):
#  1. the four collectives, groups of 1 and 2, on NPU buffers: checked, and
#     timed by the events (the stand-in's elapsed time is fixed at 250 us,
#     so every sample, Duration, min and max are exactly 250.0, and the
#     bandwidths follow from it); rank r sets NPU r; each call sits between
#     two recorded events; the tables and the report say backend hccl;
#  2. the sums in fp16, fp32 and int8 pass the check;
#  3. every CANN call that can fail gives one line naming it, exit 1,
#     nothing written; a failure on both of 2 ranks is told once, and one
#     on rank 1 alone is named by rank 0;
#  4. no library: one line saying where it was looked for; ASCEND_HOME_PATH
#     is searched; PERFDB_ASCEND_LIB_DIR must be a directory (exit 2).
#   usage: hccl.sh PERFDB STANDIN_LIB_DIR [mpi|solo]
# mpi: the parts under mpirun (1, 2 and the 2-rank failures of 3), which
# CTest runs alone; solo: the single-rank runs (the rest of 3, and 4), which
# can share the machine; neither: all.
source "$(dirname "$0")/../mpi/lib.sh"
LIBS=$(realpath "$2")
PART=${3:-all}
export PERFDB_ASCEND_LIB_DIR=$LIBS
unset ASCEND_HOME_PATH FAKE_ASCEND_FAIL FAKE_ASCEND_FAIL_RANK FAKE_ASCEND_TRACE FAKE_ASCEND_ELAPSED_MS
quick=(--iters 4 --min-iters 2 --warmup 1 --repeats 0 --time-budget 0.5)

one_error() {  # WANT-REGEX LABEL (err.txt, the exit status in $rc)
  [ "$rc" = 1 ] || fail "$2: exit $rc: $(cat err.txt)"
  n=$(grep -c '^perfdb comm: ' err.txt || true)
  [ "$n" = 1 ] || fail "$2: $n lines from perfdb: $(cat err.txt)"
  grep -Eq "^perfdb comm: error: $1" err.txt || fail "$2: $(cat err.txt)"
}
want_for() {  # CALL: the message its failure must give
  case $1 in
    Hccl*) w="$1 failed: HCCL_E_INTERNAL \(4\): stand-in failure$" ;;
    *) w="$1 failed: ACL error 507899: EE9999: stand-in failure of $1 \(FAKE_ASCEND_FAIL\)$" ;;
  esac
  case $1 in
    aclInit|aclrtGetDeviceCount|aclrtSetDevice|aclrtCreateStream|aclrtCreateEvent) w="--backend hccl: $w" ;;
  esac
  echo "$w"
}
if [ "$PART" != solo ]; then
echo "== np 2: all four collectives on the stand-in NPUs, event time fixed at 250 us"
FAKE_ASCEND_ELAPSED_MS=0.25 FAKE_ASCEND_TRACE=$WORK/trace.txt \
  mpirun -np 2 -x FAKE_ASCEND_ELAPSED_MS -x FAKE_ASCEND_TRACE -x PERFDB_ASCEND_LIB_DIR \
  "$PERFDB" comm --backend hccl --num-devices 1 2 --grid-shape 2 --bytes-grid 4096 65536 \
  --database-path db "${quick[@]}" > out.txt 2> err.txt || fail "run: $(cat err.txt)"
grep -q "^# hccl ($LIBS/libhccl.so) on Ascend910B3 (perfdb stand-in), NPU 0 of 8" out.txt ||
  fail "header: $(head -3 out.txt)"
for t in allReduce allGather reduceScatter alltoallv; do
  tables table "db/hcom_${t}_.csv" 4 Backend=hccl "Duration(us)=250.0" "Min Duration(us)=250.0" \
    "Max Duration(us)=250.0" "Std Duration(us)=0.0" Samples=4
done
python3 - "$WORK/trace.txt" <<'PY' || fail "bandwidths, devices or the calls between events"
import csv, sys
# algbw = bytes / 250 us; busbw = S / 250 us * factor (docs/comm.md), by hand:
# all_reduce S = bytes, factor 2(n-1)/n; all_gather and reduce_scatter S = n*bytes,
# factor (n-1)/n; all_to_all S = bytes, factor (n-1)/n.  n = 1: busbw 0.
def busbw(t, b, n):
    if n == 1:
        return 0.0
    s = b * n if t in ("allGather", "reduceScatter") else b
    f = 2 * (n - 1) / n if t == "allReduce" else (n - 1) / n
    return round(s / 250e-6 / 1e9 * f, 2)
for t in ("allReduce", "allGather", "reduceScatter", "alltoallv"):
    for r in csv.DictReader(open(f"db/hcom_{t}_.csv", newline="")):
        b, n = int(r["message_bytes"]), int(r["num_devices"])
        assert float(r["bandwidth_gbps"]) == round(b / 250e-6 / 1e9, 2), (t, r)
        assert float(r["busbw_gbps"]) == busbw(t, b, n), (t, r, busbw(t, b, n))
        assert r["topology_tier"] == "0", r
lines = [l.split() for l in open(sys.argv[1])]
for rank in ("0", "1"):
    mine = [l[1:] for l in lines if l[0] == rank]
    assert ["aclrtSetDevice", rank] in mine, (rank, mine[:6])
    calls = [l[0] for l in mine]
    # every collective: record, the call, record, synchronize, elapsed time
    colls = [i for i, c in enumerate(calls) if c in ("HcclAllReduce", "HcclAllGather",
                                                     "HcclReduceScatter", "HcclAlltoAll")]
    assert colls, calls
    for i in colls:
        assert calls[i - 1] == "aclrtRecordEvent" and calls[i + 1:i + 4] == [
            "aclrtRecordEvent", "aclrtSynchronizeStream", "aclrtEventElapsedTime"], calls[i - 1:i + 4]
    # rank 0 of each group makes the root info; every member joins; all is undone
    assert calls.count("HcclGetRootInfo") == (2 if rank == "0" else 0), calls.count("HcclGetRootInfo")
    assert calls.count("HcclCommInitRootInfo") == calls.count("HcclCommDestroy") == (2 if rank == "0" else 1)
    assert calls.count("aclrtMalloc") == calls.count("aclrtFree"), calls
    assert calls[-2:] == ["aclrtResetDevice", "aclFinalize"], calls[-2:]
PY
# the report records the backend used and its clock
mpirun -np 2 -x PERFDB_ASCEND_LIB_DIR "$PERFDB" comm --backend hccl --ops all_reduce --num-devices 2 \
  --bytes-grid 1024 --json -q "${quick[@]}" > rep.json 2> err.txt || fail "json run: $(cat err.txt)"
python3 - <<'PY' || fail "report"
import json
r = json.load(open("rep.json"))
assert r["backend"] == "hccl", r["backend"]
assert "ACL events around the HCCL call" in r["options"]["method"], r["options"]["method"]
assert [c["check"] for c in r["cases"]] == ["ok"], r["cases"]
PY

echo "== the sums in fp16, fp32 and int8"
for dt in torch.float16 torch.float32 torch.int8; do
  mpirun -np 2 -x PERFDB_ASCEND_LIB_DIR "$PERFDB" comm --backend hccl --ops all_reduce reduce_scatter \
    --num-devices 2 --bytes-grid 4096 --dtype $dt --database-path "db_$dt" "${quick[@]}" \
    > out.txt 2> err.txt || fail "$dt: $(cat err.txt)"
  tables table "db_$dt/hcom_allReduce_.csv" 1 Backend=hccl
  tables table "db_$dt/hcom_reduceScatter_.csv" 1 Backend=hccl
done

fi
if [ "$PART" != mpi ]; then
echo "== a failing call: one line naming it, exit 1, nothing written"
# each call in a world of one rank (no launcher: mpirun's own exit takes
# seconds after a failure), then the cases only more ranks have
for case in aclInit:all_reduce aclrtGetDeviceCount:all_reduce aclrtSetDevice:all_reduce \
            aclrtCreateStream:all_reduce aclrtCreateEvent:all_reduce HcclGetRootInfo:all_reduce \
            HcclCommInitRootInfo:all_reduce aclrtMalloc:all_reduce aclrtMemcpy:all_reduce \
            aclrtRecordEvent:all_reduce aclrtSynchronizeStream:all_reduce \
            aclrtEventElapsedTime:all_reduce HcclAllReduce:all_reduce HcclAllGather:all_gather \
            HcclReduceScatter:reduce_scatter HcclAlltoAll:all_to_all; do
  call=${case%%:*} op=${case#*:}
  rm -rf dbf
  set +e
  FAKE_ASCEND_FAIL=$call "$PERFDB" comm --backend hccl --ops $op --num-devices 1 --bytes-grid 1024 \
    --database-path dbf -q "${quick[@]}" > out.txt 2> err.txt
  rc=$?
  set -e
  one_error "$(want_for $call)" "$call"
  ! ls dbf/hcom_* >/dev/null 2>&1 || fail "$call: a table was written: $(ls dbf)"
done
fi
if [ "$PART" != solo ]; then
echo "== np 2: a call failing on both ranks is told once; on rank 1 alone, by rank 0"
set +e
FAKE_ASCEND_FAIL=HcclReduceScatter mpirun -np 2 -x FAKE_ASCEND_FAIL -x PERFDB_ASCEND_LIB_DIR "$PERFDB" comm \
  --backend hccl --ops reduce_scatter --num-devices 2 --bytes-grid 1024 -q "${quick[@]}" > out.txt 2> err.txt
rc=$?
set -e
one_error "$(want_for HcclReduceScatter)" "both ranks"
set +e
FAKE_ASCEND_FAIL=aclrtMalloc FAKE_ASCEND_FAIL_RANK=1 mpirun -np 2 -x FAKE_ASCEND_FAIL -x FAKE_ASCEND_FAIL_RANK \
  -x PERFDB_ASCEND_LIB_DIR "$PERFDB" comm --backend hccl --ops all_gather --num-devices 2 \
  --bytes-grid 1024 -q "${quick[@]}" > out.txt 2> err.txt
rc=$?
set -e
one_error "rank 1: aclrtMalloc failed: ACL error 507899" "rank 1 alone"
echo "== inside the timed loop (the 4th call: check, warm-up, 2 timed): on both ranks told once;"
echo "   on rank 1 alone, rank 0 waits inside the collective: rank 1 gives up after 5 s and aborts the job"
rm -rf dbl
set +e
FAKE_ASCEND_FAIL=HcclAllGather FAKE_ASCEND_FAIL_AFTER=3 timeout 60 mpirun -np 2 -x FAKE_ASCEND_FAIL \
  -x FAKE_ASCEND_FAIL_AFTER -x PERFDB_ASCEND_LIB_DIR "$PERFDB" comm --backend hccl --ops all_gather \
  --num-devices 2 --bytes-grid 1024 --database-path dbl -q "${quick[@]}" > out.txt 2> err.txt
rc=$?
set -e
one_error "$(want_for HcclAllGather)" "in the loop, both ranks"
! ls dbl/hcom_* >/dev/null 2>&1 || fail "in the loop, both ranks: a table was written: $(ls dbl)"
t0=$(date +%s)
set +e
FAKE_ASCEND_FAIL=HcclAllGather FAKE_ASCEND_FAIL_RANK=1 FAKE_ASCEND_FAIL_AFTER=3 timeout 60 mpirun -np 2 \
  -x FAKE_ASCEND_FAIL -x FAKE_ASCEND_FAIL_RANK -x FAKE_ASCEND_FAIL_AFTER -x PERFDB_ASCEND_LIB_DIR "$PERFDB" comm \
  --backend hccl --ops all_gather --num-devices 2 --bytes-grid 1024 --database-path dbl -q "${quick[@]}" \
  > out.txt 2> err.txt
rc=$?
set -e
[ "$rc" != 124 ] || fail "in the loop, rank 1 alone: the job hung (killed after 60 s)"
one_error "rank 1: HcclAllGather failed: HCCL_E_INTERNAL \(4\): stand-in failure; the group's other ranks did not reach the agreement within 5 s" "in the loop, rank 1 alone"
[ $(($(date +%s) - t0)) -lt 30 ] || fail "in the loop, rank 1 alone: $(($(date +%s) - t0)) s to give up"
! ls dbl/hcom_* >/dev/null 2>&1 || fail "in the loop, rank 1 alone: a table was written: $(ls dbl)"

fi
if [ "$PART" != mpi ]; then
echo "== where CANN is looked for"
mkdir -p empty home/lib64
set +e
PERFDB_ASCEND_LIB_DIR=$WORK/empty "$PERFDB" comm --backend hccl --ops all_reduce --num-devices 1 \
  --bytes-grid 1024 -q > out.txt 2> err.txt
rc=$?
set -e
one_error "--backend hccl: cannot load libascendcl.so \($WORK/empty/libascendcl.so: cannot open shared object file: No such file or directory\); install CANN" "no library"
ln -s "$LIBS/libascendcl.so" empty/libascendcl.so
set +e
PERFDB_ASCEND_LIB_DIR=$WORK/empty "$PERFDB" comm --backend hccl --ops all_reduce --num-devices 1 \
  --bytes-grid 1024 -q > out.txt 2> err.txt
rc=$?
set -e
one_error "--backend hccl: cannot load libhccl.so \($WORK/empty/libhccl.so: " "no libhccl"
ln -s "$LIBS/libascendcl.so" "$LIBS/libhccl.so" home/lib64/
env -u PERFDB_ASCEND_LIB_DIR ASCEND_HOME_PATH=$WORK/home "$PERFDB" comm --backend hccl --ops all_reduce \
  --num-devices 1 --bytes-grid 1024 "${quick[@]}" > out.txt 2> err.txt || fail "ASCEND_HOME_PATH: $(cat err.txt)"
grep -q "^# hccl ($WORK/home/lib64/libhccl.so)" out.txt || fail "not from ASCEND_HOME_PATH: $(head -3 out.txt)"
set +e
PERFDB_ASCEND_LIB_DIR=$WORK/no-such-dir "$PERFDB" comm --backend hccl --num-devices 1 > out.txt 2> err.txt
rc=$?
set -e
[ $rc = 2 ] || fail "a bad PERFDB_ASCEND_LIB_DIR: exit $rc"
grep -q "PERFDB_ASCEND_LIB_DIR: not a directory: '$WORK/no-such-dir'" err.txt || fail "$(cat err.txt)"
fi
echo ok
