/*
 * CPU backend, normalisation ops (docs/spec/replay.md §4; docs/ops.md): RmsNorm,
 * AddRmsNormBias, SoftmaxV2, all over the last dim, computed in fp32 per
 * row (a scratch row allocated in prepare, outside the timed loop).
 */
#include <math.h>
#include <stdlib.h>

#include "cpu_internal.h"

static size_t last(const struct perfdb_tensor *t)
{
	return t->ndims ? (size_t)t->dims[t->ndims - 1] : 1;
}

static size_t nrows(const struct perfdb_tensor *t)
{
	size_t h = last(t);
	return (size_t)t->numel / (h ? h : 1);
}

/* Scratch: 3 rows of the last dim per thread (16 floats apart: no shared cache line). */
static size_t scratch_stride(const struct perfdb_op_case *c)
{
	return 3 * last(&c->in[0]) + 16;
}

static int scratch(struct perfdb_op_case *c, struct perfdb_err *err)
{
	int t = cpu_par_threads(nrows(&c->in[0]), (size_t)c->in[0].numel, c->threads);
	c->priv = malloc((size_t)t * scratch_stride(c) * sizeof(float) + 64);
	return c->priv ? 0 : perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
}

static void scratch_free(struct perfdb_op_case *c)
{
	free(c->priv);
	c->priv = NULL;
}

/* Optional fp32 rstd output (slot out_i): one value per row. */
static void put_rstd(struct perfdb_op_case *c, size_t oi, size_t r, float v)
{
	if (c->nout > oi && c->out[oi].present && (size_t)c->out[oi].numel > r && perfdb_dtype_is_float(c->out[oi].dtype))
		cpu_store_row(&c->out[oi], r, 1, &v);
}

/* ---- RmsNorm: y = x * rsqrt(mean(x^2) + eps) * gamma; out1 = rstd ---- */

struct rms_args {
	struct perfdb_op_case *c;
	const struct perfdb_tensor *x1, *x2, *g, *bias;
	size_t rstd_slot;
	struct perfdb_tensor *xsum;
};

/*
 * The kernel a set of RmsNorm rows runs on (cpu_internal.h enum
 * cpu_rows_path; prepare names it in Kernel Used, each run's ranges take
 * it): a row-kernel table (kern_rows*.c; bf16 through vcvtneps2bf16 on
 * AVX512_BF16, see kern_bf16.c for why not a row kernel of its own) when x1, x2, xsum and y
 * are all of one float dtype and xsum is apart from x1 and x2 (its second
 * pass rereads them); else the generic path.
 */
static enum cpu_rows_path rms_path(const struct rms_args *p)
{
	const struct perfdb_op_case *c = p->c;
	enum perfdb_dtype d = p->x1->dtype;
	const struct perfdb_tensor *y = &c->out[0];
	if (!perfdb_dtype_is_float(d) || y->dtype != d || (p->x2 && p->x2->dtype != d) || !cpu_rows_for(cpu_isa_of(c)))
		return CPU_ROWS_GENERIC;
	if (!p->xsum)
		return CPU_ROWS_TABLE;
	return p->xsum->dtype == d && p->xsum->data != p->x1->data && p->xsum->data != p->x2->data ? CPU_ROWS_TABLE
												   : CPU_ROWS_GENERIC;
}

CPU_CLONES static void rms_range(void *ctx, size_t lo, size_t hi, int tid)
{
	const struct rms_args *p = ctx;
	struct perfdb_op_case *c = p->c;
	size_t h = last(p->x1);
	float *x = (float *)c->priv + (size_t)tid * scratch_stride(c), *t = x + h, *gam = t + h;
	cpu_load_row(p->g, 0, h, gam);
	enum cpu_rows_path path = rms_path(p);
	if (path == CPU_ROWS_TABLE) {
		/* kern_rows*.c, with or without x2/bias/xsum; bias converted once per range */
		const struct cpu_rows_kern *k = cpu_rows_for(cpu_isa_of(c));
		enum perfdb_dtype d = p->x1->dtype;
		enum cpu_row_fmt f = cpu_row_fmt(d, cpu_isa_of(c));
		size_t es = perfdb_dtype_bytes(d, 1);
		const float *b = NULL;
		if (p->bias) {
			cpu_load_row(p->bias, 0, h, t);
			b = t;
		}
		for (size_t r = lo; r < hi; r++) {
			size_t o = r * h * es;
			float rstd = k->rms(f, (const char *)p->x1->data + o, p->x2 ? (const char *)p->x2->data + o : NULL,
					    p->xsum ? (char *)p->xsum->data + o : NULL, (char *)c->out[0].data + o, gam,
					    b, h, PERFDB_EPS_RMSNORM, c->out[0].bytes >= CPU_NT_MIN_BYTES);
			put_rstd(c, p->rstd_slot, r, rstd);
		}
		return;
	}
	for (size_t r = lo; r < hi; r++) {
		cpu_load_row(p->x1, r * h, h, x);
		if (p->x2) {
			cpu_load_row(p->x2, r * h, h, t);
			for (size_t j = 0; j < h; j++)
				x[j] += t[j];
			if (p->xsum)
				cpu_store_row(p->xsum, r * h, h, x);
		}
		float ss = cpu_sumsq(x, h);
		float rstd = 1.0f / sqrtf(ss / (float)h + PERFDB_EPS_RMSNORM);
		for (size_t j = 0; j < h; j++)
			x[j] = x[j] * rstd * gam[j];
		if (p->bias) {
			cpu_load_row(p->bias, 0, h, t);
			for (size_t j = 0; j < h; j++)
				x[j] += t[j];
		}
		cpu_store_row(&c->out[0], r * h, h, x);
		put_rstd(c, p->rstd_slot, r, rstd);
	}
}

/*
 * The tensors of an RmsNorm (x, gamma; out: y, rstd) or an AddRmsNormBias
 * (x1, x2, gamma, bias optional; out: y, rstd optional, x optional).
 */
static struct rms_args rms_args_of(struct perfdb_op_case *c, int add)
{
	struct rms_args a = { c, &c->in[0], NULL, &c->in[1], NULL, 1, NULL };
	if (add) {
		a.x2 = &c->in[1];
		a.g = &c->in[2];
		a.bias = c->nin > 3 && c->in[3].present ? &c->in[3] : NULL;
		a.xsum = c->nout > 2 && c->out[2].present ? &c->out[2] : NULL;
	}
	return a;
}

static int rms_prepare_as(struct perfdb_op_case *c, int add, struct perfdb_err *err)
{
	struct rms_args a = rms_args_of(c, add);
	cpu_rows_set_kernel(c, rms_path(&a));
	return scratch(c, err);
}

static int rms_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	return rms_prepare_as(c, 0, err);
}

static int arnb_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	return rms_prepare_as(c, 1, err);
}

/* Rows split over --threads. */
static void rms_rows(struct perfdb_op_case *c, int add)
{
	struct rms_args a = rms_args_of(c, add);
	cpu_parallel(nrows(a.x1), (size_t)a.x1->numel, c->threads, rms_range, &a);
}

static int rms_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	rms_rows(c, 0);
	return 0;
}

/*
 * ---- AddRmsNormBias: x = x1 + x2; y = rmsnorm(x) * gamma + bias ----
 * in: x1, x2, gamma, bias (optional); out: y, rstd (optional), x (optional).
 */
static int arnb_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	rms_rows(c, 1);
	return 0;
}

/* ---- SoftmaxV2: softmax over the last dim ---- */

/* Maximum with 16 partial maxima (a serial max does not vectorise without fast-math). */
CPU_CLONES static float max16(const float *x, size_t h)
{
	float acc[16];
	for (size_t k = 0; k < 16; k++)
		acc[k] = -INFINITY;
	size_t j = 0;
	for (; j + 16 <= h; j += 16)
		for (size_t k = 0; k < 16; k++)
			acc[k] = x[j + k] > acc[k] ? x[j + k] : acc[k];
	float mx = -INFINITY;
	for (size_t k = 0; k < 16; k++)
		mx = acc[k] > mx ? acc[k] : mx;
	for (; j < h; j++)
		mx = x[j] > mx ? x[j] : mx;
	return mx;
}

/* x[j] = exp(x[j] - mx) in place; returns the sum (16 partial sums), in one pass. */
CPU_CLONES static float exp_sum16(float *x, size_t h, float mx)
{
	float acc[16] = { 0 };
	size_t j = 0;
	for (; j + 16 <= h; j += 16)
		for (size_t k = 0; k < 16; k++) {
			float e = cpu_expf(x[j + k] - mx);
			x[j + k] = e;
			acc[k] += e;
		}
	float s = 0.0f;
	for (size_t k = 0; k < 16; k++)
		s += acc[k];
	for (; j < h; j++) {
		x[j] = cpu_expf(x[j] - mx);
		s += x[j];
	}
	return s;
}

/* Softmax's kernel (cpu_internal.h enum cpu_rows_path), as rms_path. */
static enum cpu_rows_path softmax_path(const struct perfdb_op_case *c)
{
	enum perfdb_dtype d = c->in[0].dtype;
	if (d == PERFDB_DTYPE_BF16 && c->out[0].dtype == PERFDB_DTYPE_BF16 && cpu_has_avx512bf16(cpu_isa_of(c)))
		return CPU_ROWS_BF16;
	return perfdb_dtype_is_float(d) && c->out[0].dtype == d && cpu_rows_for(cpu_isa_of(c)) ? CPU_ROWS_TABLE
												 : CPU_ROWS_GENERIC;
}

/*
 * One read of the input row and one write of the output row; the max, exp/sum
 * and scale passes run over the fp32 scratch row, which stays in cache.
 */
CPU_CLONES static void softmax_range(void *ctx, size_t lo, size_t hi, int tid)
{
	struct perfdb_op_case *c = ctx;
	const struct perfdb_tensor *a = &c->in[0];
	size_t h = last(a);
	float *x = (float *)c->priv + (size_t)tid * scratch_stride(c);
	enum cpu_rows_path path = softmax_path(c);
	if (path == CPU_ROWS_BF16) {
		cpu_softmax_rows_bf16((const uint16_t *)a->data + lo * h, (uint16_t *)c->out[0].data + lo * h, x, h,
				      hi - lo, c->out[0].bytes >= CPU_NT_MIN_BYTES);
		return;
	}
	enum perfdb_cpu_isa isa = cpu_isa_of(c);
	const struct cpu_rows_kern *k = cpu_rows_for(isa);
	if (path == CPU_ROWS_TABLE) {
		size_t o = lo * h * perfdb_dtype_bytes(a->dtype, 1);   /* fp32/fp16 (bf16 without AVX512_BF16) */
		k->softmax(cpu_row_fmt(a->dtype, isa), (const char *)a->data + o, (char *)c->out[0].data + o, x, h,
			   hi - lo, c->out[0].bytes >= CPU_NT_MIN_BYTES);
		return;
	}
	for (size_t r = lo; r < hi; r++) {
		cpu_load_row(a, r * h, h, x);
		float inv = 1.0f / exp_sum16(x, h, max16(x, h));
		for (size_t j = 0; j < h; j++)
			x[j] *= inv;
		cpu_store_row(&c->out[0], r * h, h, x);
	}
}

static int softmax_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	cpu_rows_set_kernel(c, softmax_path(c));
	return scratch(c, err);
}

static int softmax_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	cpu_parallel(nrows(&c->in[0]), (size_t)c->in[0].numel, c->threads, softmax_range, c);
	return 0;
}

const struct perfdb_op_impl cpu_ops_norm[] = {
	{ .name = "AddRmsNormBias", .check = cpu_no_limits, .prepare = arnb_prepare, .run = arnb_run,
	  .release = scratch_free },
	{ .name = "RmsNorm", .check = cpu_no_limits, .prepare = rms_prepare, .run = rms_run,
	  .release = scratch_free },
	{ .name = "SoftmaxV2", .check = cpu_no_limits, .prepare = softmax_prepare, .run = softmax_run,
	  .release = scratch_free },
	{ .name = NULL },
};
