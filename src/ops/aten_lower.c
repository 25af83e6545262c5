/*
 * PyTorch op rows lowered to the operators whose kernels do their work
 * (aten.h; docs/ops.md "PyTorch operators").  Each lowering reads the
 * slots of aten's schema (native_functions.yaml order, as the profiler
 * records a call's arguments) and writes the target's slots; outputs are
 * derived from the inputs by aten's shape rules rather than read from the
 * row, whose output cells a trace often leaves empty.
 */
#include <stdio.h>
#include <string.h>

#include "perfdb/dtype.h"
#include "ops/aten.h"
#include "ops/opdef.h"

#define BAD(...) perfdb_err_set(err, PERFDB_EINVAL, __VA_ARGS__)

/* Input i of the raw row, or NULL when the slot is empty (a scalar or an absent optional). */
static const struct perfdb_tensor *arg(const struct perfdb_op_case *raw, size_t i)
{
	return i < raw->nin && raw->in[i].present ? &raw->in[i] : NULL;
}

/* The recorded dtype of output 0, or `def` when the row records none. */
static enum perfdb_dtype out_dtype(const struct perfdb_op_case *raw, enum perfdb_dtype def)
{
	return raw->nout > 0 && raw->out[0].present ? raw->out[0].dtype : def;
}

/* A dense ND tensor of dims d[0..nd), numel and bytes filled; too many elements: -PERFDB_EINVAL. */
static int set_tensor(struct perfdb_tensor *t, enum perfdb_dtype dt, size_t nd, const int64_t *d, const char *op,
			 struct perfdb_err *err)
{
	memset(t, 0, sizeof(*t));
	t->present = true;
	t->dtype = dt;
	t->format = PERFDB_FORMAT_ND;
	t->ndims = nd;
	memcpy(t->dims, d, nd * sizeof(*d));
	t->numel = perfdb_shape_numel(t->dims, nd);
	if (t->numel < 0)
		return BAD("%s: the output has too many elements", op);
	t->bytes = perfdb_dtype_bytes(dt, (size_t)t->numel);
	return 0;
}

/* t viewed as (rows, last dim): the leading dims folded (a contiguous view, no copy). */
static void fold_2d(struct perfdb_tensor *t)
{
	int64_t last = t->ndims ? t->dims[t->ndims - 1] : 1;
	int64_t rows = last > 0 ? t->numel / last : 0;
	t->dims[0] = rows;
	t->dims[1] = last;
	t->ndims = 2;
}

static int need(const char *stem, const struct perfdb_tensor *t, const char *what, size_t nd_min, size_t nd_max,
		struct perfdb_err *err)
{
	if (!t)
		return BAD("%s: the %s slot records no tensor shape", stem, what);
	if (t->ndims < nd_min || t->ndims > nd_max) {
		if (nd_min == nd_max)
			return BAD("%s: %s must be %zu-D (it is %zu-D)", stem, what, nd_min, t->ndims);
		return BAD("%s: %s must be %zu-D to %zu-D (it is %zu-D)", stem, what, nd_min, nd_max, t->ndims);
	}
	return 0;
}

/* ---- GEMMs -------------------------------------------------------------------------- */

/* C (M,N) = A (M,K) · B, B stored (K,N) (b_nk -1) or (N,K) (b_nk 1). */
static int gemm2(const char *stem, const struct perfdb_op_case *raw, const struct perfdb_tensor *a,
		 const struct perfdb_tensor *b, int b_nk, struct perfdb_op_case *c, struct perfdb_err *err)
{
	c->in[0] = *a;
	c->in[1] = *b;
	fold_2d(&c->in[0]);
	int64_t m = c->in[0].dims[0], k = c->in[0].dims[1];
	int64_t bk = b_nk > 0 ? b->dims[1] : b->dims[0], n = b_nk > 0 ? b->dims[0] : b->dims[1];
	if (bk != k)
		return BAD("%s: input's K=%lld differs from the weight's %lld", stem, (long long)k, (long long)bk);
	c->nin = 2;
	c->nout = 1;
	c->b_nk = b_nk;
	PERFDB_TRY(set_tensor(&c->out[0], out_dtype(raw, a->dtype), 2, (int64_t[]){ m, n }, raw->op, err));
	return 0;
}

/* C (bt,M,N) = A (bt,M,K) · B (bt,K,N). */
static int gemm3(const char *stem, const struct perfdb_op_case *raw, const struct perfdb_tensor *a,
		 const struct perfdb_tensor *b, struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (a->dims[0] != b->dims[0])
		return BAD("%s: batch %lld and %lld differ", stem, (long long)a->dims[0], (long long)b->dims[0]);
	if (a->dims[2] != b->dims[1])
		return BAD("%s: K=%lld of input 0 differs from %lld of input 1", stem, (long long)a->dims[2],
			   (long long)b->dims[1]);
	c->in[0] = *a;
	c->in[1] = *b;
	c->nin = 2;
	c->nout = 1;
	c->b_nk = -1;
	int64_t od[3] = { a->dims[0], a->dims[1], b->dims[2] };
	PERFDB_TRY(set_tensor(&c->out[0], out_dtype(raw, a->dtype), 3, od, raw->op, err));
	return 0;
}

/* mm(self (M,K), mat2 (K,N)) */
static int lower_mm(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *a = arg(raw, 0), *b = arg(raw, 1);
	PERFDB_TRY(need(raw->op, a, "self", 2, 2, err));
	PERFDB_TRY(need(raw->op, b, "mat2", 2, 2, err));
	return gemm2(raw->op, raw, a, b, -1, c, err);
}

/* addmm(self (bias), mat1 (M,K), mat2 (K,N), beta, alpha): the bias add is the GEMM's epilogue, not timed apart */
static int lower_addmm(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *a = arg(raw, 1), *b = arg(raw, 2);
	PERFDB_TRY(need(raw->op, a, "mat1", 2, 2, err));
	PERFDB_TRY(need(raw->op, b, "mat2", 2, 2, err));
	return gemm2(raw->op, raw, a, b, -1, c, err);
}

/* linear(input (..., K), weight (N,K), bias) */
static int lower_linear(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *a = arg(raw, 0), *w = arg(raw, 1);
	PERFDB_TRY(need(raw->op, a, "input", 1, PERFDB_SHAPE_MAX_DIMS, err));
	PERFDB_TRY(need(raw->op, w, "weight", 2, 2, err));
	return gemm2(raw->op, raw, a, w, 1, c, err);
}

/* bmm(self (b,M,K), mat2 (b,K,N)) */
static int lower_bmm(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *a = arg(raw, 0), *b = arg(raw, 1);
	PERFDB_TRY(need(raw->op, a, "self", 3, 3, err));
	PERFDB_TRY(need(raw->op, b, "mat2", 3, 3, err));
	return gemm3(raw->op, raw, a, b, c, err);
}

/* baddbmm(self, batch1 (b,M,K), batch2 (b,K,N), beta, alpha) */
static int lower_baddbmm(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *a = arg(raw, 1), *b = arg(raw, 2);
	PERFDB_TRY(need(raw->op, a, "batch1", 3, 3, err));
	PERFDB_TRY(need(raw->op, b, "batch2", 3, 3, err));
	return gemm3(raw->op, raw, a, b, c, err);
}

/*
 * matmul(self, other) by aten's rules: a 1-D operand is a row (self) or a
 * column (other) vector; with a 2-D (or 1-D) other the leading dims of
 * self fold into M; with both at least 3-D the batch dims must be the
 * same and fold into one (a broadcast batch is refused: the copy aten
 * makes for it is not the GEMM's work).
 */
static int lower_matmul(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *a0 = arg(raw, 0), *b0 = arg(raw, 1);
	PERFDB_TRY(need(raw->op, a0, "self", 1, PERFDB_SHAPE_MAX_DIMS, err));
	PERFDB_TRY(need(raw->op, b0, "other", 1, PERFDB_SHAPE_MAX_DIMS, err));
	struct perfdb_tensor a = *a0, b = *b0;
	if (a.ndims == 1) {
		a.dims[1] = a.dims[0];
		a.dims[0] = 1;
		a.ndims = 2;
	}
	if (b.ndims == 1) {
		b.dims[1] = 1;
		b.ndims = 2;
	}
	if (b.ndims == 2)
		return gemm2(raw->op, raw, &a, &b, -1, c, err);
	if (a.ndims < 3)
		return BAD("%s: a 2-D self times a batched other broadcasts self (not replayed)", raw->op);
	if (a.ndims != b.ndims)
		return BAD("%s: batch dims of %zu-D and %zu-D operands broadcast (not replayed)", raw->op, a.ndims, b.ndims);
	int64_t bt = 1;
	for (size_t i = 0; i + 2 < a.ndims; i++) {
		if (a.dims[i] != b.dims[i])
			return BAD("%s: batch dim %zu differs (%lld, %lld): a broadcast batch is not replayed", raw->op, i,
				   (long long)a.dims[i], (long long)b.dims[i]);
		bt *= a.dims[i];
	}
	int64_t ad[3] = { bt, a.dims[a.ndims - 2], a.dims[a.ndims - 1] };
	int64_t bd[3] = { bt, b.dims[b.ndims - 2], b.dims[b.ndims - 1] };
	memcpy(a.dims, ad, sizeof(ad));
	memcpy(b.dims, bd, sizeof(bd));
	a.ndims = b.ndims = 3;
	return gemm3(raw->op, raw, &a, &b, c, err);
}

/* ---- attention ---------------------------------------------------------------------- */

/*
 * The scaled-dot-product attentions: query (B,H,S,D), key and value
 * (B,Hkv,Skv,D / Dv), as FusedInferAttentionScore's BNSD slots 0-2 with
 * the output (B,H,S,Dv).  Attention bias, dropout, is_causal and scale are
 * not recorded by the trace (an optional tensor slot holds the bias of the
 * efficient kernel; it is left out): the row runs full attention.
 */
static int lower_sdpa(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *q = arg(raw, 0), *k = arg(raw, 1), *v = arg(raw, 2);
	PERFDB_TRY(need(raw->op, q, "query", 4, 4, err));
	PERFDB_TRY(need(raw->op, k, "key", 4, 4, err));
	PERFDB_TRY(need(raw->op, v, "value", 4, 4, err));
	c->in[0] = *q;
	c->in[1] = *k;
	c->in[2] = *v;
	c->nin = 3;
	c->nout = 1;
	int64_t od[4] = { q->dims[0], q->dims[1], q->dims[2], v->dims[3] };
	PERFDB_TRY(set_tensor(&c->out[0], q->dtype, 4, od, raw->op, err));
	return 0;
}

/* ---- one input, its shape out ------------------------------------------------------- */

/* x -> op(x) of x's shape (softmax over the last dim, silu, gelu). */
static int lower_self(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *x = arg(raw, 0);
	PERFDB_TRY(need(raw->op, x, "self", 1, PERFDB_SHAPE_MAX_DIMS, err));
	c->in[0] = *x;
	c->nin = c->nout = 1;
	PERFDB_TRY(set_tensor(&c->out[0], out_dtype(raw, x->dtype), x->ndims, x->dims, raw->op, err));
	return 0;
}

/* pow(self, exponent), rsqrt, clone, fill_(self, value): one tensor in, its shape out; 0-d included */
static int lower_unary(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *x = arg(raw, 0);
	PERFDB_TRY(need(raw->op, x, "self", 0, PERFDB_SHAPE_MAX_DIMS, err));
	c->in[0] = *x;
	c->nin = c->nout = 1;
	PERFDB_TRY(set_tensor(&c->out[0], out_dtype(raw, x->dtype), x->ndims, x->dims, raw->op, err));
	/* fill_ writes self and reads no tensor: the value is a scalar */
	if (strncmp(raw->op, "aten.fill_", 10) == 0)
		c->nin = 0;
	return 0;
}

/* masked_fill(self, mask, value): value is a scalar (the target's absent value: 0) */
static int lower_masked_fill(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *x = arg(raw, 0), *m = arg(raw, 1);
	PERFDB_TRY(need(raw->op, x, "self", 1, PERFDB_SHAPE_MAX_DIMS, err));
	PERFDB_TRY(need(raw->op, m, "mask", 1, PERFDB_SHAPE_MAX_DIMS, err));
	c->in[0] = *x;
	c->in[1] = *m;
	c->nin = 2;
	c->nout = 1;
	PERFDB_TRY(set_tensor(&c->out[0], x->dtype, x->ndims, x->dims, raw->op, err));
	return 0;
}

/*
 * sum / mean(self, dim, keepdim, dtype): the dims are a list argument the
 * trace does not record; reduced over the last dim, as RMSNorm's mean and
 * the models' row sums are (keepdim: the output keeps the dim as 1).
 */
static int lower_reduce(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *x = arg(raw, 0);
	PERFDB_TRY(need(raw->op, x, "self", 1, PERFDB_SHAPE_MAX_DIMS, err));
	c->in[0] = *x;
	c->nin = c->nout = 1;
	int64_t d[PERFDB_SHAPE_MAX_DIMS];
	memcpy(d, x->dims, x->ndims * sizeof(*d));
	d[x->ndims - 1] = 1;
	PERFDB_TRY(set_tensor(&c->out[0], out_dtype(raw, x->dtype), x->ndims, d, raw->op, err));
	return 0;
}

/*
 * native_layer_norm / layer_norm(input, normalized_shape, weight, bias, eps)
 * and rms_norm(input, normalized_shape, weight, eps): x, the weight and
 * (layer norm) the bias; the normalised size is the weight's.
 */
static int lower_norm(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *x = arg(raw, 0), *w = arg(raw, 2);
	const struct perfdb_tensor *b = strstr(raw->op, "layer_norm") ? arg(raw, 3) : NULL;
	PERFDB_TRY(need(raw->op, x, "input", 1, PERFDB_SHAPE_MAX_DIMS, err));
	if (!w)
		return BAD("%s: no weight, and the normalised shape (a list argument) is not recorded", raw->op);
	c->in[0] = *x;
	c->in[1] = *w;
	c->nin = 2;
	if (b)
		c->in[c->nin++] = *b;
	c->nout = 1;
	PERFDB_TRY(set_tensor(&c->out[0], out_dtype(raw, x->dtype), x->ndims, x->dims, raw->op, err));
	return 0;
}

/*
 * add/mul(self, other[, alpha]) and their in-place forms: a scalar other
 * (an empty slot) is the target's absent operand; the operands are
 * commutative, so the one that broadcasts goes second (the targets
 * broadcast input 1 trailing-wise).
 */
static int lower_binary(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *a = arg(raw, 0), *b = arg(raw, 1);
	PERFDB_TRY(need(raw->op, a, "self", 0, PERFDB_SHAPE_MAX_DIMS, err));
	size_t len = strlen(raw->op);
	int inplace = len > 0 && raw->op[len - 1] == '_';
	if (b && !inplace && b->numel > a->numel) {
		const struct perfdb_tensor *t = a;
		a = b;
		b = t;
	}
	c->in[0] = *a;
	c->nin = 1;
	if (b) {
		c->in[1] = *b;
		c->nin = 2;
	}
	c->nout = 1;
	PERFDB_TRY(set_tensor(&c->out[0], out_dtype(raw, arg(raw, 0)->dtype), a->ndims, a->dims, raw->op, err));
	return 0;
}

/* ---- data movement ------------------------------------------------------------------ */

/* embedding(weight (V,D), indices (...)) -> (..., D) */
static int lower_embedding(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *w = arg(raw, 0), *ix = arg(raw, 1);
	PERFDB_TRY(need(raw->op, w, "weight", 2, 2, err));
	PERFDB_TRY(need(raw->op, ix, "indices", 0, PERFDB_SHAPE_MAX_DIMS - 1, err));
	c->in[0] = *w;
	c->in[1] = *ix;
	c->nin = 2;
	c->nout = 1;
	int64_t d[PERFDB_SHAPE_MAX_DIMS];
	memcpy(d, ix->dims, ix->ndims * sizeof(*d));
	d[ix->ndims] = w->dims[1];
	PERFDB_TRY(set_tensor(&c->out[0], w->dtype, ix->ndims + 1, d, raw->op, err));
	return 0;
}

/*
 * index_select(self, dim, index): dim is a scalar the trace does not
 * record, so only a 1-D self (dim 0 is the only one) is lowered, as a
 * gather from a (V,1) table.
 */
static int lower_index_select(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *x = arg(raw, 0), *ix = arg(raw, 2);
	PERFDB_TRY(need(raw->op, x, "self", 1, PERFDB_SHAPE_MAX_DIMS, err));
	PERFDB_TRY(need(raw->op, ix, "index", 1, 1, err));
	if (x->ndims != 1)
		return BAD("%s: the dim argument is not recorded, so a %zu-D self is not replayed", raw->op, x->ndims);
	c->in[0] = *x;
	c->in[0].dims[1] = 1;
	c->in[0].ndims = 2;
	c->in[1] = *ix;
	c->nin = 2;
	c->nout = 1;
	PERFDB_TRY(set_tensor(&c->out[0], x->dtype, 2, (int64_t[]){ ix->dims[0], 1 }, raw->op, err));
	return 0;
}

/* The copy of src into a tensor of dst_dtype: TensorMove when the dtypes agree, else Cast. */
static int lower_convert(const struct perfdb_op_case *raw, const struct perfdb_tensor *src, enum perfdb_dtype dst,
			 const struct perfdb_tensor *shape, struct perfdb_op_case *c, struct perfdb_err *err)
{
	c->op = src->dtype == dst ? "TensorMove" : "Cast";
	c->in[0] = *src;
	c->nin = c->nout = 1;
	PERFDB_TRY(set_tensor(&c->out[0], dst, shape->ndims, shape->dims, raw->op, err));
	return 0;
}

/* copy_(self, src, non_blocking): src into self's buffer and dtype */
static int lower_copy(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *dst = arg(raw, 0), *src = arg(raw, 1);
	PERFDB_TRY(need(raw->op, dst, "self", 0, PERFDB_SHAPE_MAX_DIMS, err));
	PERFDB_TRY(need(raw->op, src, "src", 0, PERFDB_SHAPE_MAX_DIMS, err));
	if (src->numel != dst->numel)
		return BAD("%s: src of %lld elements broadcasts into self of %lld (not replayed)", raw->op,
			   (long long)src->numel, (long long)dst->numel);
	return lower_convert(raw, src, dst->dtype, dst, c, err);
}

/* to / _to_copy(self, dtype, ...): the dtype argument is a scalar, known only from a recorded output dtype */
static int lower_to(const struct perfdb_op_case *raw, struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *x = arg(raw, 0);
	PERFDB_TRY(need(raw->op, x, "self", 0, PERFDB_SHAPE_MAX_DIMS, err));
	if (raw->nout < 1 || !raw->out[0].present)
		return BAD("%s: the target dtype (a scalar argument) is not recorded", raw->op);
	return lower_convert(raw, x, raw->out[0].dtype, x, c, err);
}

/* ---- the table ---------------------------------------------------------------------- */

const struct perfdb_aten_op perfdb_aten_ops[] = {
	{ "aten._scaled_dot_product_efficient_attention", "FusedInferAttentionScore", lower_sdpa },
	{ "aten._scaled_dot_product_flash_attention", "FusedInferAttentionScore", lower_sdpa },
	{ "aten._scaled_dot_product_flash_attention_for_cpu", "FusedInferAttentionScore", lower_sdpa },
	{ "aten._softmax", "SoftmaxV2", lower_self },
	{ "aten._to_copy", "Cast", lower_to },
	{ "aten.add", "Add", lower_binary },
	{ "aten.add_", "Add", lower_binary },
	{ "aten.addmm", "MatMulV2", lower_addmm },
	{ "aten.baddbmm", "BatchMatMulV2", lower_baddbmm },
	{ "aten.clone", "TensorMove", lower_unary },
	{ "aten.bmm", "BatchMatMulV2", lower_bmm },
	{ "aten.copy_", "Cast", lower_copy },
	{ "aten.div", "RealDiv", lower_binary },
	{ "aten.div_", "RealDiv", lower_binary },
	{ "aten.embedding", "GatherV2", lower_embedding },
	{ "aten.fill_", "Fill", lower_unary },
	{ "aten.gelu", "Gelu", lower_self },
	{ "aten.index_select", "GatherV2", lower_index_select },
	{ "aten.layer_norm", "LayerNormV3", lower_norm },
	{ "aten.linear", "MatMulV2", lower_linear },
	{ "aten.masked_fill", "MaskedFill", lower_masked_fill },
	{ "aten.masked_fill_", "MaskedFill", lower_masked_fill },
	{ "aten.matmul", "MatMulV2", lower_matmul },
	{ "aten.mean", "ReduceMean", lower_reduce },
	{ "aten.mm", "MatMulV2", lower_mm },
	{ "aten.mul", "Mul", lower_binary },
	{ "aten.mul_", "Mul", lower_binary },
	{ "aten.native_layer_norm", "LayerNormV3", lower_norm },
	{ "aten.pow", "Pow", lower_unary },
	{ "aten.rms_norm", "RmsNorm", lower_norm },
	{ "aten.rsqrt", "Rsqrt", lower_unary },
	{ "aten.scaled_dot_product_attention", "FusedInferAttentionScore", lower_sdpa },
	{ "aten.silu", "Silu", lower_self },
	{ "aten.silu_", "Silu", lower_self },
	{ "aten.softmax", "SoftmaxV2", lower_self },
	{ "aten.sub", "Sub", lower_binary },
	{ "aten.sum", "ReduceSum", lower_reduce },
	{ "aten.sub_", "Sub", lower_binary },
	{ "aten.to", "Cast", lower_to },
};
const size_t perfdb_aten_nops = sizeof(perfdb_aten_ops) / sizeof(perfdb_aten_ops[0]);

const struct perfdb_aten_op *perfdb_aten_find(const char *stem)
{
	for (size_t i = 0; stem && i < perfdb_aten_nops; i++)
		if (strcmp(perfdb_aten_ops[i].stem, stem) == 0)
			return &perfdb_aten_ops[i];
	return NULL;
}

int perfdb_aten_lower(const struct perfdb_aten_op *a, const struct perfdb_op_case *raw, struct perfdb_op_case *c,
		      struct perfdb_err *err)
{
	memset(c, 0, sizeof(*c));
	c->op = a->target;
	c->threads = raw->threads;
	PERFDB_TRY(a->lower(raw, c, err));
	/* matmul lowers to the batched GEMM when its operands are batched (copies: TensorMove or Cast) */
	if (strcmp(c->op, "MatMulV2") == 0 && c->in[0].ndims == 3)
		c->op = "BatchMatMulV2";
	c->def = perfdb_opdef_get(c->op);
	return 0;
}
