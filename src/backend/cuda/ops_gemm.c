/*
 * CUDA backend, GEMMs through cuBLASLt: the MatMul family (MatMulV2/V3,
 * MatMulCommon, BatchMatMulV2, TransposeBatchMatMul) and QuantBatchMatmulV3
 * (int8 x int8 -> int32, then the backend's dequantisation kernel).
 *
 * Rows are planned by the operator layer, as on every backend (src/ops/gemm_plan.c, docs/ops.md):
 * one strided batched GEMM C[b] = A[b]·B[b] over the stored buffers.
 * cuBLASLt is column-major, so the row-major C (M,N) = A·B is computed as
 * C^T (N,M) = B^T·A^T over the same memory: cuBLASLt's A is our B and its B
 * is our A, and an operand stored transposed becomes a transpose flag, never
 * a copy.  The algorithm (cublasLtMatmulAlgoGetHeuristic's first answer for
 * the shared 64 MiB workspace) is chosen once per row in setup.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "perfdb/half.h"


struct lt_state {
	struct perfdb_gemm g;
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, lc;   /* cuBLASLt's A (our B), B (our A), C/D */
	cublasLtMatmulAlgo_t algo;
	size_t ws;
	int int8;                             /* INT8 x INT8 -> INT32 (integer alpha, beta) */
	void *acc;                            /* int8: (M,N) int32 accumulator */
	const float *scale;                   /* int8: per-channel fp32 scale (device), or NULL */
	int64_t nscale;
	float *scale_f32;                     /* int8: scale converted to fp32 (owned) */
	void *b_conv;                         /* input 1 in input 0's dtype (owned), or NULL */
};

/*
 * Float GEMMs compute in input 0's dtype: a weight of another float dtype
 * (tables often record one dtype for all slots, the rest defaulting to
 * DT_FLOAT) is converted to it once in setup, outside the timed loop.
 */
static int float_gemm_dtypes(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	enum perfdb_dtype a = c->in[0].dtype, b = c->in[1].dtype, o = c->out[0].dtype;
	if (cu_float_dt(a) < 0 || cu_float_dt(b) < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: inputs %s x %s not supported (bf16, fp16, fp32, "
				      "or INT8 pairs)", c->op, perfdb_dtype_name(a), perfdb_dtype_name(b));
	if (!(o == a || o == PERFDB_DTYPE_FLOAT))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output %s for %s inputs not supported", c->op,
				      perfdb_dtype_name(o), perfdb_dtype_name(a));
	return 0;
}

static int is_fp8(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_FLOAT8_E4M3FN || d == PERFDB_DTYPE_FLOAT8_E5M2;
}

/*
 * fp8 GEMMs (Hopper and Ada): E4M3/E5M2 inputs, not both E5M2, fp32
 * compute, a bf16/fp16/fp32 output; cuBLASLt's fp8 kernels take only its
 * "TN" form, which here is A row-major and the weight stored (N,K).
 */
static int fp8_gemm(const struct perfdb_op_case *c, const struct perfdb_gemm *g, struct perfdb_err *err)
{
	enum perfdb_dtype a = c->in[0].dtype, b = c->in[1].dtype, o = c->out[0].dtype;
	if (!is_fp8(a) || !is_fp8(b) || (a == PERFDB_DTYPE_FLOAT8_E5M2 && b == PERFDB_DTYPE_FLOAT8_E5M2))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: fp8 inputs %s x %s not supported (E4M3 x E4M3/E5M2)",
				      c->op, perfdb_dtype_name(a), perfdb_dtype_name(b));
	if (cu_float_dt(o) < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: fp8 GEMM output %s not supported (bf16, fp16, fp32)", c->op,
				      perfdb_dtype_name(o));
	if (!g->btrans || g->sa[2] != 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: fp8 GEMMs need A row-major and the weight stored (N,K) "
				      "(cuBLASLt's TN form)", c->op);
	return 0;
}

static int int8_pair(const struct perfdb_op_case *c)
{
	return c->in[0].dtype == PERFDB_DTYPE_INT8 && c->in[1].dtype == PERFDB_DTYPE_INT8;
}

static int plan(const struct perfdb_op_case *c, struct perfdb_gemm *g, struct perfdb_err *err)
{
	memset(g, 0, sizeof(*g));
	if (c->nin < 2 || c->nout < 1 || !c->in[0].present || !c->in[1].present || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs 2 inputs and 1 output", c->op);
	int f8 = is_fp8(c->in[0].dtype) || is_fp8(c->in[1].dtype);
	if (int8_pair(c)) {
		if (c->out[0].dtype != PERFDB_DTYPE_INT32)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: INT8 inputs need an INT32 output", c->op);
	} else if (!f8) {
		PERFDB_TRY(float_gemm_dtypes(c, err));
	}
	PERFDB_TRY(perfdb_gemm_plan(c, g, err));   /* the layouts every backend plans (gemm_plan.c) */
	return f8 ? fp8_gemm(c, g, err) : 0;
}

static int mm_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_gemm g;
	return plan(c, &g, err);
}

static cudaDataType_t cuda_type(enum perfdb_dtype d)
{
	switch (d) {
	case PERFDB_DTYPE_BF16:
		return CUDA_R_16BF;
	case PERFDB_DTYPE_FLOAT16:
		return CUDA_R_16F;
	case PERFDB_DTYPE_INT8:
		return CUDA_R_8I;
	case PERFDB_DTYPE_INT32:
		return CUDA_R_32I;
	case PERFDB_DTYPE_FLOAT8_E4M3FN:
		return CUDA_R_8F_E4M3;
	case PERFDB_DTYPE_FLOAT8_E5M2:
		return CUDA_R_8F_E5M2;
	default:
		return CUDA_R_32F;
	}
}

/*
 * A cuBLASLt layout for a logical (R, C) operand with strides (sR, sC):
 * stored row-major (sC == 1) it is the column-major (C, R) matrix, used
 * transposed; else (sR == 1) it is column-major (R, C) as is.  want_rows x
 * want_cols is what cuBLASLt must see after op(); *op tells it.
 */
static int layout(cublasLtMatrixLayout_t *l, cudaDataType_t t, int64_t rows, int64_t cols, int64_t s_r,
		  int64_t s_c, int64_t bt, int64_t sbatch, cublasOperation_t *op, struct perfdb_err *err)
{
	/* cuBLASLt's view of the logical (rows, cols) matrix, column-major with ld */
	/* a single column or row has a free leading dimension: keep it valid (>= the rows) */
	if (s_r == 1) {
		int64_t ld = cols == 1 && s_c < rows ? rows : s_c;
		LT_TRY(err, cublasLtMatrixLayoutCreate(l, t, (uint64_t)rows, (uint64_t)cols, ld));
		*op = CUBLAS_OP_N;
	} else {
		int64_t ld = rows == 1 && s_r < cols ? cols : s_r;
		LT_TRY(err, cublasLtMatrixLayoutCreate(l, t, (uint64_t)cols, (uint64_t)rows, ld));
		*op = CUBLAS_OP_T;
	}
	if (bt > 1) {
		int32_t n = (int32_t)bt;
		LT_TRY(err, cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &n, sizeof(n)));
		LT_TRY(err, cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sbatch,
							     sizeof(sbatch)));
	}
	return 0;
}

static void lt_teardown(struct cu_case *k)
{
	struct lt_state *s = k->state;
	if (!s)
		return;
	if (s->desc)
		cublasLtMatmulDescDestroy(s->desc);
	if (s->la)
		cublasLtMatrixLayoutDestroy(s->la);
	if (s->lb)
		cublasLtMatrixLayoutDestroy(s->lb);
	if (s->lc)
		cublasLtMatrixLayoutDestroy(s->lc);
	cudaFree(s->acc);
	cudaFree(s->scale_f32);
	cudaFree(s->b_conv);
	free(s);
	k->state = NULL;
}

/*
 * The descriptors and the algorithm of g with element types ab (A, B) and
 * cd (C, D).  In cuBLASLt's terms: D (N,M) = op(Ablt) (N,K) · op(Bblt) (K,M),
 * Ablt = our B seen as its transpose (K,N)^T, Bblt = our A as (M,K)^T.
 */
static int lt_plan(struct lt_state *s, cudaDataType_t ab, cudaDataType_t cd, struct perfdb_err *err)
{
	const struct perfdb_gemm *g = &s->g;
	int i8 = ab == CUDA_R_8I;
	s->int8 = i8;
	cublasComputeType_t ct = i8 ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F;
	cudaDataType_t st = i8 ? CUDA_R_32I : CUDA_R_32F;
	LT_TRY(err, cublasLtMatmulDescCreate(&s->desc, ct, st));
	cublasOperation_t opa, opb, opc;
	/* our B^T: logical (N, K) with strides (sb[2], sb[1]) */
	PERFDB_TRY(layout(&s->la, ab, g->n, g->k, g->sb[2], g->sb[1], g->bt, g->sb[0], &opa, err));
	/* our A^T: logical (K, M) with strides (sa[2], sa[1]) */
	PERFDB_TRY(layout(&s->lb, ab, g->k, g->m, g->sa[2], g->sa[1], g->bt, g->sa[0], &opb, err));
	/* our C^T: logical (N, M), strides (sc[2] = 1, sc[1]): column-major as is */
	PERFDB_TRY(layout(&s->lc, cd, g->n, g->m, g->sc[2], g->sc[1], g->bt, g->sc[0], &opc, err));
	if (opc != CUBLAS_OP_N)
		return perfdb_err_set(err, PERFDB_EINVAL, "output is not row-major");
	LT_TRY(err, cublasLtMatmulDescSetAttribute(s->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)));
	LT_TRY(err, cublasLtMatmulDescSetAttribute(s->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)));
	cublasLtMatmulPreference_t pref = NULL;
	LT_TRY(err, cublasLtMatmulPreferenceCreate(&pref));
	size_t ws = cu.lt_ws_bytes;
	cublasStatus_t ps = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
								  sizeof(ws));
	cublasLtMatmulHeuristicResult_t h;
	int nres = 0;
	memset(&h, 0, sizeof(h));
	if (ps == CUBLAS_STATUS_SUCCESS)
		ps = cublasLtMatmulAlgoGetHeuristic(cu.lt, s->desc, s->la, s->lb, s->lc, s->lc, pref, 1, &h, &nres);
	cublasLtMatmulPreferenceDestroy(pref);
	PERFDB_TRY(cu_lt_check(ps, "cublasLtMatmulAlgoGetHeuristic", err));
	if (nres < 1 || h.state != CUBLAS_STATUS_SUCCESS)
		return perfdb_err_set(err, PERFDB_EINVAL, "cuBLASLt has no algorithm for this GEMM (M=%lld N=%lld K=%lld "
				      "batch=%lld)", (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->bt);
	s->algo = h.algo;
	s->ws = h.workspaceSize;
	return 0;
}

static int mm_setup(struct perfdb_op_case *c, struct cu_case *k, struct perfdb_err *err)
{
	struct lt_state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	k->state = s;
	PERFDB_TRY(plan(c, &s->g, err));
	if (is_fp8(c->in[0].dtype) && cu.prop.major * 10 + cu.prop.minor < 89)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: fp8 GEMMs need sm_89 or newer (this GPU is sm_%d%d)", c->op,
				      cu.prop.major, cu.prop.minor);
	if (c->in[1].dtype != c->in[0].dtype && cu_float_dt(c->in[0].dtype) >= 0) {
		size_t n = (size_t)c->in[1].numel;
		CU_TRY(err, cudaMalloc(&s->b_conv, perfdb_dtype_bytes(c->in[0].dtype, n ? n : 1)));
		CU_TRY(err, cuk_convert(k->din[1], cu_float_dt(c->in[1].dtype), s->b_conv, cu_float_dt(c->in[0].dtype),
					(int64_t)n, cu.stream));
		CU_TRY(err, cudaStreamSynchronize(cu.stream));
	}
	return lt_plan(s, cuda_type(c->in[0].dtype), cuda_type(c->out[0].dtype), err);
}

static int lt_enqueue(struct lt_state *s, const void *a, const void *b, void *d, cudaStream_t st,
		      struct perfdb_err *err)
{
	float f1 = 1.0f, f0 = 0.0f;
	int32_t i1 = 1, i0 = 0;
	int i8 = s->int8;
	const void *alpha = i8 ? (const void *)&i1 : (const void *)&f1;
	const void *beta = i8 ? (const void *)&i0 : (const void *)&f0;
	/* cuBLASLt's A is our B, its B our A (see the file comment) */
	LT_TRY(err, cublasLtMatmul(cu.lt, s->desc, alpha, b, s->la, a, s->lb, beta, d, s->lc, d, s->lc, &s->algo,
				   cu.lt_ws, s->ws, st));
	return 0;
}

static int mm_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t st, struct perfdb_err *err)
{
	(void)c;
	struct lt_state *s = k->state;
	return lt_enqueue(s, k->din[0], s->b_conv ? s->b_conv : k->din[1], k->dout[0], st, err);
}

/* ---- QuantBatchMatmulV3 --------------------------------------------------- */

/*
 * in0 x1 (M,K) INT8, in1 x2 (K,N) or (N,K) INT8, in2 scale (N or 1; fp32,
 * bf16 or fp16, optional), out0 (M,N) bf16/fp16/fp32 = (x1·x2) · scale.
 * Other slots (offset, bias, pertoken scale) are not applied.
 */
static int qbmm_plan(const struct perfdb_op_case *c, struct perfdb_gemm *g, struct perfdb_err *err)
{
	memset(g, 0, sizeof(*g));
	if (c->nin < 2 || c->nout < 1 || !c->in[0].present || !c->in[1].present || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs inputs x1, x2 and an output", c->op);
	if (!int8_pair(c))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: x1 %s, x2 %s: INT8 x INT8 only", c->op,
				      perfdb_dtype_name(c->in[0].dtype), perfdb_dtype_name(c->in[1].dtype));
	if (cu_float_dt(c->out[0].dtype) < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output %s not supported (bf16, fp16, fp32)", c->op,
				      perfdb_dtype_name(c->out[0].dtype));
	if (c->nin > 2 && c->in[2].present && cu_float_dt(c->in[2].dtype) < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: scale %s not supported", c->op,
				      perfdb_dtype_name(c->in[2].dtype));
	return perfdb_gemm_plan_2d(c, g, err);
}

static int qbmm_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_gemm g;
	return qbmm_plan(c, &g, err);
}

static int qbmm_setup(struct perfdb_op_case *c, struct cu_case *k, struct perfdb_err *err)
{
	struct lt_state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	k->state = s;
	PERFDB_TRY(qbmm_plan(c, &s->g, err));
	CU_TRY(err, cudaMalloc(&s->acc, (size_t)(s->g.m * s->g.n) * sizeof(int32_t) + 4));
	if (c->nin > 2 && c->in[2].present && c->in[2].numel > 0) {
		/* the scale as fp32 once, outside the timed loop (an inference engine keeps it so) */
		const struct perfdb_tensor *t = &c->in[2];
		s->nscale = t->numel == s->g.n ? t->numel : 1;
		float *h = malloc((size_t)s->nscale * sizeof(float));
		if (!h)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		for (int64_t i = 0; i < s->nscale; i++)
			h[i] = perfdb_float_elem(t->data, t->dtype, (size_t)i);
		cudaError_t e = cudaMalloc((void **)&s->scale_f32, (size_t)s->nscale * sizeof(float));
		if (e == cudaSuccess)
			e = cudaMemcpy(s->scale_f32, h, (size_t)s->nscale * sizeof(float), cudaMemcpyHostToDevice);
		free(h);
		CU_TRY(err, e);
		s->scale = s->scale_f32;
	}
	return lt_plan(s, CUDA_R_8I, CUDA_R_32I, err);
}

static int qbmm_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t st, struct perfdb_err *err)
{
	struct lt_state *s = k->state;
	PERFDB_TRY(lt_enqueue(s, k->din[0], k->din[1], s->acc, st, err));
	CU_TRY(err, cuk_dequant(s->acc, s->scale, s->nscale, k->dout[0], cu_float_dt(c->out[0].dtype), s->g.m,
				s->g.n, st));
	return 0;
}

/* ---- GroupedMatmul: one cuBLASLt GEMM per expert ------------------------------ */

/*
 * Slots (docs/spec/replay.md §4): x0 (M,K), w1 (E,K,N) or (E,N,K), or the
 * recorded 4-D (E, K, N/16, 16) read as (E,K,N); group_list7 (the tokens
 * split evenly over the experts, cumulative, the remainder to the first
 * experts: perfdb_even_group_end, as the CPU backend); out0 (M,N).  Float dtypes: the weight
 * converted once to x's dtype when it differs; the float path's scale is all
 * ones in the reference and is not applied.  INT8 x and weight (W8A8): an
 * INT8 x INT8 -> INT32 GEMM per expert into one accumulator, then out =
 * acc · scale3[e, n] · per_token_scale8[m] (each when present and of that
 * size, else 1), into a bf16/fp16/fp32 output, as the CPU backend.
 */
struct gmm_plan {
	int64_t e, m, n, k;
	int wtrans, i8;
};

struct gmm_state {
	struct gmm_plan p;
	int32_t *acc;                 /* i8: (M,N) accumulator */
	float *wscale, *ptok;         /* i8: (E,N) and (M,) scales as fp32, or NULL */
	int64_t *start;               /* E + 1 row offsets */
	struct lt_state **lt;         /* per expert (shared between experts of equal rows), NULL: no rows */
	struct lt_state **uniq;       /* the distinct plans (owned) */
	int nuniq;
	void *w_conv;
};

static int gmm_plan(const struct perfdb_op_case *c, struct gmm_plan *p, struct perfdb_err *err)
{
	memset(p, 0, sizeof(*p));
	if (c->nin < 2 || !c->in[0].present || !c->in[1].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs x, weight and an output", c->op);
	const struct perfdb_tensor *x = &c->in[0], *w = &c->in[1], *o = &c->out[0];
	p->i8 = x->dtype == PERFDB_DTYPE_INT8 && w->dtype == PERFDB_DTYPE_INT8;
	if (!p->i8 && (cu_float_dt(x->dtype) < 0 || cu_float_dt(w->dtype) < 0))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: x %s, weight %s: float dtypes or INT8 x INT8", c->op,
				      perfdb_dtype_name(x->dtype), perfdb_dtype_name(w->dtype));
	if (p->i8 && cu_float_dt(o->dtype) < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: INT8 x INT8 into output %s (bf16, fp16 or fp32)", c->op,
				      perfdb_dtype_name(o->dtype));
	if (!p->i8 && !(o->dtype == x->dtype || o->dtype == PERFDB_DTYPE_FLOAT))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output %s for %s x", c->op, perfdb_dtype_name(o->dtype),
				      perfdb_dtype_name(x->dtype));
	if (x->ndims != 2 || o->ndims != 2 || o->dims[0] != x->dims[0])
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: x (M,K) and output (M,N)", c->op);
	p->m = x->dims[0];
	p->k = x->dims[1];
	p->n = o->dims[1];
	p->e = w->ndims >= 3 ? w->dims[0] : 0;
	if (p->e < 1 || w->numel != p->e * p->k * p->n)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: weight must hold E x K x N = E x %lld x %lld", c->op,
				      (long long)p->k, (long long)p->n);
	if (w->ndims == 4 || w->dims[1] == p->k)
		p->wtrans = 0;
	else if (w->ndims == 3 && w->dims[1] == p->n && w->dims[2] == p->k)
		p->wtrans = 1;
	else
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: weight is not (E,K,N) or (E,N,K)", c->op);
	return 0;
}

static int gmm_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct gmm_plan p;
	return gmm_plan(c, &p, err);
}

static void gmm_teardown(struct cu_case *k)
{
	struct gmm_state *s = k->state;
	if (!s)
		return;
	for (int i = 0; i < s->nuniq; i++) {
		struct cu_case tmp = { .state = s->uniq[i] };
		lt_teardown(&tmp);
	}
	free(s->uniq);
	free(s->lt);
	free(s->start);
	cudaFree(s->w_conv);
	cudaFree(s->acc);
	cudaFree(s->wscale);
	cudaFree(s->ptok);
	free(s);
	k->state = NULL;
}

/* Slot i as n fp32 values in device memory (once, untimed), when it is a float tensor of n elements; else NULL. */
static int scale_f32(const struct perfdb_op_case *c, size_t i, int64_t n, float **dev, struct perfdb_err *err)
{
	*dev = NULL;
	if ((size_t)c->nin <= i || !c->in[i].present || c->in[i].numel != n || cu_float_dt(c->in[i].dtype) < 0)
		return 0;
	const struct perfdb_tensor *t = &c->in[i];
	float *h = malloc((size_t)n * sizeof(float));
	if (!h)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (int64_t j = 0; j < n; j++)
		h[j] = perfdb_float_elem(t->data, t->dtype, (size_t)j);
	cudaError_t e = cudaMalloc((void **)dev, (size_t)n * sizeof(float));
	if (e == cudaSuccess)
		e = cudaMemcpy(*dev, h, (size_t)n * sizeof(float), cudaMemcpyHostToDevice);
	free(h);
	return cu_check(e, "scale upload", err);
}

static int gmm_setup(struct perfdb_op_case *c, struct cu_case *k, struct perfdb_err *err)
{
	struct gmm_state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	k->state = s;
	PERFDB_TRY(gmm_plan(c, &s->p, err));
	const struct gmm_plan *p = &s->p;
	s->start = calloc((size_t)p->e + 1, sizeof(int64_t));
	s->lt = calloc((size_t)p->e, sizeof(*s->lt));
	s->uniq = calloc((size_t)p->e, sizeof(*s->uniq));
	if (!s->start || !s->lt || !s->uniq)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int wt = p->wtrans;
	if (p->i8) {
		CU_TRY(err, cudaMalloc((void **)&s->acc, (size_t)(p->m * p->n) * sizeof(int32_t) + 4));
		PERFDB_TRY(scale_f32(c, 3, p->e * p->n, &s->wscale, err));
		PERFDB_TRY(scale_f32(c, 8, p->m, &s->ptok, err));
		if (!wt) {
			/* cuBLASLt's integer GEMMs take the weight as (N,K) (its TN form): laid out so once, as an engine does */
			size_t n = (size_t)c->in[1].numel;
			CU_TRY(err, cudaMalloc(&s->w_conv, n ? n : 1));
			CU_TRY(err, cuk_transpose(k->din[1], s->w_conv, p->e, p->k, 1, p->n, 1, cu.stream));
			CU_TRY(err, cudaStreamSynchronize(cu.stream));
			wt = 1;
		}
	} else if (c->in[1].dtype != c->in[0].dtype) {
		size_t n = (size_t)c->in[1].numel;
		CU_TRY(err, cudaMalloc(&s->w_conv, perfdb_dtype_bytes(c->in[0].dtype, n ? n : 1)));
		CU_TRY(err, cuk_convert(k->din[1], cu_float_dt(c->in[1].dtype), s->w_conv, cu_float_dt(c->in[0].dtype),
					(int64_t)n, cu.stream));
		CU_TRY(err, cudaStreamSynchronize(cu.stream));
	}
	for (int64_t e = 0; e < p->e; e++)
		s->start[e + 1] = perfdb_even_group_end(p->m, p->e, e);
	for (int64_t e = 0; e < p->e; e++) {
		int64_t rows = s->start[e + 1] - s->start[e];
		if (rows == 0)
			continue;
		for (int i = 0; i < s->nuniq && !s->lt[e]; i++)
			if (s->uniq[i]->g.m == rows)
				s->lt[e] = s->uniq[i];
		if (s->lt[e])
			continue;
		struct lt_state *l = calloc(1, sizeof(*l));
		if (!l)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		s->uniq[s->nuniq++] = l;
		s->lt[e] = l;
		l->g = (struct perfdb_gemm){ .bt = 1, .m = rows, .n = p->n, .k = p->k, .sa = { 0, p->k, 1 },
				      .sb = { 0, wt ? 1 : p->n, wt ? p->k : 1 }, .sc = { 0, p->n, 1 }, .btrans = wt };
		PERFDB_TRY(p->i8 ? lt_plan(l, CUDA_R_8I, CUDA_R_32I, err)
				 : lt_plan(l, cuda_type(c->in[0].dtype), cuda_type(c->out[0].dtype), err));
	}
	return 0;
}

static int gmm_enqueue(struct perfdb_op_case *c, struct cu_case *k, cudaStream_t st, struct perfdb_err *err)
{
	struct gmm_state *s = k->state;
	const struct gmm_plan *p = &s->p;
	size_t xe = perfdb_dtype_bytes(c->in[0].dtype, 1), oe = perfdb_dtype_bytes(c->out[0].dtype, 1);
	const char *x = k->din[0], *w = s->w_conv ? s->w_conv : k->din[1];
	char *o = k->dout[0];
	for (int64_t e = 0; e < p->e; e++) {
		if (!s->lt[e])
			continue;
		int64_t r0 = s->start[e], rows = s->start[e + 1] - r0;
		if (!p->i8) {
			PERFDB_TRY(lt_enqueue(s->lt[e], x + (size_t)(r0 * p->k) * xe, w + (size_t)(e * p->k * p->n) * xe,
					      o + (size_t)(r0 * p->n) * oe, st, err));
			continue;
		}
		PERFDB_TRY(lt_enqueue(s->lt[e], x + (size_t)(r0 * p->k), w + (size_t)(e * p->k * p->n),
				      s->acc + r0 * p->n, st, err));
		CU_TRY(err, cuk_dequant_rows(s->acc + r0 * p->n, s->wscale ? s->wscale + e * p->n : NULL,
					     s->ptok ? s->ptok + r0 : NULL, o + (size_t)(r0 * p->n) * oe,
					     cu_float_dt(c->out[0].dtype), rows, p->n, st));
	}
	return 0;
}

#define MM(n) CU_OP(n, "cublasLt", mm_check, mm_setup, mm_enqueue, lt_teardown)

const struct cu_op cu_ops_gemm[] = {
	MM("BatchMatMulV2"), MM("MatMulCommon"), MM("MatMulV2"), MM("MatMulV3"), MM("TransposeBatchMatMul"),
	CU_OP("GroupedMatmul", "cublasLt", gmm_check, gmm_setup, gmm_enqueue, gmm_teardown),
	CU_OP("QuantBatchMatmulV3", "cublasLt+own_dequant", qbmm_check, qbmm_setup, qbmm_enqueue, lt_teardown),
	{ .impl = { .name = NULL } },
};
