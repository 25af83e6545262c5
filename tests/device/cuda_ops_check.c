/*
 * GPU correctness check of the CUDA backend (run by tests/device/run.sh on
 * a machine with an NVIDIA GPU; it needs one, so it is not in CTest).
 *
 * Every case is built by the engine from a table-like row (the engine's
 * deterministic inputs), run once on the GPU (prepare, run, download) and
 * compared with the CPU backend's op on the same inputs, or with a naive
 * loop where the CPU backend has no such op (int8 GEMMs).  Each case then
 * takes a few device-timed samples (time_run: the CUDA-graph path) and
 * must get positive times.  At the end the CUPTI kernel report is written
 * into a temporary directory and must hold rows.  Prints one line per case
 * and exits 1 when any case fails, 2 when there is no GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cuda/perfdb_cuda.h"
#include "comm/comm.h"
#include "perfdb/fsio.h"
#include "replay/engine.h"
#include "../unit/backend/cpu_test_ctx.h"

struct tcase {
	const char *op, *in_shapes, *in_dtypes, *out_shapes, *out_dtypes;
	double tol;      /* max |gpu - ref| / max(1, max |ref|) */
	const char *cells;   /* the row's other cells: "column=value|column=value" */
};

static const struct tcase cases[] = {
	/* GEMMs: cuBLASLt against oneDNN (CPU backend) */
	{ "MatMulV2", "32,64;64,48", "DT_BF16;DT_BF16", "32,48", "DT_BF16", 2e-2, NULL },
	{ "MatMulV2", "3,640;512,640", "DT_BF16;DT_BF16", "3,512", "DT_BF16", 2e-2, NULL },   /* (N,K) weight */
	{ "MatMulV2", "1,256;256,128", "DT_FLOAT16;DT_FLOAT16", "1,128", "DT_FLOAT16", 5e-3, NULL },
	{ "MatMulV3", "64,40;64,24", "DT_FLOAT;DT_FLOAT", "40,24", "DT_FLOAT", 1e-3, NULL },  /* A stored (K,M) */
	{ "MatMulCommon", "17,96;96,33", "DT_FLOAT;DT_FLOAT", "17,33", "DT_FLOAT", 1e-3, NULL },
	{ "BatchMatMulV2", "4,16,32;4,32,24", "DT_BF16;DT_BF16", "4,16,24", "DT_BF16", 2e-2, NULL },
	{ "BatchMatMulV2", "4,16,32;4,24,32", "DT_BF16;DT_BF16", "4,16,24", "DT_FLOAT", 2e-2, NULL },
	{ "TransposeBatchMatMul", "16,4,32;4,32,24", "DT_BF16;DT_BF16", "16,4,24", "DT_BF16", 2e-2, NULL },
	{ "MatMulV2", "24,64;48,64", "DT_BF16", "24,48", "DT_BF16", 3e-2, NULL },   /* weight dtype missing: DT_FLOAT */
	{ "TransposeBatchMatMul", "3,10,32;3,32,16", "DT_BF16;DT_BF16", "10,3,16", "DT_BF16", 2e-2, NULL },  /* naive */
	{ "GroupedMatmul", "10,64;4,64,2,16;;4,32;;;;4;10", "DT_BF16", "10,32", "DT_BF16", 3e-2, NULL },  /* naive */
	/* W8A8: INT8 x INT8 per expert, out = acc * scale3[e, n] * per_token_scale8[m] (naive) */
	{ "GroupedMatmul", "12,64;4,64,32;;4,32;;;;4;12", "INT8;INT8;;DT_FLOAT;;;;INT64;DT_FLOAT", "12,32", "DT_BF16",
	  1e-2, NULL },
	/* int8 GEMMs: naive integer reference */
	{ "MatMulV2", "8,64;48,64", "INT8;INT8", "8,48", "INT32", 0, NULL },
	/* fp8 (sm_89+): naive reference on exact inputs (build() writes 0.5, 1, 1.5, -1) */
	{ "MatMulV2", "16,64;32,64", "DT_FLOAT8_E4M3FN;DT_FLOAT8_E4M3FN", "16,32", "DT_BF16", 1e-2, NULL },
	{ "QuantBatchMatmulV3", "8,64;48,64;48", "INT8;INT8;DT_FLOAT", "8,48", "DT_BF16", 1e-2, NULL },
	/* memory-bound: own kernels against the CPU backend */
	{ "Add", "4,1000;1000", "DT_BF16;DT_BF16", "4,1000", "DT_BF16", 1e-2, NULL },
	{ "Add", "8,1024;8,1024", "DT_FLOAT;DT_FLOAT", "8,1024", "DT_FLOAT", 1e-6, NULL },
	{ "Add", "8,1024;8,1024", "DT_FLOAT16;DT_FLOAT16", "8,1024", "DT_FLOAT16", 2e-3, NULL },
	{ "RmsNorm", "8,4096;4096", "DT_BF16;DT_BF16", "8,4096;8,1", "DT_BF16;DT_FLOAT", 2e-2, NULL },
	{ "RmsNorm", "3,100;100", "DT_FLOAT;DT_FLOAT", "3,100", "DT_FLOAT", 1e-5, NULL },
	{ "SoftmaxV2", "5,1000", "DT_FLOAT", "5,1000", "DT_FLOAT", 1e-5, NULL },
	{ "SoftmaxV2", "4,333", "DT_BF16", "4,333", "DT_BF16", 1e-2, NULL },
	{ "SwiGlu", "6,512", "DT_BF16", "6,256", "DT_BF16", 2e-2, NULL },
	{ "SwiGlu", "3,100", "DT_FLOAT16", "3,50", "DT_FLOAT16", 5e-3, NULL },        /* scalar path */
	{ "RmsNorm", "2,64;64", "DT_FLOAT16;DT_FLOAT16", "2,64", "DT_FLOAT16", 5e-3, NULL },  /* 16-byte path */
	{ "GatherV2", "100,64;10", "DT_BF16;INT64", "10,64", "DT_BF16", 0, NULL },
	{ "GatherV2", "50,6;7", "DT_FLOAT;INT32", "7,6", "DT_FLOAT", 0, NULL },
	{ "Transpose", "4,6,8", "DT_BF16", "6,4,8", "DT_BF16", 0, NULL },
	{ "Transpose", "2,3,5,7", "DT_FLOAT", "2,5,3,7", "DT_FLOAT", 0, NULL },
	{ "Transpose", "33,65", "INT8", "65,33", "INT8", 0, NULL },
	{ "TensorMove", "1000,3", "DT_BF16", "1000,3", "DT_BF16", 0, NULL },   /* 6000 bytes: 16-byte units and a tail */
	{ "TensorMove", "64,1024", "DT_FLOAT", "64,1024", "DT_FLOAT", 0, NULL },
	/* the kernels of 2026-12-04: rows held in registers, and their fallbacks past the register bound */
	{ "SoftmaxV2", "3,4096", "DT_BF16", "3,4096", "DT_BF16", 1e-2, NULL },
	{ "SoftmaxV2", "2,16384", "DT_FLOAT16", "2,16384", "DT_FLOAT16", 2e-3, NULL },
	{ "SoftmaxV2", "2,20000", "DT_FLOAT", "2,20000", "DT_FLOAT", 1e-5, NULL },   /* past 4 vectors a thread */
	{ "RmsNorm", "3,5120;5120", "DT_BF16;DT_BF16", "3,5120;3,1", "DT_BF16;DT_FLOAT", 2e-2, NULL },
	{ "RmsNorm", "2,70000;70000", "DT_FLOAT16;DT_FLOAT16", "2,70000", "DT_FLOAT16", 5e-3, NULL },  /* two passes */
	{ "Transpose", "6,10,3", "DT_BF16", "10,6,3", "DT_BF16", 0, NULL },   /* 2-byte units */
	{ "Add", "6,4096;4096", "DT_FLOAT16;DT_FLOAT16", "6,4096", "DT_FLOAT16", 2e-3, NULL },   /* broadcast, 16 bytes */
	{ "MaskedFill", "4,100;100;1", "DT_BF16;BOOL;DT_BF16", "4,100", "DT_BF16", 0, NULL },
	{ "AddRmsNormBias", "8,256;8,256;256;256", "DT_BF16;DT_BF16;DT_BF16;DT_BF16", "8,256;8,1;8,256",
	  "DT_BF16;DT_FLOAT;DT_BF16", 2e-2, NULL },
	{ "Slice", "6,10,8", "DT_FLOAT", "4,7,8", "DT_FLOAT", 0, NULL },
	{ "PadV3", "3,5;4", "DT_BF16;INT64", "4,8", "DT_BF16", 0, NULL },
	{ "Index", "50,4,6;1;1;7", "DT_FLOAT;INT64;INT64;INT64", "7,4,6", "DT_FLOAT", 0, NULL },
	{ "ArgMaxV2", "6,1000", "DT_FLOAT", "6", "INT64", 0, NULL },
	{ "ArgMaxV2", "4,33,5", "DT_BF16", "4,5", "INT32", 0, NULL },   /* bf16 ties: the first maximum */
	/* ScatterNdUpdate: the updated var (distinct rows: N <= V); row bytes 96 (16-byte units) and 20 (4) */
	{ "ScatterNdUpdate", "64,48;10,1;10,48", "DT_BF16;INT64;DT_BF16", "64,48", "DT_BF16", 0, NULL },
	{ "ScatterNdUpdate", "33,5;7,1;7,5", "DT_FLOAT;INT32;DT_FLOAT", "33,5", "DT_FLOAT", 0, NULL },
	/* Sort (CUB): values exact, positions exact too (both sorts are stable; bf16 rows have ties) */
	{ "Sort", "6,1000", "DT_FLOAT", "6,1000;6,1000", "DT_FLOAT;INT64", 0, NULL },
	{ "Sort", "4,333", "DT_BF16", "4,333;4,333", "DT_BF16;INT32", 0, NULL },
	{ "Sort", "3,100", "DT_FLOAT16", "3,100", "DT_FLOAT16", 0, NULL },
	/* attention (own kernel) against a naive loop */
	{ "FusedInferAttentionScore", "2,8,128;6,2,32,128;6,2,32,128", "DT_BF16;DT_BF16;DT_BF16", "2,8,128", "DT_BF16",
	  2e-2, "Runtime input_layout=TND|Runtime num_heads=8|Runtime num_key_value_heads=2|Runtime block_size=32|"
		"Runtime sparse_mode=3|Runtime actual_seq_lengths_values=1,2|Runtime actual_seq_lengths_kv_values=70,90" },
	{ "FusedInferAttentionScore", "40,4,64;40,2,64;40,2,64", "DT_FLOAT16;DT_FLOAT16;DT_FLOAT16", "40,4,64",
	  "DT_FLOAT16", 5e-3, "Runtime input_layout=TND|Runtime sparse_mode=3|Runtime actual_seq_lengths_values=16,40|"
		"Runtime actual_seq_lengths_kv_values=16,40" },
	{ "FusedInferAttentionScore", "5,4,32;9,4,32;9,4,32", "DT_FLOAT;DT_FLOAT;DT_FLOAT", "5,4,32", "DT_FLOAT", 1e-5,
	  NULL },
};

/* The case's cells ("a=b|c=d"), for perfdb_case_cell. */
static const char *cell_of(const void *ctx, const char *column)
{
	static char v[256];
	const char *s = ctx;
	size_t cl = strlen(column);
	while (s && *s) {
		const char *end = strchr(s, '|');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		if (len > cl && strncmp(s, column, cl) == 0 && s[cl] == '=') {
			snprintf(v, sizeof(v), "%.*s", (int)(len - cl - 1), s + cl + 1);
			return v;
		}
		s = end ? end + 1 : NULL;
	}
	return NULL;
}

static int ints(const char *s, int *v, int cap)
{
	int n = 0;
	while (s && *s && n < cap) {
		v[n++] = (int)strtol(s, (char **)&s, 10);
		while (*s == ',')
			s++;
	}
	return n;
}

static double val(const struct perfdb_tensor *t, size_t i);

/*
 * Naive attention, TND (docs/cuda.md): q lengths cumulative; key lengths
 * cumulative for contiguous keys, per sequence for paged ones (sequence b
 * uses blocks b*max_blocks + j, modulo the pool); sparse 3 = causal
 * right-down, 0 = none; scale 1/sqrt(D).
 */
static void ref_attention(const struct perfdb_op_case *c, double *ref)
{
	const struct perfdb_tensor *q = &c->in[0], *k = &c->in[1], *v = &c->in[2];
	int T = (int)q->dims[0], N = (int)q->dims[1], D = (int)q->dims[2], paged = k->ndims == 4;
	int KVN = (int)k->dims[1], BS = paged ? (int)k->dims[2] : 0, NB = (int)k->dims[0];
	int qc[64], kc[64];
	int nq = ints(perfdb_case_cell(c, "Runtime actual_seq_lengths_values"), qc, 64);
	int nk = ints(perfdb_case_cell(c, "Runtime actual_seq_lengths_kv_values"), kc, 64);
	if (nq == 0) {
		nq = nk = 1;
		qc[0] = T;
		kc[0] = paged ? NB * BS : (int)k->dims[0];
	}
	const char *sm = perfdb_case_cell(c, "Runtime sparse_mode");
	int causal = sm ? atoi(sm) == 3 : 0;
	int maxb = 0;
	for (int b = 0; paged && b < nk; b++)
		maxb = (kc[b] + BS - 1) / BS > maxb ? (kc[b] + BS - 1) / BS : maxb;
	double *sc = malloc(sizeof(double) * 100000);
	for (int b = 0; b < nq; b++) {
		int q0 = b ? qc[b - 1] : 0, lq = qc[b] - q0;
		int k0 = paged ? 0 : (b ? kc[b - 1] : 0), lk = paged ? kc[b] : kc[b] - k0;
		for (int qi = 0; qi < lq; qi++)
			for (int h = 0; h < N; h++) {
				int kvh = h / (N / KVN), jend = causal ? (qi + lk - lq + 1 < lk ? qi + lk - lq + 1 : lk) : lk;
				double mx = -1e300, sum = 0;
				for (int j = 0; j < jend; j++) {
					long row = paged ? ((long)(((long)b * maxb + j / BS) % NB) * KVN + kvh) * BS + j % BS
							 : (long)(k0 + j) * KVN + kvh;
					double d = 0;
					for (int x = 0; x < D; x++)
						d += val(q, (size_t)(((long)(q0 + qi) * N + h) * D + x)) * val(k, (size_t)(row * D + x));
					sc[j] = d / sqrt((double)D);
					mx = sc[j] > mx ? sc[j] : mx;
				}
				for (int j = 0; j < jend; j++)
					sum += (sc[j] = exp(sc[j] - mx));
				for (int x = 0; x < D; x++) {
					double o = 0;
					for (int j = 0; j < jend; j++) {
						long row = paged ? ((long)(((long)b * maxb + j / BS) % NB) * KVN + kvh) * BS + j % BS
								 : (long)(k0 + j) * KVN + kvh;
						o += sc[j] * val(v, (size_t)(row * D + x));
					}
					ref[((long)(q0 + qi) * N + h) * D + x] = sum > 0 ? o / sum : 0;
				}
			}
	}
	free(sc);
}

static double val(const struct perfdb_tensor *t, size_t i)
{
	switch (t->dtype) {
	case PERFDB_DTYPE_FLOAT: return ((const float *)t->data)[i];
	case PERFDB_DTYPE_BF16: return perfdb_bf16_to_float(((const uint16_t *)t->data)[i]);
	case PERFDB_DTYPE_FLOAT16: return perfdb_fp16_to_float(((const uint16_t *)t->data)[i]);
	case PERFDB_DTYPE_INT8: return ((const int8_t *)t->data)[i];
	case PERFDB_DTYPE_FLOAT8_E4M3FN: {
		uint8_t b = ((const uint8_t *)t->data)[i];
		int e = (b >> 3) & 15, m = b & 7;
		double v = e ? (1 + m / 8.0) * ldexp(1, e - 7) : m / 8.0 * ldexp(1, -6);
		return b & 0x80 ? -v : v;
	}
	case PERFDB_DTYPE_INT32: return ((const int32_t *)t->data)[i];
	case PERFDB_DTYPE_INT64: return (double)((const int64_t *)t->data)[i];
	default: return ((const uint8_t *)t->data)[i];
	}
}

/* Naive 2-D GEMM (int8, fp8, fp16, mixed): out (M,N) = x1 (M,K) · x2 (N,K)^T or (K,N) [· scale]. */
static void ref_int8(const struct perfdb_op_case *c, double *ref)
{
	const struct perfdb_tensor *a = &c->in[0], *b = &c->in[1];
	int64_t m = c->out[0].dims[0], n = c->out[0].dims[1], k = a->dims[1];
	int bt = b->dims[0] == n && b->dims[1] == k;
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double s = 0;
			for (int64_t p = 0; p < k; p++)
				s += val(a, (size_t)(i * k + p)) * val(b, (size_t)(bt ? j * k + p : p * n + j));
			if (strcmp(c->op, "QuantBatchMatmulV3") == 0 && c->nin > 2 && c->in[2].present)
				s *= val(&c->in[2], c->in[2].numel == n ? (size_t)j : 0);
			ref[i * n + j] = s;
		}
}

static int build(const struct tcase *t, struct perfdb_engine_pool *pool, struct perfdb_op_case *c,
		 struct perfdb_err *err)
{
	PERFDB_TRY(perfdb_engine_build_case(t->op, t->in_shapes, t->in_dtypes, "", t->out_shapes, t->out_dtypes, "",
					    c, err));
	c->cell = t->cells ? cell_of : NULL;
	c->cell_ctx = t->cells;
	PERFDB_TRY(perfdb_engine_alloc_case(pool, c, 42, err));
	/* fp8 inputs: exact values instead of the engine's small integers (tiny subnormals in E4M3) */
	static const uint8_t e4m3[4] = { 0x30, 0x38, 0x3c, 0xb8 };   /* 0.5, 1, 1.5, -1 */
	for (size_t i = 0; i < c->nin; i++)
		if (c->in[i].present && c->in[i].dtype == PERFDB_DTYPE_FLOAT8_E4M3FN)
			for (size_t j = 0; j < (size_t)c->in[i].numel; j++)
				((uint8_t *)c->in[i].data)[j] = e4m3[(((uint32_t)j * 0x9E3779B1u) >> 13 ^ i) % 4];
	return 0;
}

/*
 * Output oi's reference values (n of them) into ref: CPU backend or naive
 * (oi > 0: CPU backend only).  ScatterNdUpdate's result is var itself, which
 * the CPU backend updates in place.
 */
static int reference(const struct tcase *t, size_t oi, double *ref, size_t n, struct perfdb_err *err)
{
	struct perfdb_engine_pool pool = { 0 };
	struct perfdb_op_case c;
	int rc = build(t, &pool, &c, err);
	if (rc == 0 && strcmp(t->op, "TransposeBatchMatMul") == 0 && c.in[0].dims[0] == c.out[0].dims[1]) {
		/* x (B,M,K) · w (B,K,N) -> (M,B,N) */
		int64_t B = c.in[0].dims[0], M = c.in[0].dims[1], K = c.in[0].dims[2], N = c.out[0].dims[2];
		for (int64_t b = 0; b < B; b++)
			for (int64_t m = 0; m < M; m++)
				for (int64_t n2 = 0; n2 < N; n2++) {
					double acc = 0;
					for (int64_t k = 0; k < K; k++)
						acc += val(&c.in[0], (size_t)((b * M + m) * K + k)) *
						       val(&c.in[1], (size_t)((b * K + k) * N + n2));
					ref[(m * B + b) * N + n2] = acc;
				}
	} else if (rc == 0 && strcmp(t->op, "GroupedMatmul") == 0) {
		/*
		 * expert e takes M/E rows of x (M,K), one more for e < M % E (the
		 * remainder to the first experts), times w[e] (K,N); W8A8: · scale3[e,n] · pts8[m]
		 */
		int64_t M = c.in[0].dims[0], K = c.in[0].dims[1], N = c.out[0].dims[1], E = c.in[1].dims[0];
		int i8 = c.in[0].dtype == PERFDB_DTYPE_INT8;
		const struct perfdb_tensor *sc = i8 && c.nin > 3 && c.in[3].present && c.in[3].numel == E * N ? &c.in[3]
														 : NULL;
		const struct perfdb_tensor *pt = i8 && c.nin > 8 && c.in[8].present && c.in[8].numel == M ? &c.in[8] : NULL;
		for (int64_t e = 0, m0 = 0; e < E; m0 += M / E + (e < M % E), e++)
			for (int64_t m = m0; m < m0 + M / E + (e < M % E); m++)
				for (int64_t n2 = 0; n2 < N; n2++) {
					double acc = 0;
					for (int64_t k = 0; k < K; k++)
						acc += val(&c.in[0], (size_t)(m * K + k)) *
						       val(&c.in[1], (size_t)((e * K + k) * N + n2));
					if (sc)
						acc *= val(sc, (size_t)(e * N + n2));
					if (pt)
						acc *= val(pt, (size_t)m);
					ref[m * N + n2] = acc;
				}
	} else if (rc == 0 && strcmp(t->op, "FusedInferAttentionScore") == 0) {
		ref_attention(&c, ref);
	} else if (rc == 0 && ((c.in[0].dtype == PERFDB_DTYPE_INT8 && strcmp(t->op, "Transpose") != 0) ||
				c.in[0].dtype == PERFDB_DTYPE_FLOAT8_E4M3FN ||
				(strncmp(t->op, "MatMul", 6) == 0 && (c.in[0].dtype == PERFDB_DTYPE_FLOAT16 ||
								       c.in[0].dtype != c.in[1].dtype)))) {
		/* naive: oneDNN has no fp16 or mixed-dtype matmul on every CPU */
		ref_int8(&c, ref);
	} else if (rc == 0) {
		const struct perfdb_op_impl *ci = perfdb_backend_cpu.find_op(t->op);
		if (!ci) {
			rc = perfdb_err_set(err, PERFDB_EINVAL, "no CPU reference for %s", t->op);
		} else {
			rc = perfdb_case_check(perfdb_opdef_get(ci->name), ci, &c, err);
			if (rc == 0 && ci->prepare)
				rc = ci->prepare(with_ctx(&c), err);
			if (rc == 0)
				rc = ci->run(&c, err);
			if (ci->release)
				ci->release(&c);
			const struct perfdb_tensor *src = strcmp(t->op, "ScatterNdUpdate") == 0 ? &c.in[0] : &c.out[oi];
			for (size_t i = 0; rc == 0 && i < n; i++)
				ref[i] = val(src, i);
		}
	}
	perfdb_engine_pool_release(&pool);
	return rc;
}

static int run_case(const struct tcase *t, struct perfdb_err *err, double *worst, double *us)
{
	const struct perfdb_backend_i *be = &perfdb_backend_cuda;
	const struct perfdb_op_impl *impl = be->find_op(t->op);
	if (!impl)
		return perfdb_err_set(err, PERFDB_EINVAL, "not a cuda op");
	struct perfdb_engine_pool pool = { 0 };
	struct perfdb_op_case c;
	double *ref = NULL;
	int rc = build(t, &pool, &c, err);
	c.line = 2;
	if (rc == 0)
		rc = perfdb_case_check(perfdb_opdef_get(impl->name), impl, &c, err);
	if (rc == 0)
		rc = impl->prepare(&c, err);
	if (rc == 0)
		rc = impl->run(&c, err);
	if (rc == 0)
		rc = perfdb_cuda_download(&c, err);
	size_t n = (size_t)c.out[0].numel;
	if (rc == 0 && !(ref = calloc(n ? n : 1, sizeof(double))))
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	if (rc == 0)
		rc = reference(t, 0, ref, n, err);
	if (rc == 0) {
		double maxref = 1, maxerr = 0;
		for (size_t i = 0; i < n; i++) {
			maxref = fmax(maxref, fabs(ref[i]));
			double g = val(&c.out[0], i);
			maxerr = isfinite(g) ? fmax(maxerr, fabs(g - ref[i])) : INFINITY;
		}
		*worst = maxerr / maxref;
		if (!(*worst <= t->tol))
			rc = perfdb_err_set(err, PERFDB_EINVAL, "max error %.3g (relative to %.3g) over tolerance %.3g",
					    maxerr, maxref, t->tol);
	}
	/* Sort's positions: the same as the CPU backend's, exactly */
	if (rc == 0 && strcmp(t->op, "Sort") == 0 && c.nout > 1 && c.out[1].present) {
		size_t n1 = (size_t)c.out[1].numel, bad = 0;
		double *ref1 = calloc(n1 ? n1 : 1, sizeof(double));
		rc = ref1 ? reference(t, 1, ref1, n1, err) : perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		for (size_t i = 0; rc == 0 && i < n1; i++)
			bad += val(&c.out[1], i) != ref1[i];
		if (rc == 0 && bad)
			rc = perfdb_err_set(err, PERFDB_EINVAL, "%zu of %zu positions differ from the CPU backend's", bad, n1);
		free(ref1);
	}
	/* the timed path: a few device-timed samples, all positive */
	for (int s = 0; rc == 0 && s < 3; s++) {
		rc = be->time_run(impl, &c, perfdb_opdef_get(impl->name)->memory_bound, us, err);
		if (rc == 0 && !(*us > 0))
			rc = perfdb_err_set(err, PERFDB_EINVAL, "sample %d is %g us", s, *us);
	}
	if (c.priv)
		impl->release(&c);
	free(ref);
	perfdb_engine_pool_release(&pool);
	return rc;
}

int main(void)
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	void *ctx = NULL;
	if (perfdb_backend_cuda.open(1, perfdb_pick_gpu(perfdb_backend_cuda.device_count(&err)), &ctx, &err) < 0) {
		fprintf(stderr, "cuda_ops_check: %s\n", err.msg);
		return 2;
	}
	int failed = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *t = &cases[i];
		double worst = 0, us = 0;
		perfdb_err_clear(&err);
		int rc = run_case(t, &err, &worst, &us);
		printf("%-4s %-20s in %-18s %-22s out %-10s %-18s err %.2e  %8.2f us  %s%s\n", rc == 0 ? "ok" : "FAIL",
		       t->op, t->in_shapes, t->in_dtypes, t->out_shapes, t->out_dtypes, worst, us,
		       perfdb_cuda_kernel_used(t->op) ? perfdb_cuda_kernel_used(t->op) : "?", rc == 0 ? "" : "");
		if (rc < 0) {
			printf("     %s\n", err.msg);
			failed++;
		}
	}
	/* the CUPTI report of the cases above */
	char dir[] = "/tmp/perfdb-cuda-check.XXXXXX", *kpath = NULL;
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	perfdb_err_clear(&err);
	if (perfdb_backend_cuda.write_reports(ctx, dir, "check", &kpath, &err) < 0) {
		printf("FAIL cupti report: %s\n", err.msg);
		failed++;
	} else if (!kpath) {
		struct perfdb_strbuf d = PERFDB_STRBUF_INIT;
		perfdb_backend_cuda.describe(ctx, &d);
		printf("FAIL cupti report: no kernel rows (%s)\n", strstr(d.buf, "cupti=") ? strstr(d.buf, "cupti=") : "?");
		perfdb_strbuf_release(&d);
		failed++;
	} else {
		struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
		perfdb_file_read_all(kpath, &b, &err);
		size_t lines = 0;
		for (size_t i = 0; i < b.len; i++)
			lines += b.buf[i] == '\n';
		printf("ok   cupti report %s: %zu kernel rows\n", kpath, lines ? lines - 1 : 0);
		fputs(b.buf ? b.buf : "", stdout);
		perfdb_strbuf_release(&b);
		free(kpath);
	}
	printf("cuda_ops_check: %zu cases, %d failed\n", sizeof(cases) / sizeof(cases[0]), failed);
	return failed ? 1 : 0;
}
