#!/usr/bin/python3
"""FusedInferAttentionScore queries as TensorCast sends them (bench/consumer.sh).

usage: fia_tc_queries.py DB_DIR EMITTED.jsonl OUT.jsonl [--keep]

consumer_check.py derives a `tensor_cast.attention.default` query from each
FIA row (its attn_params): query (T, N*D), key from the row's key slot,
seq_lens from `Runtime actual_seq_lengths_kv_values`.  Two of those
derivations are not what TensorCast passes for the rows the grid writes
(the reference grid's layouts, docs/spec/grid.md section 3):
  * a paged key stored (blocks, N_kv, block_size, D) is passed unchanged,
    but TensorCast's kv cache is (blocks, block_size, N_kv, D) and the
    consumer reads the kv heads from key.shape[-2];
  * for TND rows without a block table the kv lengths are cumulative (FIA's
    TND convention), but TensorCast's seq_lens are per-request lengths, whose
    mean the consumer compares with `Runtime avg_seq_len`.
This script takes the queries consumer_check emitted for DB_DIR
(--emit-queries) and writes to OUT.jsonl only the attn queries of grid-made
FIA rows (`Runtime metadata_completeness` = shape_grid_scene_generated),
rewritten into TensorCast's layout from the row's own Runtime cells; the
consumer then answers them with --queries.  A grid row it cannot restate
(cells missing) keeps consumer_check's query.  --keep writes the same
queries unchanged (consumer_check's own derivation, for comparison).
"""
import csv
import json
import sys


def ints(cell):
    cell = (cell or "").strip().strip('"')
    return [int(x) for x in cell.replace(";", ",").split(",") if x.strip()] if cell else []


def main():
    keep = "--keep" in sys.argv
    db, emitted, out = [a for a in sys.argv[1:] if a != "--keep"][:3]
    rows = []
    with open(f"{db}/FusedInferAttentionScore.csv", encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            if r.get("Runtime metadata_completeness", "").strip() == "shape_grid_scene_generated":
                rows.append(r)
    by_q = {}
    for r in rows:
        slots = r["Input Shapes"].strip('"').split(";")
        q, k = ints(slots[0]), ints(slots[1]) if len(slots) > 1 else []
        kvh, bs = ints(r.get("Runtime num_key_value_heads")), ints(r.get("Runtime block_size"))
        kv = ints(r.get("Runtime actual_seq_lengths_kv_values"))
        if len(q) == 4 and q[2] == 1:
            q = [q[0], q[1], q[3]]                   # BNSD decode (B, N, 1, D), as consumer_check reads it
        if len(q) != 3 or not kvh or not kv:
            continue
        t, n, d = q
        kvh = kvh[0]
        paged = bool(r.get("Runtime block_table_shape", "").strip())
        if len(k) == 4 and paged and bs and k[1] == kvh and k[2] == bs[0]:
            key = [k[0], k[2], k[1], k[3]]          # (blocks, N_kv, bs, D) -> TensorCast's (blocks, bs, N_kv, D)
        elif len(k) == 3:
            key = [k[0], 1, kvh, d] if not paged else [k[0], k[1], kvh, k[2] // kvh]
        else:
            key = list(k)
        raw = tuple(kv)
        if not paged and r.get("Runtime input_layout", "").strip() == "TND":
            kv = [b - a for a, b in zip([0] + kv[:-1], kv)]   # cumulative -> per request
        # consumer_check's query of this row: same q and the raw kv list as its seq_lens
        by_q[(t, n * d, raw)] = {"k": key, "seq_lens": kv, "batch": len(kv)}
    n_rewritten = 0
    with open(emitted, encoding="utf-8") as fi, open(out, "w", encoding="utf-8") as fo:
        for line in fi:
            qy = json.loads(line)
            if qy.get("family") == "attn" and qy.get("origin") == "row" and qy["kernel"] == "FusedInferAttentionScore":
                a = qy["attn"]
                c = by_q.get((*a["q"][0], tuple(a["seq_lens"] or ())))
                if c is None:
                    continue
                if not keep:
                    dt = qy["attn"]["k"][1]
                    qy["attn"]["k"] = [c["k"], dt]
                    qy["attn"]["seq_lens"] = c["seq_lens"]
                    qy["attn"]["batch"] = c["batch"]
                    qy["inputs"][1] = [c["k"], dt]
                    n_rewritten += 1
                fo.write(json.dumps(qy, sort_keys=True) + "\n")
    print(f"fia_tc_queries: {n_rewritten} attention queries of {len(rows)} grid rows restated", file=sys.stderr)


if __name__ == "__main__":
    main()
