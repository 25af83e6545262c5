#!/usr/bin/env python3
"""Independent oracle for `perfdb grid --rows 0` (docs/spec/grid.md).

Written from the spec text alone (grids, patterns, models, generator rules,
row build, sort), not from perfdb's sources or data/grid.yaml.  Given a
database built by `make_db` (one template row per kernel type, BF16 dtypes,
one input and one output slot of shape 3,7 that no generator produces; a few
kernel types get templates with empty and absent slots, SLOT_TEMPLATES), it
writes the tables `perfdb grid --rows 0` must produce, so the CLI test can
compare them byte for byte.

usage: oracle_grid.py make-db DIR
       oracle_grid.py expect DIR [--models ID,ID] [--max-hbm-gb GB]
       oracle_grid.py counts              (print per-kernel candidate counts)
"""
import csv
import io
import math
import os
import sys

NK = [128, 192, 256, 320, 384, 448, 512, 640, 768, 896, 1024, 1280, 1536, 1728, 1792,
      2048, 2304, 2560, 3072, 3456, 3584, 4096, 4608, 5120, 6144, 6912, 7168, 8192,
      10240, 12288, 13824, 14336, 16384, 18432, 27648, 28672, 55296]
HID = NK
M = [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 36, 40, 48, 56, 64, 80, 96,
     112, 128, 160, 192, 256, 384, 512, 768, 1024, 2048, 4096, 8192, 16384, 32768]
TOK = [1, 4, 16] + [64 * 2 ** i for i in range(10)]        # 1,4,16,64,128..32768
PAD = [1, 2, 3, 4, 5, 6, 7, 9, 15, 31, 63, 127, 129, 255, 257, 511, 513, 1023, 1025,
       2047, 2049, 4095, 4097, 8191, 8193]
HEADS = [1, 2, 3, 4, 5, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 128]
HD = [64, 128, 256]
KVH = [1, 2, 4, 8, 16, 32]
ATB = [1, 2, 4, 8, 16, 32, 48, 64, 128]
MOE = [2 ** i for i in range(17)]
VOC7 = [1024, 4096, 16384, 32000, 65536, 128256, 151936]
VOC9 = [1024, 4096, 8192, 16384, 32000, 65536, 128256, 151936, 152064]
B8 = [1, 2, 4, 8, 16, 32, 64, 128]


def model(key, h, inter, heads, kv, hd=128, ql=0, kvl=0, nope=0, rope=64, exp=0, epc=0,
          ei=0, topk=0, tp=(1, 4, 8), ep=(1,)):
    return dict(key=key, h=h, inter=inter, heads=heads, kv=kv, hd=hd, ql=ql, kvl=kvl,
                nope=nope, rope=rope, exp=exp, epc=epc, ei=ei, topk=topk, tp=tp, ep=ep)


GLM = dict(h=6144, inter=12288, heads=64, kv=64, hd=256, ql=2048, kvl=512, nope=192,
           rope=64, exp=256, epc=32, ei=2048, topk=8, tp=(1, 2, 4, 8, 16), ep=(1, 2, 4, 8))
MODELS = {
    "deepseek-ai/DeepSeek-V3": model("deepseekv3", 7168, 18432, 128, 1, 128, 1536, 512, 128,
                                     64, 256, 32, 2048, 8, (1, 2, 4, 8, 16), (1, 2, 4, 8)),
    "Qwen/Qwen3-32B": model("qwen332b", 5120, 25600, 64, 8, tp=(1, 2, 4, 8, 16)),
    "meta-llama/Meta-Llama-3-70B": model("llama70b", 8192, 28672, 64, 8, tp=(1, 4, 8, 16)),
    "zai-org/GLM-5.1": model("glm51", **GLM),
    "zai-org/GLM-5.2": model("glm52", **GLM),
}


def mla(m):
    return m["ql"] > 0 or m["kvl"] > 0


def nk_pairs(ms):
    s = set()
    for m in ms:
        h = m["h"]
        for tp in m["tp"]:
            ht = max(1, h // tp)
            if not mla(m):
                s |= {(ht, h), (h, ht)}
            else:
                q = max(1, m["heads"] * m["hd"] // tp)
                s |= {(m["ql"], h), (q, m["ql"]), (m["kvl"] + m["rope"], h), (q, m["kvl"])}
            if m["inter"] > 0:
                g = max(1, m["inter"] // tp)
                s |= {(g, h), (h, g)}
    return sorted(s)


def prod(*axes):
    if not axes:
        yield ()
        return
    for v in axes[0]:
        for rest in prod(*axes[1:]):
            yield (v,) + rest


def td(fin, fout, cond=lambda t, d: True, tok=TOK, hid=HID):
    return lambda ms, given: [(fin(t, d), fout(t, d)) for t, d in prod(tok, hid) if cond(t, d)]


def gemm(quant):
    def gen(ms, given):
        rows = []
        pairs = nk_pairs(ms) if given else [(n, k) for n, k in prod(NK, NK)]
        for mm in M:
            for n, k in pairs:
                if quant and not (n >= 128 and k >= 128 and n % 32 == 0 and k % 16 == 0):
                    continue
                if quant:
                    ins = [(mm, k), (max(1, n // 32), max(1, k // 16), 16, 32), (n,), (n,)]
                else:
                    ins = [(mm, k), (n, k)]
                rows.append((ins, [(mm, n)]))
        return rows
    return gen


def aten_gemm(layout):
    # the PyTorch op tables' GEMMs (docs/grid.md "PyTorch op tables"): the
    # matmul pattern's M and (N, K) in aten's argument order
    def gen(ms, given):
        pairs = nk_pairs(ms) if given else [(n, k) for n, k in prod(NK, NK)]
        ins = {"mm": lambda mm, n, k: [(mm, k), (k, n)],
               "linear": lambda mm, n, k: [(mm, k), (n, k), ()],
               "addmm": lambda mm, n, k: [(n,), (mm, k), (k, n), (), ()]}[layout]
        return [(ins(mm, n, k), [(mm, n)]) for mm in M for n, k in pairs]
    return gen


def grouped(ms, given):
    out = []
    for m in ms:
        if m["exp"] <= 0:
            continue
        for ep in m["ep"]:
            for tp in m["tp"]:
                hid, ei = max(1, m["h"] // tp), max(1, m["ei"] // tp)
                e = max(1, m["epc"] // ep)
                for t in MOE:
                    out.append(([(t, hid), (e, hid, max(1, ei // 16), 16), (), (e, ei), (), (),
                                 (), (e,), (t,)], [(t, ei)]))
    return out


def dfc(ms, given):
    out = []
    for m in ms:
        if m["exp"] <= 0:
            continue
        es = set()
        for cards in (8, 16, 32, 64):
            if cards > m["exp"]:
                continue
            epc = m["exp"] // cards
            for ep in m["ep"]:
                if ep <= epc and 1 <= max(1, epc // ep) <= 17:
                    es.add(max(1, epc // ep))
        seen = set()
        h, k = m["h"], m["topk"]
        for e in sorted(es):
            for tp in m["tp"]:
                n = max(1, m["ei"] // tp) * 2
                for t in MOE:
                    if t * h * k > 58 * 2 ** 20 or (t, n, e) in seen:
                        continue
                    seen.add((t, n, e))
                    out.append(([(t, h), (e, h, n), (e, n // 2, h), (t, k), (e * n,), (e * h,),
                                 (t, k)], [(t, h), (e,)], {"EP Size": str(m["exp"] // e)}))
    return out


QKV_META = {"Input Data Types": "DT_BF16;DT_BF16", "Input Formats": "ND;ND",
            "Output Data Types": "DT_BF16;DT_BF16;DT_BF16", "Output Formats": "ND;ND;ND"}


def split_qkv(ms, given):
    out, seen = [], set()
    for m in ms:
        if mla(m):
            continue
        for tp in m["tp"]:
            if m["heads"] % tp:
                continue
            if m["kv"] >= tp:
                lkv = m["kv"] // tp
            elif tp % m["kv"] == 0:
                lkv = 1
            else:
                continue
            q, kv = m["heads"] // tp * m["hd"], lkv * m["hd"]
            for t in TOK:
                if (t, q, kv) in seen:
                    continue
                seen.add((t, q, kv))
                out.append(([(t, q + 2 * kv), (m["hd"],)], [(t, q), (t, kv), (t, kv)],
                            dict(QKV_META)))
    return out


SCENES = {
    "qwen332b": ([1, 2, 4, 8], [512, 1024, 2048, 3072, 3592, 4096, 4112, 4608, 5120, 6144],
                 [1, 2, 4, 8, 12, 16, 24, 32],
                 [1024, 2048, 3072, 3593, 4096, 4224, 4352, 4608, 4864, 5120, 5376, 5632]),
    "deepseekv3": ([1, 2, 4, 8], [512, 1024, 2048, 3072, 4096, 4099, 4608, 5120, 6144],
                   [1, 2, 4, 8, 12, 16],
                   [1024, 2048, 3072, 4100, 4096, 4224, 4352, 4608, 4864, 5120, 5376, 5632]),
}
GENERIC = ([1, 2, 4, 8], [256, 512, 1024, 2048, 4096, 8192], [1, 2, 4, 8, 16, 32],
           [512, 1024, 2048, 4096, 8192])


def fia_meta(slots, scene, avg, heads, kvh, sparse, layout, q, kv, bt):
    dts, fms = [], []
    for i, s in enumerate(slots):
        d, f = "DT_UNDEFINED", "NULL"
        if s:
            d, f = {4: ("INT8", "ND"), 5: ("INT64", "ND"), 6: ("INT64", "ND"),
                    14: ("INT32", "ND")}.get(i, ("DT_BF16", "ND"))
        dts.append(d)
        fms.append(f)
    return {
        "Input Data Types": ";".join(dts), "Input Formats": ";".join(fms),
        "Runtime source_profile": scene,
        "Runtime actual_seq_lengths_shape": str(len(q)),
        "Runtime actual_seq_lengths_values": ",".join(map(str, q)),
        "Runtime actual_seq_lengths_kv_shape": str(len(kv)),
        "Runtime actual_seq_lengths_kv_values": ",".join(map(str, kv)),
        "Runtime avg_seq_len": "%.6f" % avg,
        "Runtime block_table_shape": "" if bt is None else "%d,%d" % bt,
        "Runtime block_table_valid_blocks": "" if bt is None else ",".join([str(bt[1])] * bt[0]),
        "Runtime num_heads": str(heads), "Runtime num_key_value_heads": str(kvh),
        "Runtime sparse_mode": str(sparse), "Runtime input_layout": layout,
        "Runtime block_size": "128",
        "Runtime metadata_completeness": "shape_grid_scene_generated",
        "Runtime operator_input_shapes_raw": text(slots),
    }


def dense_pairs(m):
    # (tp, Hq, Hkv) per tp; a repeated (Hq, Hkv) keeps its first tp
    pairs = []
    for tp in m["tp"]:
        if m["heads"] % tp:
            continue
        if m["kv"] >= tp:
            if m["kv"] % tp:
                continue
            hkv = m["kv"] // tp
        elif tp % m["kv"] == 0:
            hkv = 1
        else:
            continue
        if (m["heads"] // tp, hkv) not in [(p[1], p[2]) for p in pairs]:
            pairs.append((tp, m["heads"] // tp, hkv))
    return pairs


def fia(ms, given):
    out, seen = [], set()

    def cum(v):
        return [v * (i + 1) for i in range(len_b)]

    for m in ms:
        pb, ps, db, da = SCENES.get(m["key"], GENERIC)
        if mla(m):
            H, kvl, rope = m["heads"], m["kvl"], m["rope"]
            for decode, (bs, ls) in enumerate(((pb, ps), (db, da))):
                for b in bs:
                    for L in ls:
                        s = 1 if decode else L
                        nb = max(1, math.ceil(L / 128))
                        tb = max(16, b * nb)
                        slots = [()] * 31
                        slots[0] = (b, H, s, kvl)
                        slots[1] = slots[2] = (tb, 1, 128, kvl)
                        if not decode:
                            slots[4] = (2048, 2048)
                        slots[5] = slots[6] = (b,)
                        slots[14] = (b, nb)
                        slots[24] = (b, H, s, rope)
                        slots[25] = (tb, 1, 128, rope)
                        outs = [(H, b, s, kvl)]
                        key = (tuple(slots), tuple(outs))
                        if key in seen:
                            continue
                        seen.add(key)
                        scene = "%s_mla_%s" % (m["key"], "decode" if decode else "prefill")
                        out.append((slots, outs, fia_meta(
                            slots, scene, L, H, 1, 0 if decode else 3, "BNSD_NBSD",
                            [1] * b if decode else [L] * b, [L] * b, (b, nb))))
            continue
        D = m["hd"]
        for tp, hq, hkv in dense_pairs(m):
            for decode, (bs, ls) in enumerate(((pb, ps), (db, da))):
                for b in bs:
                    for L in ls:
                        len_b = b
                        slots = [()] * 31
                        if decode:
                            nb = max(1, math.ceil(L / 128))
                            tb = max(16, b * nb)
                            slots[0] = (b, hq, D)
                            slots[1] = slots[2] = (tb, hkv, 128, D)
                            slots[14] = (b, nb)
                            outs = [(b, hq, D)]
                        else:
                            slots[0] = (b * L, hq, D)
                            slots[1] = slots[2] = (b * L, hkv, D)
                            outs = [(b * L, hq, D)]
                        slots[4] = (2048, 2048)
                        slots[5] = slots[6] = (b,)
                        key = (tuple(slots), tuple(outs))
                        if key in seen:
                            continue
                        seen.add(key)
                        scene = "%s_dense_%s_tp%d" % (m["key"], "decode" if decode else "prefill", tp)
                        out.append((slots, outs, fia_meta(
                            slots, scene, L, hq, hkv, 3, "TND", cum(1) if decode else cum(L),
                            [L] * b if decode else cum(L), (b, nb) if decode else None)))
    return out




def aten_sdpa(ms, given):
    # PyTorch's sdpa in (B, N, S, D): the dense models' FIA scenes, whole-sequence key/value
    out, seen = [], set()
    for m in ms:
        if mla(m):
            continue
        pb, ps, db, da = SCENES.get(m["key"], GENERIC)
        if m["key"] != "qwen332b":   # aten_sdpa's scenes: Qwen3-32B's and the default
            pb, ps, db, da = GENERIC
        D = m["hd"]
        for _tp, hq, hkv in dense_pairs(m):
            for decode, (bs, ls) in enumerate(((pb, ps), (db, da))):
                for b in bs:
                    for L in ls:
                        s = 1 if decode else L
                        ins = [(b, hq, s, D), (b, hkv, L, D), (b, hkv, L, D)]
                        if tuple(ins) in seen:
                            continue
                        seen.add(tuple(ins))
                        out.append((ins, [(b, hq, s, D)]))
    return out


def tmpl(axes, fin, fout, cond=lambda *v: True):
    return lambda ms, given: [(fin(*v), fout(*v)) for v in prod(*axes) if cond(*v)]


def align(x, a):
    return (x + a - 1) // a * a


S = lambda *d: tuple(d)   # noqa: E731
KVRC = lambda t: min(4096, max(16, t * 8))   # noqa: E731
B16 = lambda s: max(16, s * 8)   # noqa: E731

PATTERNS = {
    "matmul": gemm(False),
    "quant_matmul": gemm(True),
    "transpose_batch_matmul": tmpl((HEADS, M, [64, 128, 256, 512], [64, 128, 256, 512, 1024]),
                                   lambda b, m, k, n: [(b, m, k), (b, k, n)],
                                   lambda b, m, k, n: [(m, b, n)]),
    "batch_matmul_nd": tmpl(([1, 2, 4, 8, 16, 32], M, [64, 128, 256, 512, 1024],
                             [64, 128, 256, 512, 1024]),
                            lambda b, m, k, n: [(b, m, k), (b, k, n)],
                            lambda b, m, k, n: [(b, m, n)]),
    "binary": td(lambda t, d: [(t, d), (t, d)], lambda t, d: [(t, d)]),
    "unary": td(lambda t, d: [(t, d)], lambda t, d: [(t, d)]),
    "tensor_move": td(lambda t, d: [(t, d)], lambda t, d: [(t, d)], lambda t, d: t * d >= 262144),
    "rmsnorm": td(lambda t, d: [(t, d), (d,)], lambda t, d: [(t, d), (t, 1)]),
    "add_rmsnorm": td(lambda t, d: [(t, d), (t, d), (d,)], lambda t, d: [(t, d), (t, 1), (t, d)]),
    "add_rmsnorm_bias": td(lambda t, d: [(t, d), (t, d), (d,), (d,)],
                           lambda t, d: [(t, d), (t, 1), (t, d)]),
    "add_rmsnorm_dynamic_quant": td(lambda t, d: [(t, d), (t, d), (d,), (d,)],
                                    lambda t, d: [(t, d), (t, d), (t, d), (t,), (t,)]),
    "quant": td(lambda t, d: [(t, d), (d,), (d,)], lambda t, d: [(t, d)]),
    "dynamic_quant": td(lambda t, d: [(t, d)], lambda t, d: [(t, d), (t,)]),
    "swiglu": td(lambda t, d: [(t, 2 * d)], lambda t, d: [(t, d)]),
    "broadcast_to": td(lambda t, d: [(1, d), (2,)], lambda t, d: [(t, d)]),
    "slice": td(lambda t, d: [(t, d), (2,), (2,), (2,), (2,)], lambda t, d: [(max(1, t // 2), d)]),
    "transpose": td(lambda t, d: [(t, d), (2,)], lambda t, d: [(d, t)]),
    "interleave_rope": tmpl((TOK, HEADS), lambda s, h: [(s, h, 1, 64), (s, 1, 1, 64), (s, 1, 1, 64)],
                            lambda s, h: [(s, h, 1, 64)]),
    "triton_rope": tmpl((TOK, HEADS), lambda t, h: [(t, h, 64), (t, 1, 64), (max(t, 2048), 64)],
                        lambda t, h: [(t, h, 64), (t, 1, 64)]),
    "kv_rmsnorm_rope_cache": tmpl((TOK,), lambda t: [(t, 1, 1, 576), (512,), (t, 1, 1, 64),
                                                     (t, 1, 1, 64), (t,), (KVRC(t), 128, 1, 64),
                                                     (KVRC(t), 128, 1, 512)] + [()] * 5,
                                  lambda t: [(KVRC(t), 128, 1, 64), (KVRC(t), 128, 1, 512),
                                             (t, 1, 1, 64), (t, 1, 1, 512)]),
    "as_strided": tmpl(([1, 2, 4, 8, 16, 32, 64], [1, 4, 8, 16, 32, 64, 128], [64, 128, 256]),
                       lambda b, h, d: [(b * h * d * 2,), (3,), (3,), (1,)],
                       lambda b, h, d: [(b, h, d)]),
    "sort": td(lambda t, d: [(t, d)], lambda t, d: [(t, d), (t, d)],
               hid=[64, 128, 256, 512, 1024, 2048, 4096, 8192]),
    "tile": td(lambda t, d: [(t, d), (2,)], lambda t, d: [(t, 2 * d)],
               hid=[64, 128, 256, 512, 1024, 2048]),
    "concat": td(lambda t, d: [(t, d), (t, d)], lambda t, d: [(t, 2 * d)],
                 hid=[64, 128, 256, 512, 1024, 2048, 4096]),
    "pad": td(lambda t, d: [(t, d), (4,), ()], lambda t, d: [(align(t, 8), d)],
              lambda t, d: t % 8 != 0, tok=PAD),
    "argmax": tmpl((B8, VOC7), lambda b, v: [(b, v), ()], lambda b, v: [(b,)]),
    "topk_top_p": tmpl((B8, VOC7), lambda b, v: [(b, v), (b, v), (b,), (b,)],
                       lambda b, v: [(b, v)]),
    "gather": tmpl((VOC9, HID, TOK), lambda v, d, i: [(v, d), (i,), (1,)],
                   lambda v, d, i: [(i, d)]),
    "gather_v3": tmpl((TOK, HID, TOK), lambda t, d, i: [(t, d), (i,), (1,)],
                      lambda t, d, i: [(i, d)]),
    "index": tmpl((HID, TOK, TOK), lambda d, s, o: [(s, d), (1,), (o,), (1,)],
                  lambda d, s, o: [(o, d)], lambda d, s, o: o <= s),
    "reshape_and_cache": tmpl((TOK, KVH, HD),
                              lambda s, k, d: [(s, k, d), (s, k, d), (B16(s), 128, k, d),
                                               (B16(s), 128, k, d), (s,)],
                              lambda s, k, d: [(B16(s), 128, k, d), (B16(s), 128, k, d)]),
    "paged_cache_load": tmpl((TOK, HD, [1, 2, 4, 8, 16, 32, 64]),
                             lambda t, d, b: [(B16(t), 128, 1, d), (B16(t), 128, 1, 64), (b, d),
                                              (b,), (t, 1, d), (t, 1, 64), (b,)],
                             lambda t, d, b: [(t, 1, d), (t, 1, 64)]),
    "attention_update": tmpl((ATB, HEADS, HD), lambda b, h, d: [(b, h, 1, d)] * 4,
                             lambda b, h, d: [(b, h, 1, d)] * 2),
    "moe_gating_topk": tmpl((TOK, [64, 128, 256], [2, 4, 8]), lambda t, e, k: [(t, e), (), ()],
                            lambda t, e, k: [(t, k), (t, k), (t,)]),
    "grouped_matmul": grouped, "dfc": dfc, "split_qkv": split_qkv, "fia": fia,
    "aten_mm": aten_gemm("mm"), "aten_linear": aten_gemm("linear"), "aten_addmm": aten_gemm("addmm"),
    "aten_bmm": tmpl(([1, 2, 4, 8, 16, 32], M, [64, 128, 256, 512, 1024], [64, 128, 256, 512, 1024]),
                     lambda b, m, k, n: [(b, m, k), (b, k, n)], lambda b, m, k, n: [(b, m, n)]),
    "aten_sdpa": aten_sdpa,
}

ASSIGN = {}
for _p, _ks in {
    "matmul": "MatMulV2 MatMulV3 MatMul BatchMatMulV2", "quant_matmul": "QuantBatchMatmulV3",
    "transpose_batch_matmul": "TransposeBatchMatMul", "batch_matmul_nd": "BatchMatMulNd",
    "binary": "Add AddAiCore Mul MulAiCore Sub SubAiCore Less LessAiCore LogicalAnd "
              "LogicalAndAiCore MaskedFill MaskedFillAiCore Equal FloorDiv FloorMod "
              "GreaterEqual NotEqual RealDiv muls_add_kernel",
    "unary": "Cast CastAiCore ZerosLike Fill Log LogicalNot LogicalNotAiCore Muls Neg "
             "SoftmaxV2 Pack Cumsum LinearIndex ReduceSum",
    "tensor_move": "TensorMove", "rmsnorm": "RmsNorm", "add_rmsnorm": "AddRmsNorm InplaceAddRmsNorm",
    "add_rmsnorm_bias": "AddRmsNormBias",
    "add_rmsnorm_dynamic_quant": "AddRmsNormDynamicQuant AddRmsNormDynamicQuantAiCore",
    "quant": "AscendQuantV2 AscendQuantV2Aicore", "dynamic_quant": "DynamicQuant",
    "swiglu": "SwiGlu", "interleave_rope": "InterleaveRope", "triton_rope": "_triton_rope",
    "split_qkv": "split_qkv_rmsnorm_rope_kernel split_qkv_rmsnorm_rope_kernel_0",
    "kv_rmsnorm_rope_cache": "KvRmsNormRopeCache", "fia": "FusedInferAttentionScore",
    "attention_update": "AttentionUpdate", "gather": "GatherV2 GatherV2AiCore",
    "gather_v3": "GatherV3", "index": "Index", "slice": "Slice SliceAiCore",
    "transpose": "Transpose TransposeAiCore", "as_strided": "AsStrided AsStridedAiCore",
    "broadcast_to": "BroadcastTo", "concat": "ConcatD", "tile": "Tile", "pad": "PadV3 PadV3AiCore",
    "sort": "Sort", "argmax": "ArgMaxV2", "topk_top_p": "ApplyTopKTopPCustom ApplyTopKTopPWithSorted",
    "reshape_and_cache": "ReshapeAndCacheNdKernel reshape_and_cache_200000000",
    "paged_cache_load": "PagedCacheLoadNdKernel", "grouped_matmul": "GroupedMatmul GroupedMatmulSwigluQuant",
    "dfc": "DispatchFFNCombine", "moe_gating_topk": "MoeGatingTopK",
    "aten_mm": "aten.mm aten.matmul", "aten_linear": "aten.linear", "aten_addmm": "aten.addmm",
    "aten_bmm": "aten.bmm",
    "aten_sdpa": "aten._scaled_dot_product_flash_attention aten._scaled_dot_product_flash_attention_for_cpu "
                 "aten._scaled_dot_product_efficient_attention aten.scaled_dot_product_attention",
}.items():
    for _k in _ks.split():
        ASSIGN[_k] = _p

HEADER = ["OP State", "Accelerator Core", "Input Shapes", "Input Data Types", "Input Formats",
          "Output Shapes", "Output Data Types", "Output Formats", "Duration(us)",
          "Profiling Average aiv_time(us)", "Count"]
TEMPLATE = ["dynamic", "AI_VECTOR_CORE", '"3,7"', "DT_BF16", "ND", '"3,7"', "DT_BF16", "ND",
            "11.5", "9.25", "4"]
# Templates whose slots test the reference's slot rules (utils.py
# parse_shape_text / align_shape_slot_count, theory_router.py
# clear_absent_shape_slots): a trailing ';' opens no slot, ';;' keeps an
# empty one, generated shapes are padded to the template's count, and a slot
# whose dtype or format is absent is emptied.
SLOT_TEMPLATES = {
    "Cumsum": ('"3,7;"', "DT_BF16;DT_BF16", "ND;ND"),
    "Fill": ('"3,7;;"', "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND"),
    "DynamicQuant": ('"3,7;;4"', "DT_BF16;DT_BF16;DT_BF16", "ND;ND;NULL"),
    "AddRmsNormDynamicQuant": ('"3,7;3,7;7;7;"', "DT_BF16;DT_BF16;DT_BF16;DT_UNDEFINED;DT_BF16",
                               "ND;ND;ND;ND;ND"),
}


def template_row(k):
    row = list(TEMPLATE)
    if k in SLOT_TEMPLATES:
        row[2], row[3], row[4] = SLOT_TEMPLATES[k]
    return row


def slot_count(cell):
    """Slots of a template shape cell, as parse_shape_text splits it."""
    v = cell.strip()
    if v.startswith('"') and v.endswith('"'):
        v = v[1:-1]
    v = v.strip()
    if not v or v.upper() in ("N/A", "NA", "NULL", "NONE", "UNDEFINED"):
        return 0
    parts, depth, cur = 0, 0, ""
    for ch in v:
        if ch == ";" and depth == 0:
            parts, cur = parts + 1, ""
            continue
        depth = depth + 1 if ch == "(" else max(0, depth - 1) if ch == ")" else depth
        cur += ch
    return parts + (1 if cur else 0)


def fit_slots(shapes, template_cell, dtypes, formats):
    """Pad to the template's slot count, then empty the absent slots."""
    out = list(shapes) + [()] * max(0, slot_count(template_cell) - len(shapes))
    def parts(c):
        c = c.strip().strip('"')
        return [x.strip() for x in c.split(";")] if c else []
    absent = ("", "NULL", "NONE", "UNDEFINED", "DT_UNDEFINED")
    dt, fm = parts(dtypes), parts(formats)
    return [() if (i < len(dt) and dt[i].upper() in absent) or
            (i < len(fm) and fm[i].upper() in absent) else s for i, s in enumerate(out)]


def sort_key(text_):
    """parse_shape_text of the written cell: the trailing empty part goes."""
    parts = text_.split(";") if text_ else []
    if parts and parts[-1] == "":
        parts.pop()
    return tuple(tuple(int(x) for x in p.split(",")) if p else () for p in parts)


RUNTIME = ["Runtime source_profile", "Runtime actual_seq_lengths_shape",
           "Runtime actual_seq_lengths_values", "Runtime actual_seq_lengths_kv_shape",
           "Runtime actual_seq_lengths_kv_values", "Runtime avg_seq_len",
           "Runtime block_table_shape", "Runtime block_table_valid_blocks", "Runtime num_heads",
           "Runtime num_key_value_heads", "Runtime sparse_mode", "Runtime input_layout",
           "Runtime block_size", "Runtime metadata_completeness",
           "Runtime operator_input_shapes_raw"]


def text(slots):
    return ";".join(",".join(map(str, s)) for s in slots)


def write(rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerows(rows)
    return buf.getvalue()


def make_db(d):
    os.makedirs(d, exist_ok=True)
    for k in sorted(ASSIGN) + ["MatMulCommon", "NotAKernel"]:
        with open(os.path.join(d, k + ".csv"), "w", newline="") as f:
            f.write(write([HEADER, template_row(k)]))


def expect(d, ids, gb):
    ms = [MODELS[i] for i in ids] if ids else list(MODELS.values())
    budget = int(gb * 2 ** 30) if gb > 0 else 0
    for k, p in sorted(ASSIGN.items()):
        rows = PATTERNS[p](ms, bool(ids))
        header = list(HEADER) + (RUNTIME if p == "fia" else []) + (["EP Size"] if p == "dfc" else [])
        new, seen = [], set()
        tmpl = dict(zip(HEADER, template_row(k)))
        for r in rows:
            ins, outs, extra = r[0], r[1], (r[2] if len(r) > 2 else {})
            md = lambda c: extra.get(c, tmpl[c])   # noqa: E731
            ins = fit_slots(ins, tmpl["Input Shapes"], md("Input Data Types"), md("Input Formats"))
            outs = fit_slots(outs, tmpl["Output Shapes"], md("Output Data Types"),
                             md("Output Formats"))
            if budget:
                est = sum(math.prod(s) * 2 for s in ins + outs if s)
                if est > budget:
                    continue
            key = (tuple(ins), tuple(outs), extra.get("Input Data Types"), extra.get("EP Size"))
            if key in seen:
                continue
            seen.add(key)
            cells = dict(tmpl)
            cell = lambda sl: '"%s"' % text(sl) if text(sl) else ""   # noqa: E731
            cells.update({"Duration(us)": "0", "Profiling Average aiv_time(us)": "0",
                          "Input Shapes": cell(ins), "Output Shapes": cell(outs)})
            for c in RUNTIME:
                cells[c] = "0"
            cells["EP Size"] = ""
            cells.update(extra)
            new.append((sort_key(text(ins)), [cells[h] for h in header]))
        new.sort(key=lambda x: x[0])
        tmpl_row = template_row(k) + [""] * (len(header) - len(HEADER))
        with open(os.path.join(d, k + ".csv"), "w", newline="") as f:
            f.write(write([header, tmpl_row] + [c for _, c in new]))


def main():
    if sys.argv[1] == "make-db":
        make_db(sys.argv[2])
    elif sys.argv[1] == "counts":
        for p in sorted(PATTERNS):
            print(p, len(PATTERNS[p](list(MODELS.values()), False)))
        for i in MODELS:
            m = [MODELS[i]]
            print(i, "pairs", len(nk_pairs(m)), "fia", len(fia(m, True)), "gmm",
                  len(grouped(m, True)), "dfc", len(dfc(m, True)), "qkv", len(split_qkv(m, True)))
    else:
        ids, gb, a = None, 32.0, sys.argv[3:]
        while a:
            if a[0] == "--models":
                ids = a[1].split(",")
            elif a[0] == "--max-hbm-gb":
                gb = float(a[1])
            a = a[2:]
        expect(sys.argv[2], ids, gb)


if __name__ == "__main__":
    main()
