/*
 * CPU backend, element-wise ops (docs/spec/replay.md §4; docs/ops.md): Add,
 * Sub and RealDiv (their float forms on kern_binary.c), SwiGlu, TensorMove,
 * MaskedFill, and Silu, Gelu, Pow and Rsqrt (PyTorch's silu, gelu, pow and
 * rsqrt, which only aten tables lower to).  Float tensors (fp32, bf16, fp16) are
 * processed in blocks converted to fp32 on the stack, a loop shape the
 * compiler vectorises; results are stored back in the tensor's own dtype.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu_internal.h"
#include "ops/rules.h"

#define BLK 1024

/* ---- Add: out = in0 + in1 (in1 broadcast by numpy's rule; absent: 1.0) ---- */

static int is_intdt(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_INT8 || d == PERFDB_DTYPE_UINT8 || d == PERFDB_DTYPE_INT16 ||
	       d == PERFDB_DTYPE_INT32 || d == PERFDB_DTYPE_INT64;
}

/* Integer Add, wrapping as the device's integer add does; absent b adds 1. */
static void add_int(struct perfdb_op_case *c, size_t lo, size_t hi)
{
	const struct perfdb_tensor *a = &c->in[0], *b = c->nin > 1 && c->in[1].present ? &c->in[1] : NULL;
	struct perfdb_tensor *o = &c->out[0];
	for (size_t i = lo; i < hi; i++) {
		uint64_t v = (uint64_t)cpu_ld_int(a, i) + (uint64_t)(b ? cpu_ld_int(b, cpu_bcast_at(b, o, i)) : 1);
		switch (o->dtype) {
		case PERFDB_DTYPE_INT8: ((int8_t *)o->data)[i] = (int8_t)(uint8_t)v; break;
		case PERFDB_DTYPE_UINT8: ((uint8_t *)o->data)[i] = (uint8_t)v; break;
		case PERFDB_DTYPE_INT16: ((int16_t *)o->data)[i] = (int16_t)(uint16_t)v; break;
		case PERFDB_DTYPE_INT32: ((int32_t *)o->data)[i] = (int32_t)(uint32_t)v; break;
		default: ((int64_t *)o->data)[i] = (int64_t)v; break;
		}
	}
}

static size_t nblocks(size_t n)
{
	return (n + BLK - 1) / BLK;
}

static void add_int_range(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	struct perfdb_op_case *c = ctx;
	size_t n = (size_t)c->out[0].numel;
	add_int(c, lo * BLK, hi * BLK < n ? hi * BLK : n);
}

static int add_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	size_t n = (size_t)c->out[0].numel;
	if (is_intdt(c->out[0].dtype))
		cpu_parallel(nblocks(n), n, c->threads, add_int_range, c);
	else
		cpu_binary(c, CPU_BIN_ADD);   /* kern_binary.c: every broadcast at memory speed */
	return 0;
}

/* Sub and RealDiv (PyTorch's sub and div): the float Add of kern_binary.c with their operator. */
static int sub_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	cpu_binary(c, CPU_BIN_SUB);
	return 0;
}

static int div_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	cpu_binary(c, CPU_BIN_DIV);
	return 0;
}

/* ---- SwiGlu: x (..., 2H) -> out (..., H) = silu(x[..., :H]) * x[..., H:] ---- */

/* SwiGlu's kernel (cpu_internal.h enum cpu_rows_path): kern_bf16.c for bf16 on AVX512_BF16, a row-kernel table when
 * input and output dtypes agree, else the generic path. */
static enum cpu_rows_path swiglu_path(const struct perfdb_op_case *c)
{
	enum perfdb_dtype d = c->in[0].dtype;
	if (d == PERFDB_DTYPE_BF16 && c->out[0].dtype == PERFDB_DTYPE_BF16 && cpu_has_avx512bf16(cpu_isa_of(c)))
		return CPU_ROWS_BF16;
	return d == c->out[0].dtype && cpu_rows_for(cpu_isa_of(c)) ? CPU_ROWS_TABLE : CPU_ROWS_GENERIC;
}

static int swiglu_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	cpu_rows_set_kernel(c, swiglu_path(c));
	return 0;
}

CPU_CLONES static void swiglu_range(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	struct perfdb_op_case *c = ctx;
	const struct perfdb_tensor *a = &c->in[0];
	struct perfdb_tensor *o = &c->out[0];
	size_t h = (size_t)o->dims[o->ndims - 1];
	float g[BLK], u[BLK];
	enum cpu_rows_path path = swiglu_path(c);
	if (path == CPU_ROWS_BF16) {
		for (size_t r = lo; r < hi; r++)   /* kern_bf16.c: no fp32 copy, no division */
			cpu_swiglu_row_bf16((const uint16_t *)a->data + r * 2 * h, (uint16_t *)o->data + r * h, h);
		return;
	}
	if (path == CPU_ROWS_TABLE) {
		/* fp32/fp16 (bf16 without AVX512_BF16): kern_rows*.c */
		const struct cpu_rows_kern *k = cpu_rows_for(cpu_isa_of(c));
		size_t es = perfdb_dtype_bytes(o->dtype, 1);
		enum cpu_row_fmt f = cpu_row_fmt(o->dtype, cpu_isa_of(c));
		for (size_t r = lo; r < hi; r++)
			k->swiglu(f, (const char *)a->data + r * 2 * h * es, (char *)o->data + r * h * es, h);
		return;
	}
	for (size_t r = lo; r < hi; r++)
		for (size_t i = 0; i < h; i += BLK) {
			size_t m = h - i < BLK ? h - i : BLK;
			cpu_load_row(a, r * 2 * h + i, m, g);
			cpu_load_row(a, r * 2 * h + h + i, m, u);
			for (size_t j = 0; j < m; j++)
				g[j] = g[j] / (1.0f + cpu_expf(-g[j])) * u[j];
			cpu_store_row(o, r * h + i, m, g);
		}
}

static int swiglu_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	const struct perfdb_tensor *o = &c->out[0];
	size_t h = (size_t)o->dims[o->ndims - 1], rows = (size_t)o->numel / (h ? h : 1);
	cpu_parallel(rows, 3 * (size_t)o->numel, c->threads, swiglu_range, c);
	return 0;
}

/* ---- Silu, Gelu, Pow, Rsqrt: out = f(in0), element by element ---- */

enum act { ACT_SILU, ACT_GELU, ACT_SQUARE, ACT_RSQRT };

struct act_ctx {
	struct perfdb_op_case *c;
	/* silu x/(1+exp(-x)); gelu x/2 (1+erf(x/sqrt 2)), aten's default (exact) form;
	 * Pow as x^2 (its exponent is a scalar the trace does not record: docs/ops.md);
	 * rsqrt 1/sqrt(x) */
	enum act kind;
};

CPU_CLONES static void act_range(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	const struct act_ctx *x = ctx;
	const struct perfdb_tensor *a = &x->c->in[0];
	struct perfdb_tensor *o = &x->c->out[0];
	float v[BLK];
	size_t n = (size_t)o->numel;
	for (size_t i = lo * BLK; i < n && i < hi * BLK; i += BLK) {
		size_t m = n - i < BLK ? n - i : BLK;
		cpu_load_row(a, i, m, v);
		switch (x->kind) {
		case ACT_GELU:
			for (size_t j = 0; j < m; j++)
				v[j] = 0.5f * v[j] * (1.0f + erff(v[j] * 0.70710678f));
			break;
		case ACT_SILU:
			for (size_t j = 0; j < m; j++)
				v[j] = v[j] / (1.0f + cpu_expf(-v[j]));
			break;
		case ACT_SQUARE:
			for (size_t j = 0; j < m; j++)
				v[j] = v[j] * v[j];
			break;
		case ACT_RSQRT:
			for (size_t j = 0; j < m; j++)
				v[j] = 1.0f / sqrtf(v[j]);
			break;
		}
		cpu_store_row(o, i, m, v);
	}
}

static int act_run(struct perfdb_op_case *c, enum act kind)
{
	struct act_ctx x = { c, kind };
	size_t n = (size_t)c->out[0].numel;
	cpu_parallel(nblocks(n), 2 * n, c->threads, act_range, &x);
	return 0;
}

static int silu_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	return act_run(c, ACT_SILU);
}

static int gelu_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	return act_run(c, ACT_GELU);
}

static int pow_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	return act_run(c, ACT_SQUARE);
}

static int rsqrt_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	return act_run(c, ACT_RSQRT);
}

/* ---- TensorMove: out = copy of in0 (bytes) ---- */

#define MOVE_CHUNK ((size_t)1 << 16)   /* bytes per range unit */

static void move_range(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	struct perfdb_op_case *c = ctx;
	size_t n = c->out[0].bytes, a = lo * MOVE_CHUNK, b = hi * MOVE_CHUNK < n ? hi * MOVE_CHUNK : n;
	memcpy((char *)c->out[0].data + a, (const char *)c->in[0].data + a, b - a);
}

static int move_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	size_t n = c->out[0].bytes;
	cpu_parallel((n + MOVE_CHUNK - 1) / MOVE_CHUNK, n / 2, c->threads, move_range, c);
	return 0;
}

/* ---- MaskedFill: out = mask ? value : in0 (mask=in1 broadcast, value=in2[0] or 0) ---- */

static int mfill_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	const struct perfdb_tensor *a = &c->in[0], *mk = &c->in[1];
	struct perfdb_tensor *o = &c->out[0];
	float v = c->nin > 2 && c->in[2].present && perfdb_dtype_is_float(c->in[2].dtype) ? cpu_ld(&c->in[2], 0) : 0.0f;
	const uint8_t *mask = mk->data;
	size_t n = (size_t)o->numel, mn = (size_t)mk->numel;
	float x[BLK];
	for (size_t i = 0; i < n; i += BLK) {
		size_t m = n - i < BLK ? n - i : BLK;
		cpu_load_row(a, i, m, x);
		for (size_t j = 0; j < m; j++)
			if (mask[(i + j) % mn])
				x[j] = v;
		cpu_store_row(o, i, m, x);
	}
	return 0;
}

const struct perfdb_op_impl cpu_ops_eltwise[] = {
	{ .name = "Add", .check = cpu_no_limits, .run = add_run },
	{ .name = "Gelu", .check = cpu_no_limits, .run = gelu_run },
	{ .name = "MaskedFill", .check = cpu_no_limits, .run = mfill_run },
	{ .name = "Pow", .check = cpu_no_limits, .run = pow_run },
	{ .name = "RealDiv", .check = cpu_no_limits, .run = div_run },
	{ .name = "Rsqrt", .check = cpu_no_limits, .run = rsqrt_run },
	{ .name = "Silu", .check = cpu_no_limits, .run = silu_run },
	{ .name = "Sub", .check = cpu_no_limits, .run = sub_run },
	{ .name = "SwiGlu", .check = cpu_no_limits, .prepare = swiglu_prepare, .run = swiglu_run },
	{ .name = "TensorMove", .check = cpu_no_limits, .run = move_run },
	{ .name = NULL },
};
