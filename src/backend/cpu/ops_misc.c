/*
 * CPU backend, the remaining simple ops of the seed's list (docs/spec/replay.md
 * §4; docs/ops.md "Other element-wise and conversion ops"): Cast,
 * CastAiCore, Fill, Mul, LayerNormV3, and the AiCore twins of Slice and
 * ScatterNdUpdate, which run ops_index.c's kernels.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "ops/rules.h"

#define BLK 1024

/* ---- Cast / CastAiCore: out = in0 converted to out0's dtype ---- */

/* n elements of t from off into dst as double; one loop per dtype, each vectorisable. */
CPU_CLONES static void load_d(const struct perfdb_tensor *t, size_t off, size_t n, double *dst)
{
	switch (t->dtype) {
	case PERFDB_DTYPE_FLOAT64: memcpy(dst, (const double *)t->data + off, n * sizeof(double)); break;
	case PERFDB_DTYPE_INT64: for (size_t i = 0; i < n; i++) dst[i] = (double)((const int64_t *)t->data)[off + i]; break;
	case PERFDB_DTYPE_INT32: for (size_t i = 0; i < n; i++) dst[i] = ((const int32_t *)t->data)[off + i]; break;
	case PERFDB_DTYPE_INT16: for (size_t i = 0; i < n; i++) dst[i] = ((const int16_t *)t->data)[off + i]; break;
	case PERFDB_DTYPE_INT8: for (size_t i = 0; i < n; i++) dst[i] = ((const int8_t *)t->data)[off + i]; break;
	case PERFDB_DTYPE_UINT8:
	case PERFDB_DTYPE_BOOL: for (size_t i = 0; i < n; i++) dst[i] = ((const uint8_t *)t->data)[off + i]; break;
	default: {
		float f[BLK];
		cpu_load_row(t, off, n, f);
		for (size_t i = 0; i < n; i++)
			dst[i] = f[i];
	}
	}
}

/* Saturating truncation toward zero (NaN -> 0), as a float -> integer cast. */
static inline double clampd(double v, double lo, double hi)
{
	v = v != v ? 0.0 : v;
	return v < lo ? lo : v > hi ? hi : v;
}

CPU_CLONES static void store_d(struct perfdb_tensor *t, size_t off, size_t n, const double *src)
{
	switch (t->dtype) {
	case PERFDB_DTYPE_FLOAT64: memcpy((double *)t->data + off, src, n * sizeof(double)); break;
	case PERFDB_DTYPE_INT64:
		for (size_t i = 0; i < n; i++)
			((int64_t *)t->data)[off + i] = (int64_t)clampd(src[i], -0x1p63, 0x1p63 - 1024.0);
		break;
	case PERFDB_DTYPE_INT32:
		for (size_t i = 0; i < n; i++)
			((int32_t *)t->data)[off + i] = (int32_t)clampd(src[i], -2147483648.0, 2147483647.0);
		break;
	case PERFDB_DTYPE_INT16:
		for (size_t i = 0; i < n; i++)
			((int16_t *)t->data)[off + i] = (int16_t)clampd(src[i], -32768.0, 32767.0);
		break;
	case PERFDB_DTYPE_INT8:
		for (size_t i = 0; i < n; i++)
			((int8_t *)t->data)[off + i] = (int8_t)clampd(src[i], -128.0, 127.0);
		break;
	case PERFDB_DTYPE_UINT8:
		for (size_t i = 0; i < n; i++)
			((uint8_t *)t->data)[off + i] = (uint8_t)clampd(src[i], 0.0, 255.0);
		break;
	case PERFDB_DTYPE_BOOL:
		for (size_t i = 0; i < n; i++)
			((uint8_t *)t->data)[off + i] = src[i] != 0.0;
		break;
	default: {
		float f[BLK];
		for (size_t i = 0; i < n; i++)
			f[i] = (float)src[i];
		cpu_store_row(t, off, n, f);
	}
	}
}

static int cast_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	const struct perfdb_tensor *x = &c->in[0];
	struct perfdb_tensor *o = &c->out[0];
	size_t n = (size_t)o->numel;
	if (x->dtype == o->dtype) {
		memcpy(o->data, x->data, o->bytes);
		return 0;
	}
	if (perfdb_dtype_is_float(x->dtype) && perfdb_dtype_is_float(o->dtype)) {   /* fp32/bf16/fp16 among themselves */
		float f[BLK];
		for (size_t i = 0; i < n; i += BLK) {
			size_t m = n - i < BLK ? n - i : BLK;
			cpu_load_row(x, i, m, f);
			cpu_store_row(o, i, m, f);
		}
		return 0;
	}
	double d[BLK];
	for (size_t i = 0; i < n; i += BLK) {
		size_t m = n - i < BLK ? n - i : BLK;
		load_d(x, i, m, d);
		store_d(o, i, m, d);
	}
	return 0;
}

/*
 * ---- Fill: out0 = value everywhere ----
 * value: the last present input with one element (aclnnInplaceFillScalar's
 * scalar, aclnnFill's value tensor), else 0.
 */
#define FILL_PAT(T)                                                                     \
	CPU_CLONES static void fill_##T(T *p, size_t n, T v)                            \
	{                                                                               \
		for (size_t i = 0; i < n; i++)                                          \
			p[i] = v;                                                       \
	}
FILL_PAT(uint8_t)
FILL_PAT(uint16_t)
FILL_PAT(uint32_t)
FILL_PAT(uint64_t)

static int fill_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	struct perfdb_tensor *o = &c->out[0];
	double v = 0.0;
	for (size_t i = c->nin; i-- > 0;)
		if (c->in[i].present && c->in[i].numel == 1 && perfdb_castable(c->in[i].dtype)) {
			load_d(&c->in[i], 0, 1, &v);
			break;
		}
	/* the value in the output's dtype, as one element's bytes */
	uint64_t pat = 0;
	struct perfdb_tensor one = *o;
	one.data = &pat;
	one.numel = 1;
	store_d(&one, 0, 1, &v);
	size_t n = (size_t)o->numel;
	switch (perfdb_dtype_bytes(o->dtype, 1)) {
	case 1: fill_uint8_t(o->data, n, (uint8_t)pat); break;
	case 2: fill_uint16_t(o->data, n, (uint16_t)pat); break;
	case 4: fill_uint32_t(o->data, n, (uint32_t)pat); break;
	default: fill_uint64_t(o->data, n, pat); break;
	}
	return 0;
}

/* ---- Mul: out = in0 · in1 (in1 broadcast by numpy's rule, as Add's; absent: 1.0) ---- */

static int mul_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	cpu_binary(c, CPU_BIN_MUL);   /* kern_binary.c */
	return 0;
}

/*
 * ---- LayerNormV3 (torch_npu.npu_layer_norm / aclnnLayerNorm) ----
 * in0 x, in1 gamma (the normalised trailing shape, H elements), in2 beta
 * (optional); out0 y, out1 mean, out2 rstd (optional, one per row).
 * y = (x − mean) · rstd · gamma + beta, rstd = 1/sqrt(var + 1e-5) (biased var).
 */
/* Scratch: x row, gamma, beta. */
static int ln_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	size_t h = (size_t)c->in[1].numel;
	float *p = malloc(3 * h * sizeof(float));
	if (!p)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->priv = p;
	return 0;
}

static void ln_release(struct perfdb_op_case *c)
{
	free(c->priv);
	c->priv = NULL;
}

/* Sum with 16 partial sums (of (x - m)^2 when sq), vectorised without reassociation flags. */
CPU_CLONES static float sum16(const float *x, size_t h, float m, int sq)
{
	float acc[16] = { 0 };
	size_t j = 0;
	for (; j + 16 <= h; j += 16)
		for (size_t k = 0; k < 16; k++) {
			float v = x[j + k] - m;
			acc[k] += sq ? v * v : v;
		}
	float s = 0.0f;
	for (size_t k = 0; k < 16; k++)
		s += acc[k];
	for (; j < h; j++) {
		float v = x[j] - m;
		s += sq ? v * v : v;
	}
	return s;
}

CPU_CLONES static void ln_apply(float *x, const float *g, const float *b, float m, float r, size_t h)
{
	for (size_t j = 0; j < h; j++)
		x[j] = (x[j] - m) * r * g[j] + b[j];
}

static void put_stat(struct perfdb_op_case *c, size_t oi, size_t r, float v)
{
	if (c->nout > oi && c->out[oi].present && (size_t)c->out[oi].numel > r && perfdb_dtype_is_float(c->out[oi].dtype))
		cpu_store_row(&c->out[oi], r, 1, &v);
}

static int ln_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	size_t h = (size_t)c->in[1].numel, rows = (size_t)c->in[0].numel / h;
	float *x = c->priv, *g = x + h, *b = g + h;
	cpu_load_row(&c->in[1], 0, h, g);
	if (c->nin > 2 && c->in[2].present)
		cpu_load_row(&c->in[2], 0, h, b);
	else
		memset(b, 0, h * sizeof(float));
	for (size_t r = 0; r < rows; r++) {
		cpu_load_row(&c->in[0], r * h, h, x);
		float m = sum16(x, h, 0.0f, 0) / (float)h;
		float rstd = 1.0f / sqrtf(sum16(x, h, m, 1) / (float)h + PERFDB_EPS_LAYERNORM);
		ln_apply(x, g, b, m, rstd, h);
		cpu_store_row(&c->out[0], r * h, h, x);
		put_stat(c, 1, r, m);
		put_stat(c, 2, r, rstd);
	}
	return 0;
}

/*
 * ---- SliceAiCore, ScatterNdUpdateAiCore: the AiCore builds of Slice and
 * ScatterNdUpdate, same slots, so ops_index.c's implementation runs them.
 * Found by name in its exported table (a few string compares per call).
 */
static const struct perfdb_op_impl *twin(const struct perfdb_op_case *c)
{
	size_t n = strlen(c->op);
	size_t k = n > 6 && strcmp(c->op + n - 6, "AiCore") == 0 ? n - 6 : n;
	for (const struct perfdb_op_impl *o = cpu_ops_index; o->name; o++)
		if (strlen(o->name) == k && strncmp(o->name, c->op, k) == 0)
			return o;
	return NULL;
}

static int twin_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_op_impl *o = twin(c);
	if (!o)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: no data-movement twin", c->op);
	return o->check(c, err);
}

static int twin_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_op_impl *o = twin(c);
	return o->prepare ? o->prepare(c, err) : 0;
}

static int twin_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	return twin(c)->run(c, err);
}

static void twin_release(struct perfdb_op_case *c)
{
	const struct perfdb_op_impl *o = twin(c);
	if (o->release)
		o->release(c);
}

const struct perfdb_op_impl cpu_ops_misc[] = {
	{ .name = "Cast", .check = cpu_no_limits, .run = cast_run },
	{ .name = "CastAiCore", .check = cpu_no_limits, .run = cast_run },
	{ .name = "Fill", .check = cpu_no_limits, .run = fill_run },
	{ .name = "LayerNormV3", .check = cpu_no_limits, .prepare = ln_prepare, .run = ln_run, .release = ln_release },
	{ .name = "Mul", .check = cpu_no_limits, .run = mul_run },
	{ .name = "ScatterNdUpdateAiCore", .check = twin_check, .prepare = twin_prepare, .run = twin_run,
	  .release = twin_release },
	{ .name = "SliceAiCore", .check = twin_check, .prepare = twin_prepare, .run = twin_run,
	  .release = twin_release },
	{ .name = NULL },
};
