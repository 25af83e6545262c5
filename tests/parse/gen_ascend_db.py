#!/usr/bin/env python3
"""Ascend SQLite profile fixtures, built from the published schema of
msprof's analysis DB (msprof --type=db, torch_npu export_type db; docs/parse.md
"Ascend SQLite profiles"), with the kernel_details.csv that describes the same
profile.

  gen_ascend_db.py OUT.db [--csv OUT.csv] [--tasks N] [--seed S]
                   [--broken KIND] [--old-schema] [--page-size B] [--shuffle] [--comm]

Text columns hold ids into STRING_IDS(id, value); times are integer ns.  TASK
rows are written in time order, as msprof writes them, or with --shuffle in
random order (a reader must order them by time itself);
COMPUTE_TASK_INFO carries the newer columns (attrInfo, opState, hf32Eligible)
unless --old-schema.  The CSV lists the same launches in start-time order with
kernel_details' header, times in us with three decimals, shape cells in literal
quotes, as Ascend writes them.

--broken makes a malformed database instead (the CSV is not written):
  missing_table  no COMPUTE_TASK_INFO
  missing_column COMPUTE_TASK_INFO without outputShapes
  wrong_type     an opType that holds text, not a STRING_IDS id
  dangling_id    an inputShapes id that STRING_IDS lacks
  truncated      the file cut to half its pages
  wal            a -wal file left beside it
  not_sqlite     a text file named .db
  comm_dangling  (with the collectives) an opType id that STRING_IDS lacks

--comm adds collectives: COMMUNICATION_OP, ENUM_HCCL_DATA_TYPE and META_DATA's
parallel_group_info (the COMM list below).
"""
import argparse
import json
import os
import random
import sqlite3
import sys

OPS = [  # (opType, task type, input shapes, input dtypes, input formats, output shapes, dtypes, formats)
    ("MatMulV2", "AI_CORE", "4096,512;512,1024", "DT_BF16;DT_BF16", "ND;ND", "4096,1024", "DT_BF16", "ND"),
    ("MatMulV2", "AI_CORE", "8,512;512,1024", "DT_BF16;DT_BF16", "ND;ND", "8,1024", "DT_BF16", "ND"),
    ("Add", "AI_VECTOR_CORE", "8,1024;8,1024", "DT_BF16;DT_BF16", "ND;ND", "8,1024", "DT_BF16", "ND"),
    ("RmsNorm", "AI_VECTOR_CORE", "8,1024;1024", "DT_BF16;DT_BF16", "ND;ND", "8,1024;8,1", "DT_BF16;FLOAT", "ND;ND"),
    ("Cast", "AI_VECTOR_CORE", "8,1024", "DT_BF16", "ND", "8,1024", "FLOAT", "ND"),
    ("Transpose", "AI_VECTOR_CORE", "8,16,64", "FLOAT16", "FORMAT_ND", "16,8,64", "FLOAT16", "FORMAT_ND"),
]


# --comm: collectives on two communicators (sizes in META_DATA's
# parallel_group_info) and one it lacks; (opType, ENUM_HCCL_DATA_TYPE id,
# count, group, durations in ns), one COMMUNICATION_OP row per duration.
COMM = [
    ("hcom_allReduce_", 11, 1048576, "10.0.0.1%eth0_60000_0_1", [100_000, 120_000, 110_000]),
    ("hcom_allReduce_", 4, 1024, "tp_group_hash_7", [20_000]),
    ("hcom_allGather_", 11, 65536, "tp_group_hash_7", [30_000, 50_000]),
    ("hcom_reduceScatter_", 3, 4096, "10.0.0.1%eth0_60000_0_1", [15_000]),
    ("hcom_alltoallv_", 0, 1000000, "10.0.0.1%eth0_60000_0_1", [25_000]),
    ("hcom_broadcast_", 4, 64, "10.0.0.1%eth0_60000_0_1", [5_000]),
    ("hcom_allReduce_", 4, 256, "group_nobody_listed", [9_000, 9_000]),
]
GROUPS = {"10.0.0.1%eth0_60000_0_1": {"group_name": "hccl_world_group", "group_rank": 0,
                                      "global_ranks": list(range(8))},
          "tp_group_hash_7": {"group_name": "tp", "group_rank": 1, "global_ranks": [0, 1, 2, 3]}}
HCCL_TYPES = ["INT8", "INT16", "INT32", "FP16", "FP32", "INT64", "UINT64", "UINT8", "UINT16", "UINT32",
              "FP64", "BFP16", "INT128"]


def write_comm(con, sid, t, broken):
    """COMMUNICATION_OP as msprof's analysis DB defines it, after the compute tasks in time."""
    con.execute("CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER, "
                "connectionId INTEGER, groupName INTEGER, opId INTEGER PRIMARY KEY, relay INTEGER, "
                "retry INTEGER, dataType INTEGER, algType INTEGER, count NUMERIC, opType INTEGER)")
    con.execute("CREATE TABLE ENUM_HCCL_DATA_TYPE (id INTEGER PRIMARY KEY, name TEXT)")
    con.executemany("INSERT INTO ENUM_HCCL_DATA_TYPE VALUES (?, ?)",
                    list(enumerate(HCCL_TYPES)) + [(65534, "N/A"), (65535, "INVALID_TYPE")])
    con.execute("CREATE TABLE META_DATA (name TEXT, value TEXT)")
    con.execute("INSERT INTO META_DATA VALUES ('SCHEMA_VERSION', '1.0.2')")
    con.execute("INSERT INTO META_DATA VALUES ('parallel_group_info', ?)", (json.dumps(GROUPS),))
    op_id = 0
    for op_type, dt, count, group, durs in COMM:
        for d in durs:
            op_id += 1
            t += 50_000
            con.execute("INSERT INTO COMMUNICATION_OP VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                        (sid("%s_%d_%d_1" % (op_type, op_id, op_id)), t, t + d, op_id, sid(group), op_id, 0, 0,
                         dt, sid("RING"), count, 999_999 if broken == "comm_dangling" else sid(op_type)))


def build(path, n, seed, old_schema, broken, page_size=4096, shuffle=False, comm=False, without_rowid=False,
          gtid_step=1, early_task=False):
    rng = random.Random(seed)
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    con.execute("PRAGMA page_size=%d" % page_size)
    con.execute("PRAGMA journal_mode=DELETE")
    con.execute("CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT)")
    con.execute("CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, "
                "globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER, "
                "streamId INTEGER, taskId INTEGER, modelId INTEGER)")
    cols = ["name INTEGER", "globalTaskId INTEGER PRIMARY KEY", "blockDim INTEGER", "mixBlockDim INTEGER",
            "taskType INTEGER", "opType INTEGER", "inputFormats INTEGER", "inputDataTypes INTEGER",
            "inputShapes INTEGER", "outputFormats INTEGER", "outputDataTypes INTEGER", "outputShapes INTEGER"]
    if not old_schema:
        cols += ["attrInfo INTEGER", "opState INTEGER", "hf32Eligible INTEGER"]
    if broken == "missing_column":
        cols = [c for c in cols if not c.startswith("outputShapes")]
    if broken != "missing_table":
        con.execute("CREATE TABLE COMPUTE_TASK_INFO (%s)%s" % (", ".join(cols),
                                                               " WITHOUT ROWID" if without_rowid else ""))
    ids = {}

    def sid(v):
        if v not in ids:
            ids[v] = len(ids) + 1
        return ids[v]

    rows, tasks, launches = [], [], []
    t = 1_736_413_971_558_972_912
    for g in range(n):
        op = OPS[rng.randrange(len(OPS))]
        dur = rng.randrange(1_000, 900_000)
        gap = rng.randrange(200, 5_000)
        name = "aclnn%s_%s_%d" % (op[0], op[0], g % 7)
        start, end = t, t + dur
        if early_task and g == 0:   # starts spanning 2^60 ns: too wide for one radix key
            start, end = 1_000, 1_000 + dur
        t = end + gap
        gtid = g * gtid_step + 1
        vals = [sid(name), gtid, 16, 0, sid(op[1]), sid(op[0]), sid(op[4]), sid(op[3]), sid(op[2]),
                sid(op[7]), sid(op[6]), sid(op[5])]
        if not old_schema:
            vals += [sid(""), sid("dynamic"), sid("NO")]
        if broken == "missing_column":
            del vals[11]
        rows.append(vals)
        tasks.append((start, end, 0, g, gtid, 1, 0, 0, 2, g, 4294967295))
        launches.append((name, op, start, dur, gap))
    if broken == "wrong_type":
        rows[len(rows) // 2][5] = "MatMulV2"
    if broken == "wrong_type_twice":   # the reader must name the first, whichever thread reads it
        rows[len(rows) // 4][5] = "MatMulV2"
        rows[3 * len(rows) // 4][5] = "MatMulV2"
    if broken == "dangling_id":
        rows[len(rows) // 2][8] = 999_999
    if comm:
        write_comm(con, sid, t, broken)
    for v, i in ids.items():
        con.execute("INSERT INTO STRING_IDS VALUES (?, ?)", (i, v))
    if shuffle:
        rng.shuffle(tasks)
    con.executemany("INSERT INTO TASK VALUES (%s)" % ",".join("?" * 11), tasks)
    if broken != "missing_table":
        con.executemany("INSERT INTO COMPUTE_TASK_INFO VALUES (%s)" % ",".join("?" * len(rows[0])), rows)
    for tbl in ("COMMUNICATION_OP", "PYTORCH_API", "NPU_INFO", "RANK_DEVICE_MAP", "SESSION_TIME_INFO"):
        if not (comm and tbl == "COMMUNICATION_OP"):
            con.execute("CREATE TABLE %s (id INTEGER)" % tbl)
    con.commit()
    con.close()
    if broken == "truncated":
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            f.truncate(size // 2)
    elif broken == "wal":
        open(path + "-wal", "wb").write(b"\0" * 32)
    elif broken == "not_sqlite":
        open(path, "w").write("Name,Type\nx,Add\n")
    return launches


def us(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


def write_csv(path, launches):
    hdr = ("Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),"
           "Wait Time(us),Block Dim,Mix Block Dim,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
           "Output Data Types,Output Formats")
    with open(path, "w", newline="") as f:
        f.write(hdr + "\r\n")
        for k, (name, op, start, dur, gap) in enumerate(launches):
            cells = ["1", "4294967295", str(k), "2", name, op[0], "dynamic", op[1], us(start), us(dur), "0.000",
                     "16", "0", '"""%s"""' % op[2], op[3], op[4], '"""%s"""' % op[5], op[6], op[7]]
            f.write(",".join(cells) + "\r\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("--csv")
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--old-schema", action="store_true")
    ap.add_argument("--page-size", type=int, default=4096, help="small pages make small fuzz seeds")
    ap.add_argument("--shuffle", action="store_true", help="TASK rows in random order")
    ap.add_argument("--comm", action="store_true", help="collectives in COMMUNICATION_OP (COMM above)")
    ap.add_argument("--without-rowid", action="store_true", help="COMPUTE_TASK_INFO as a WITHOUT ROWID table")
    ap.add_argument("--early-task", action="store_true", help="the first task starts at 1 us, the rest in 2025")
    ap.add_argument("--gtid-step", type=int, default=1, help="globalTaskIds 1, 1 + step, ...")
    ap.add_argument("--broken", choices=["missing_table", "missing_column", "wrong_type", "wrong_type_twice",
                                         "dangling_id",
                                         "truncated", "wal", "not_sqlite", "comm_dangling"])
    a = ap.parse_args()
    launches = build(a.db, a.tasks, a.seed, a.old_schema, a.broken, a.page_size, a.shuffle,
                     a.comm or a.broken == "comm_dangling", a.without_rowid, a.gtid_step, a.early_task)
    if a.csv and not a.broken:
        write_csv(a.csv, launches)


if __name__ == "__main__":
    sys.exit(main())
