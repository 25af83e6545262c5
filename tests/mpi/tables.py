"""Checks for the MPI integration tests: tables and reports written by perfdb comm.

  tables.py table FILE ROWS [key=value ...]   FILE is a well-formed collective table
                                              (docs/spec/comm.md §1, Decision 3) with ROWS
                                              rows; key=value: every row has that cell
  tables.py report JSON [key=value ...]       a `perfdb comm --json` report whose cases
                                              all passed the check; key=value as above
                                              on every case; cases=N: N cases
"""
import csv, json, re, sys

COLS = ["message_bytes", "num_devices", "dtype", "topology_tier", "Duration(us)",
        "bandwidth_gbps", "busbw_gbps", "Min Duration(us)", "Max Duration(us)",
        "Std Duration(us)", "Samples", "Backend"]
ROUND2 = re.compile(r"^-?\d+\.\d{1,2}$")   # repr(round(x, 2)) below 1e16


def die(msg):
    print("tables.py: " + msg, file=sys.stderr)
    sys.exit(1)


def kv(args):
    return dict(a.split("=", 1) for a in args)


def table(path, nrows, *want):
    raw = open(path, "rb").read()
    if b"\r\n" not in raw or raw.replace(b"\r\n", b"").count(b"\n"):
        die(f"{path}: lines must end with CRLF")
    rows = list(csv.reader(raw.decode("utf-8").splitlines()))
    if rows[0] != COLS:
        die(f"{path}: header {rows[0]}")
    if rows.count(COLS) != 1:
        die(f"{path}: header written more than once")
    body = rows[1:]
    if len(body) != int(nrows):
        die(f"{path}: {len(body)} rows, expected {nrows}")
    for i, r in enumerate(body, 2):
        if len(r) != 12:
            die(f"{path}:{i}: {len(r)} fields")
        d = dict(zip(COLS, r))
        for k in ("message_bytes", "num_devices", "topology_tier", "Samples"):
            if not r[COLS.index(k)].isdigit():
                die(f"{path}:{i}: {k} = {d[k]!r}")
        for k in COLS[4:10]:
            if not ROUND2.match(d[k]):
                die(f"{path}:{i}: {k} = {d[k]!r} is not round(x, 2)")
        dur, lo, hi = float(d["Duration(us)"]), float(d["Min Duration(us)"]), float(d["Max Duration(us)"])
        if not (0 < dur and lo <= dur <= hi):
            die(f"{path}:{i}: min {lo} <= Duration {dur} <= max {hi} does not hold")
        if int(d["Samples"]) < 1 or d["Backend"] != kv(want).get("Backend", "mpi"):
            die(f"{path}:{i}: Samples/Backend {d['Samples']!r} {d['Backend']!r}")
        # bandwidth comes from the unrounded median, within 0.005 us of Duration
        b = int(d["message_bytes"]) / 1e3
        lo_bw, hi_bw = b / (dur + 0.005), (b / (dur - 0.005) if dur > 0.005 else float("inf"))
        if not lo_bw - 0.006 <= float(d["bandwidth_gbps"]) <= hi_bw + 0.006:
            die(f"{path}:{i}: bandwidth_gbps {d['bandwidth_gbps']} is not bytes/Duration "
                f"({lo_bw:.2f} .. {hi_bw:.2f})")
        for k, v in kv(want).items():
            if d[k] != v:
                die(f"{path}:{i}: {k} = {d[k]!r}, expected {v!r}")


def report(path, *want):
    rep = json.load(open(path))
    w = kv(want)
    n = w.pop("cases", None)
    cases = rep["cases"]
    if n is not None and len(cases) != int(n):
        die(f"{path}: {len(cases)} cases, expected {n}")
    for c in cases:
        if c["check"] != "ok":
            die(f"{path}: check {c['check']} in {c}")
        if not (c["samples"] >= 1 and c["median_us"] > 0):
            die(f"{path}: no samples in {c}")
        for k, v in w.items():
            if str(c[k]).lower() != v.lower():
                die(f"{path}: {k} = {c[k]!r}, expected {v!r} in {c}")
    for k in ("time_utc", "mpi_library", "malloc", "world_size", "hosts", "cpus"):
        if k not in rep["context"]:
            die(f"{path}: context lacks {k}")


if __name__ == "__main__":
    {"table": table, "report": report}[sys.argv[1]](*sys.argv[2:])
