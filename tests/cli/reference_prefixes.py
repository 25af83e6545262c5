#!/usr/bin/env python3
"""Every reference flag of every stage, given by its shortest unique prefix
among the reference tool's own flags, must reach that flag in perfdb.

The flag lists below are copied from the reference tools' argparse calls
(Ascend/msmodeling @84fec85, tools/perf_data_collection/), not from perfdb's
sources: argparse resolves a unique prefix of its own flags, so a user of the
reference may type `--database` for `--database-path`, and perfdb's extra
flags (`--database-root`, `--time-budget`, ...) must not make that ambiguous.

For each flag the binary runs as
    PERFDB_TRACE_OPTIONS=1 perfdb <cmd> --<prefix> [value] --help
and must exit 0 and say `option --<prefix> is --<flag>` on stderr.

usage: reference_prefixes.py PERFDB
"""
import os
import subprocess
import sys

DB = [("database-path", "x"), ("device", "TEST_DEVICE"), ("vllm-version", "0.9.2"),
      ("torch-version", "2.9.0"), ("cann-version", "8.5")]
DFC = [("dispatch-ffn-combine-ep-size", "16"), ("dispatch-ffn-combine-nproc-per-node", "1"),
       ("dispatch-ffn-combine-nnodes", "1"), ("dispatch-ffn-combine-node-rank", "0"),
       ("dispatch-ffn-combine-master-addr", "127.0.0.1"),
       ("dispatch-ffn-combine-master-port", "29500")]
FLAG = None   # a store_true flag: no value

# perfdb command -> the reference tool's flags (name, a valid value)
REFERENCE = {
    # parsers/parse_kernel_details.py
    "parse": [("profiling-path", "x")] + DB,
    # parsers/trace_to_csv.py
    "trace-to-csv": [("trace", "x"), ("output", "x")],
    # generate_shape_grid.py
    "grid": [("target-models", "Qwen/Qwen3-32B")] + DB +
            [("rows", "10"), ("seed", "1"), ("max-hbm-gb", "32")],
    # start_microbench.py
    "microbench": DB + [("ops", "Add"), ("fail-fast", FLAG), ("repeat-count", "1"),
                        ("update-mode", "all"), ("prune-empty-duration-rows", FLAG)] + DFC,
    # comm_bench/generate_comm_microbench.py
    "comm": [("database-path", "x"), ("ops", "all_reduce"), ("num-devices", "2"),
             ("topology-tier", "0"), ("grid-shape", "48"), ("dtype", "torch.bfloat16"),
             ("bytes-grid", "1024"), ("output-csv", "x.csv")],
    # comm_bench/validate_comm_alignment.py
    "validate": [("csv-dir", "x"), ("tolerance", "2.0"), ("verbose", FLAG)],
}


def shortest_prefix(name, names):
    """argparse: an exact name always wins, else a prefix must be unique."""
    for k in range(1, len(name) + 1):
        p = name[:k]
        if p == name or not any(o != name and o.startswith(p) for o in names):
            return p
    return name


def main():
    perfdb = sys.argv[1]
    env = dict(os.environ, PERFDB_TRACE_OPTIONS="1")
    failures, n = [], 0
    for cmd, flags in REFERENCE.items():
        names = [f for f, _ in flags]
        for flag, value in flags:
            p = shortest_prefix(flag, names)
            args = [perfdb, cmd, "--" + p] + ([] if value is FLAG else [value]) + ["--help"]
            r = subprocess.run(args, env=env, capture_output=True, text=True)
            want = "perfdb %s: option --%s is --%s" % (cmd, p, flag)
            n += 1
            if r.returncode != 0 or want not in r.stderr.splitlines():
                failures.append("%s: exit %d, stderr %r (want %r)" %
                                (" ".join(args[1:]), r.returncode, r.stderr.strip(), want))
    for f in failures:
        print("FAIL", f)
    print("%d reference flags by their shortest unique prefix, %d failed" % (n, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
