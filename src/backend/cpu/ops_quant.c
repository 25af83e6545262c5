/*
 * CPU backend, quantisation family (docs/spec/replay.md §4; docs/ops.md
 * "Quantisation"): DynamicQuant (per-token symmetric int8), AscendQuantV2
 * (int8 with a given scale and offset) and QuantBatchMatmulV3 (int8 x int8
 * GEMM with int32 accumulation through oneDNN, then per-channel/per-token
 * dequantisation, as npu_quant_matmul).
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_gemm.h"
#include "cpu_internal.h"
#include "cpu_quant.h"

/* ---- shared helpers (cpu_quant.h) ------------------------------------ */

CPU_CLONES float cpu_quant_row(float *x, size_t n)
{
	float m = 0;
	for (size_t i = 0; i < n; i++) {
		float a = fabsf(x[i]);
		m = a > m ? a : m;
	}
	float inv = m > 0 ? 127.0f / m : 0;
	for (size_t i = 0; i < n; i++)
		x[i] = cpu_q8(x[i] * inv);
	return m / 127.0f;
}

CPU_CLONES void cpu_store_q(struct perfdb_tensor *t, size_t off, size_t n, const float *q)
{
	switch (t->dtype) {
	case PERFDB_DTYPE_INT8: {
		int8_t *p = (int8_t *)t->data + off;
		for (size_t i = 0; i < n; i++)
			p[i] = (int8_t)q[i];
		break;
	}
	case PERFDB_DTYPE_INT32: {
		int32_t *p = (int32_t *)t->data + off;
		for (size_t i = 0; i < n; i++)
			p[i] = (int32_t)q[i];
		break;
	}
	default:
		cpu_store_row(t, off, n, q);
	}
}

int cpu_is_q_target(enum perfdb_dtype d)
{
	return perfdb_quant_target(d);
}

void cpu_to_s8(const struct perfdb_tensor *t, int8_t *dst)
{
	if (t->dtype == PERFDB_DTYPE_INT8) {
		memcpy(dst, t->data, (size_t)t->numel);
		return;
	}
	for (size_t i = 0; i < (size_t)t->numel; i++)
		dst[i] = (int8_t)(perfdb_dtype_is_float(t->dtype) ? cpu_q8(cpu_ld(t, i) * 127.0f) : (float)cpu_ld_int(t, i));
}

/* ---- common checks --------------------------------------------------- */

static int64_t last_dim(const struct perfdb_tensor *t)
{
	return t->ndims ? t->dims[t->ndims - 1] : 1;
}

/* Rows of a (..., D) tensor. */
static int64_t rows_of(const struct perfdb_tensor *t)
{
	int64_t d = last_dim(t);
	return d > 0 ? t->numel / d : 0;
}

/* Row scratch of the per-row ops: one fp32 row. */
struct row_state {
	float *row;
};

static void row_release(struct perfdb_op_case *c)
{
	struct row_state *s = c->priv;
	if (s)
		free(s->row);
	free(s);
	c->priv = NULL;
}

static int row_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct row_state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = s;
	size_t d = (size_t)last_dim(&c->in[0]);
	if (!(s->row = malloc((d ? d : 1) * sizeof(float))))
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	return 0;
}

/* ---- DynamicQuant ---------------------------------------------------- */
/* in0 x (..., D) float, in1 smooth_scales (D,) optional; out0 (..., D) int8, out1 (rows,) fp32 scales (rules: rules_quant.c) */

CPU_CLONES static void mul_row(float *x, const float *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] *= s[i];
}

static int dq_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	struct row_state *s = c->priv;
	const struct perfdb_tensor *x = &c->in[0];
	const struct perfdb_tensor *sm = c->nin > 1 && c->in[1].present ? &c->in[1] : NULL;
	struct perfdb_tensor *sc = c->nout > 1 && c->out[1].present ? &c->out[1] : NULL;
	size_t d = (size_t)last_dim(x), rows = (size_t)rows_of(x);
	for (size_t r = 0; r < rows; r++) {
		cpu_load_row(x, r * d, d, s->row);
		if (sm) {
			if (sm->dtype == PERFDB_DTYPE_FLOAT)
				mul_row(s->row, sm->data, d);
			else
				for (size_t i = 0; i < d; i++)
					s->row[i] *= cpu_ld(sm, i);
		}
		float scale = cpu_quant_row(s->row, d);
		cpu_store_q(&c->out[0], r * d, d, s->row);
		if (sc)
			cpu_store_row(sc, r, 1, &scale);
	}
	return 0;
}

/* ---- AscendQuantV2 --------------------------------------------------- */
/* in0 x (..., D), in1 scale (D,) or (1,), in2 offset (D,) or (1,) optional -> out0 int8: round(x*scale + offset) */

struct aq_state {
	float *row, *scale, *offset;   /* scale/offset broadcast to D once */
};

static void aq_release(struct perfdb_op_case *c)
{
	struct aq_state *s = c->priv;
	if (s) {
		free(s->row);
		free(s->scale);
		free(s->offset);
	}
	free(s);
	c->priv = NULL;
}

static int aq_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct aq_state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = s;
	size_t d = (size_t)last_dim(&c->in[0]);
	s->row = malloc((d ? d : 1) * sizeof(float));
	s->scale = malloc((d ? d : 1) * sizeof(float));
	s->offset = calloc(d ? d : 1, sizeof(float));
	if (!s->row || !s->scale || !s->offset)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t i = 0; i < d; i++) {
		s->scale[i] = cpu_ld(&c->in[1], c->in[1].numel == 1 ? 0 : i);
		if (c->nin > 2 && c->in[2].present)
			s->offset[i] = cpu_ld(&c->in[2], c->in[2].numel == 1 ? 0 : i);
	}
	return 0;
}

CPU_CLONES static void affine_q(float *x, const float *sc, const float *of, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = cpu_q8(x[i] * sc[i] + of[i]);
}

static int aq_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	struct aq_state *s = c->priv;
	const struct perfdb_tensor *x = &c->in[0];
	size_t d = (size_t)last_dim(x), rows = (size_t)rows_of(x);
	for (size_t r = 0; r < rows; r++) {
		cpu_load_row(x, r * d, d, s->row);
		affine_q(s->row, s->scale, s->offset, d);
		cpu_store_q(&c->out[0], r * d, d, s->row);
	}
	return 0;
}

/* ---- QuantBatchMatmulV3 ---------------------------------------------- */
/*
 * in0 x1 (M,K) int8, in1 x2 int8: (K,N) logical (FRACTAL_NZ already 2-D,
 * a 2-D (N,K) is transposed as the reference's .t(), any other shape with
 * K*N elements is read as (K,N)), in2 scale (N,) or (1,), in3 optional:
 * INT32 -> bias (N,); float -> pertoken_scale when numel == M, offset when
 * numel is 1 or N.  out0 (M,N): int32 = acc + bias; float = (acc + bias) *
 * scale[n] * pertoken[m]; int8 = round((acc + bias) * scale[n] + offset[n]).
 * Float-typed x1/x2 (synthetic template rows) are quantised to int8 once in
 * prepare (round(v * 127)); the timed call is always the int8 kernel.
 */

#define QMM_CHUNK 512   /* rows per GEMM call: the s32 block stays in L2 for the dequant pass */

struct qmm_plan {
	int64_t m, k, n;
	int wtrans;
	const struct perfdb_tensor *scale, *bias, *ptok, *offset;
};

struct qmm_state {
	struct qmm_plan p;
	struct cpu_mm full, tail;        /* QMM_CHUNK rows, and the M % QMM_CHUNK rest */
	dnnl_memory_t w;
	int8_t *xq;                      /* x1 as int8 when stored as another dtype */
	int32_t *acc;                    /* QMM_CHUNK x N */
	float *scale, *offset, *bias, *row;
	int need_full, need_tail;
};

static int qmm_plan(const struct perfdb_op_case *c, struct qmm_plan *p, struct perfdb_err *err)
{
	memset(p, 0, sizeof(*p));
	if (c->nin < 3 || c->nout < 1 || !c->in[0].present || !c->in[1].present || !c->in[2].present ||
	    !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs x1, x2, scale and output 0 (3-4 inputs)", c->op);
	const struct perfdb_tensor *x = &c->in[0], *w = &c->in[1], *o = &c->out[0];
	if (x->ndims != 2 || o->ndims != 2 || o->dims[0] != x->dims[0])
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: x1 (M,K) and output (M,N) must be 2-D with the same M",
				      c->op);
	p->m = x->dims[0];
	p->k = x->dims[1];
	p->n = o->dims[1];
	if (p->m < 1 || p->k < 1 || p->n < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: empty GEMM", c->op);
	if (w->numel != p->k * p->n)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: x2 has %lld elements, K*N = %lld*%lld", c->op,
				      (long long)w->numel, (long long)p->k, (long long)p->n);
	p->wtrans = w->ndims == 2 && w->dims[0] == p->n && w->dims[1] == p->k && p->n != p->k;
	for (int i = 0; i < 2; i++)
		if (c->in[i].dtype != PERFDB_DTYPE_INT8 && !perfdb_dtype_is_float(c->in[i].dtype))
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: input %d dtype %s is neither INT8 nor float",
					      c->op, i, perfdb_dtype_name(c->in[i].dtype));
	const struct perfdb_tensor *s = &c->in[2];
	if ((s->numel != p->n && s->numel != 1) || !(perfdb_dtype_is_float(s->dtype) || s->dtype == PERFDB_DTYPE_INT64))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: scale must be (N,) or (1,) float/int64", c->op);
	p->scale = s;
	for (size_t i = 3; i < c->nin; i++) {
		const struct perfdb_tensor *t = &c->in[i];
		if (!t->present)
			continue;
		if (t->dtype == PERFDB_DTYPE_INT32 && (t->numel == p->n || t->numel == 1) && !p->bias) {
			p->bias = t;
		} else if (perfdb_dtype_is_float(t->dtype) && t->numel == p->m && !p->ptok && p->m != p->n && p->m != 1) {
			p->ptok = t;
		} else if (perfdb_dtype_is_float(t->dtype) && (t->numel == 1 || t->numel == p->n) && !p->offset) {
			p->offset = t;
		} else if (perfdb_dtype_is_float(t->dtype) && t->numel == p->m && !p->ptok) {
			p->ptok = t;
		} else {
			return perfdb_err_set(err, PERFDB_EINVAL,
					      "%s: input %zu (%s, %lld elements) is no bias (N,), pertoken_scale (M,) or offset (1 or N)",
					      c->op, i, perfdb_dtype_name(t->dtype), (long long)t->numel);
		}
	}
	if (!cpu_is_q_target(o->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output dtype %s not supported", c->op,
				      perfdb_dtype_name(o->dtype));
	return 0;
}

static int qmm_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct qmm_plan p;
	return qmm_plan(c, &p, err);
}

static void qmm_release(struct perfdb_op_case *c)
{
	struct qmm_state *s = c->priv;
	if (!s)
		return;
	cpu_mm_release(&s->full);
	cpu_mm_release(&s->tail);
	if (s->w)
		dnnl_memory_destroy(s->w);
	free(s->xq);
	free(s->acc);
	free(s->scale);
	free(s->offset);
	free(s->bias);
	free(s->row);
	free(s);
	c->priv = NULL;
}

/* A scale element: float, or an INT64 whose low 32 bits hold the fp32 (npu_trans_quant_param). */
static float scale_at(const struct perfdb_tensor *t, size_t i)
{
	if (t->dtype == PERFDB_DTYPE_INT64) {
		uint32_t u = (uint32_t)((const int64_t *)t->data)[i];
		float f;
		memcpy(&f, &u, 4);
		return f;
	}
	return cpu_ld(t, i);
}

static int qmm_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct qmm_state *s = calloc(1, sizeof(*s));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = s;
	PERFDB_TRY(qmm_plan(c, &s->p, err));
	struct qmm_plan *p = &s->p;
	size_t n = (size_t)p->n;
	s->scale = malloc(n * sizeof(float));
	s->offset = calloc(n, sizeof(float));
	s->bias = calloc(n, sizeof(float));
	s->row = malloc(n * sizeof(float));
	s->acc = malloc((size_t)(p->m < QMM_CHUNK ? p->m : QMM_CHUNK) * n * sizeof(int32_t));
	if (!s->scale || !s->offset || !s->bias || !s->row || !s->acc)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	for (size_t j = 0; j < n; j++) {
		s->scale[j] = scale_at(p->scale, p->scale->numel == 1 ? 0 : j);
		if (p->offset)
			s->offset[j] = cpu_ld(p->offset, p->offset->numel == 1 ? 0 : j);
		if (p->bias)
			s->bias[j] = (float)cpu_ld_int(p->bias, p->bias->numel == 1 ? 0 : j);
	}
	if (c->in[0].dtype != PERFDB_DTYPE_INT8) {
		if (!(s->xq = malloc((size_t)c->in[0].numel)))
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		cpu_to_s8(&c->in[0], s->xq);
	}
	int8_t *wq = NULL;
	if (c->in[1].dtype != PERFDB_DTYPE_INT8) {
		if (!(wq = malloc((size_t)c->in[1].numel)))
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		cpu_to_s8(&c->in[1], wq);
	}
	int64_t chunk = p->m < QMM_CHUNK ? p->m : QMM_CHUNK, rest = p->m % chunk;
	/* s32 blocks of chunk rows (an int32 output is written by the GEMM itself) */
	int rc = cpu_mm_init(&s->full, c->backend_ctx, chunk, p->k, p->n, dnnl_s8, p->k, dnnl_s8, dnnl_s32, p->n, err);
	if (rc == 0 && rest)
		rc = cpu_mm_init(&s->tail, c->backend_ctx, rest, p->k, p->n, dnnl_s8, p->k, dnnl_s8, dnnl_s32, p->n, err);
	if (rc == 0)
		rc = cpu_mm_weight(&s->full, wq ? (const void *)wq : c->in[1].data, dnnl_s8, p->wtrans, &s->w, err);
	free(wq);
	return rc;
}

CPU_CLONES static void dequant_row(const int32_t *acc, const float *bias, const float *scale, float pt,
				   float *out, size_t n)
{
	for (size_t j = 0; j < n; j++)
		out[j] = ((float)acc[j] + bias[j]) * scale[j] * pt;
}

CPU_CLONES static void requant_row(const int32_t *acc, const float *bias, const float *scale,
				   const float *offset, float *out, size_t n)
{
	for (size_t j = 0; j < n; j++)
		out[j] = cpu_q8(((float)acc[j] + bias[j]) * scale[j] + offset[j]);
}

static int qmm_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct qmm_state *s = c->priv;
	struct qmm_plan *p = &s->p;
	struct perfdb_tensor *o = &c->out[0];
	const int8_t *x = s->xq ? s->xq : c->in[0].data;
	size_t n = (size_t)p->n;
	int direct = o->dtype == PERFDB_DTYPE_INT32;
	for (int64_t r0 = 0; r0 < p->m; r0 += s->full.m) {
		struct cpu_mm *mm = p->m - r0 >= s->full.m ? &s->full : &s->tail;
		int32_t *acc = direct ? (int32_t *)o->data + (size_t)r0 * n : s->acc;
		PERFDB_TRY(cpu_mm_run(mm, x + (size_t)r0 * (size_t)p->k, s->w, acc, err));
		for (int64_t r = 0; r < mm->m; r++) {
			int32_t *a = acc + (size_t)r * n;
			size_t off = (size_t)(r0 + r) * n;
			if (direct) {
				if (p->bias)
					for (size_t j = 0; j < n; j++)
						a[j] += (int32_t)cpu_ld_int(p->bias, p->bias->numel == 1 ? 0 : j);
			} else if (o->dtype == PERFDB_DTYPE_INT8) {
				requant_row(a, s->bias, s->scale, s->offset, s->row, n);
				cpu_store_q(o, off, n, s->row);
			} else {
				float pt = p->ptok ? cpu_ld(p->ptok, (size_t)(r0 + r)) : 1.0f;
				dequant_row(a, s->bias, s->scale, pt, s->row, n);
				cpu_store_row(o, off, n, s->row);
			}
		}
	}
	return 0;
}

const struct perfdb_op_impl cpu_ops_quant[] = {
	{ .name = "DynamicQuant", .check = cpu_no_limits, .prepare = row_prepare, .run = dq_run,
	  .release = row_release },
	{ .name = "AscendQuantV2", .check = cpu_no_limits, .prepare = aq_prepare, .run = aq_run,
	  .release = aq_release },
	{ .name = "QuantBatchMatmulV3", .check = qmm_check, .prepare = qmm_prepare, .run = qmm_run,
	  .release = qmm_release },
	{ .name = NULL },
};
