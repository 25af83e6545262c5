/*
 * CPU backend, data-movement ops (docs/spec/replay.md §4; docs/ops.md): GatherV2,
 * Index, Transpose, Slice, PadV3, ScatterNdUpdate.  They move elements of
 * any dtype as bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "cpu_rope.h"

static size_t esize(const struct perfdb_tensor *t)
{
	return perfdb_dtype_bytes(t->dtype, 1);
}

static int is_int(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_INT32 || d == PERFDB_DTYPE_INT64 || d == PERFDB_DTYPE_INT16 ||
	       d == PERFDB_DTYPE_INT8 || d == PERFDB_DTYPE_UINT8;
}

/*
 * An index in [0, v) from the filled value k and the position i: spread over
 * the whole table (randint(0, 8) alone would hit 8 cache-hot rows), and
 * deterministic.
 */
static int64_t spread(int64_t k, size_t i, int64_t v)
{
	uint64_t h = ((uint64_t)k + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)i * 0xbf58476d1ce4e5b9ull;
	return (int64_t)((h >> 11) % (uint64_t)v);
}

/* ---- GatherV2: out[i, :] = w[idx[i], :] (w = in0 (V,H), idx = in1) ---- */

static int gather_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 2 || !c->in[0].present || !c->in[1].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "GatherV2 needs inputs w, idx and an output");
	const struct perfdb_tensor *w = &c->in[0], *ix = &c->in[1], *o = &c->out[0];
	if (w->ndims != 2 || w->dims[0] < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "GatherV2: input 0 must be a 2-D table");
	if (!is_int(ix->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "GatherV2: indices must be integers");
	if (o->numel != ix->numel * w->dims[1] || o->dtype != w->dtype)
		return perfdb_err_set(err, PERFDB_EINVAL, "GatherV2: output must be (indices..., %lld) of the table's dtype",
				      (long long)w->dims[1]);
	return 0;
}

/* Indices come filled with randint(0,8): spread them over the table. */
static int gather_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	struct perfdb_tensor *ix = &c->in[1];
	int64_t v = c->in[0].dims[0];
	for (size_t i = 0; i < (size_t)ix->numel; i++) {
		int64_t k = cpu_ld_int(ix, i);
		k = spread(k, i, v);
		switch (ix->dtype) {
		case PERFDB_DTYPE_INT64: ((int64_t *)ix->data)[i] = k; break;
		case PERFDB_DTYPE_INT32: ((int32_t *)ix->data)[i] = (int32_t)k; break;
		case PERFDB_DTYPE_INT16: ((int16_t *)ix->data)[i] = (int16_t)k; break;
		default: ((uint8_t *)ix->data)[i] = (uint8_t)k; break;
		}
	}
	return 0;
}

static void gather_range(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	struct perfdb_op_case *c = ctx;
	const struct perfdb_tensor *w = &c->in[0], *ix = &c->in[1];
	size_t row = (size_t)w->dims[1] * esize(w);
	char *o = c->out[0].data;
	const char *src = w->data;
	for (size_t i = lo; i < hi; i++)
		memcpy(o + i * row, src + (size_t)cpu_ld_int(ix, i) * row, row);
}

static int gather_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	cpu_parallel((size_t)c->in[1].numel, (size_t)c->out[0].numel, c->threads, gather_range, c);
	return 0;
}

/*
 * ---- Transpose: out = in0.transpose(d0, d1).contiguous() ----
 * d0, d1: the first two positions where the input and output dims differ,
 * else (0, 1) (spec §4 table).  Stored as [outer][A][mid][B][inner] ->
 * [outer][B][mid][A][inner], moved inner-block-wise.
 */
struct tr { size_t outer, a, mid, b, inner; };

static int tr_plan(const struct perfdb_op_case *c, struct tr *p, struct perfdb_err *err)
{
	if (c->nin < 1 || !c->in[0].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "Transpose needs an input and an output");
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	if (x->ndims != o->ndims || x->ndims < 2 || x->numel != o->numel || x->dtype != o->dtype)
		return perfdb_err_set(err, PERFDB_EINVAL, "Transpose: input and output must have the same rank, size and dtype");
	size_t d[2] = { 0, 1 }, nd = 0;
	for (size_t i = 0; i < x->ndims && nd < 2; i++)
		if (x->dims[i] != o->dims[i])
			d[nd++] = i;
	if (nd == 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "Transpose: output is not a transpose of the input");
	if (nd == 0) {
		d[0] = 0;
		d[1] = 1;
	}
	if (x->dims[d[0]] != o->dims[d[1]] || x->dims[d[1]] != o->dims[d[0]])
		return perfdb_err_set(err, PERFDB_EINVAL, "Transpose: dims %zu and %zu are not swapped", d[0], d[1]);
	*p = (struct tr){ 1, (size_t)x->dims[d[0]], 1, (size_t)x->dims[d[1]], esize(x) };
	for (size_t i = 0; i < d[0]; i++)
		p->outer *= (size_t)x->dims[i];
	for (size_t i = d[0] + 1; i < d[1]; i++)
		p->mid *= (size_t)x->dims[i];
	for (size_t i = d[1] + 1; i < x->ndims; i++)
		p->inner *= (size_t)x->dims[i];
	return 0;
}

static int tr_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct tr p;
	return tr_plan(c, &p, err);
}

/*
 * Element-wise transpose of one (A x B) plane in 64x64 tiles: ld_* are row
 * strides in elements.  Each tile is first copied row by row into a local
 * buffer (whole cache lines, contiguous), then written out row by row from
 * it: reading a tile column-wise straight from the input touches 64 lines a
 * power-of-two stride apart, which share an L1 set and evict each other.
 */
#define TILE 64
#define TR_TILED(T)                                                                              \
	CPU_CLONES static void tr_tiled_##T(const T *x, T *o, size_t a, size_t b, size_t ld_x, size_t ld_o) \
	{                                                                                        \
		T buf[TILE][TILE];                                                               \
		for (size_t a0 = 0; a0 < a; a0 += TILE)                                          \
			for (size_t b0 = 0; b0 < b; b0 += TILE) {                                \
				size_t na = a0 + TILE < a ? TILE : a - a0;                       \
				size_t nb = b0 + TILE < b ? TILE : b - b0;                       \
				if (na == TILE && nb == TILE) { /* constant bounds: unrolled */   \
					for (size_t i = 0; i < TILE; i++)                        \
						memcpy(buf[i], x + (a0 + i) * ld_x + b0, sizeof(buf[i])); \
					for (size_t j = 0; j < TILE; j++) {                      \
						T *dst = o + (b0 + j) * ld_o + a0;               \
						for (size_t i = 0; i < TILE; i++)                \
							dst[i] = buf[i][j];                      \
					}                                                        \
					continue;                                                \
				}                                                                \
				for (size_t i = 0; i < na; i++)                                  \
					memcpy(buf[i], x + (a0 + i) * ld_x + b0, nb * sizeof(T)); \
				for (size_t j = 0; j < nb; j++) {                                \
					T *dst = o + (b0 + j) * ld_o + a0;                       \
					for (size_t i = 0; i < na; i++)                          \
						dst[i] = buf[i][j];                              \
				}                                                                \
			}                                                                        \
	}
TR_TILED(uint8_t)
TR_TILED(uint16_t)
TR_TILED(uint32_t)
TR_TILED(uint64_t)

/*
 * 2-byte elements with a row count that is a multiple of 8 take
 * kern_transpose.c's kernel instead of the tiles above (its vector tile
 * copy, prefetch and 8x8 register transposes); outputs past the
 * last-level cache with streaming stores, smaller ones with ordinary ones,
 * since streaming stores would push out of the cache a result the next op
 * reads.
 */
#define NT_MIN_BYTES ((size_t)32 << 20)

struct tr_args {
	struct tr p;
	const char *x;
	char *o;
	int nt;
};

/*
 * The last two dims swapped: rows [lo, hi) of every (A, B) matrix (over
 * outer * A rows in all) go to columns [lo, hi) of its (B, A) transpose,
 * so threads own disjoint output columns.
 */
static void tr_tiled_range(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	const struct tr_args *t = ctx;
	const struct tr *p = &t->p;
	size_t es = p->inner, mat = p->a * p->b * es;
	for (size_t q = lo; q < hi;) {
		size_t io = q / p->a, r0 = q % p->a, r1 = io == (hi - 1) / p->a ? (hi - 1) % p->a + 1 : p->a;
		const char *xi = t->x + io * mat + r0 * p->b * es;
		char *oi = t->o + io * mat + r0 * es;
		size_t na = r1 - r0;
		switch (es) {
		case 1: tr_tiled_uint8_t((const uint8_t *)xi, (uint8_t *)oi, na, p->b, p->b, p->a); break;
		case 2: tr_tiled_uint16_t((const uint16_t *)xi, (uint16_t *)oi, na, p->b, p->b, p->a); break;
		case 4: tr_tiled_uint32_t((const uint32_t *)xi, (uint32_t *)oi, na, p->b, p->b, p->a); break;
		default: tr_tiled_uint64_t((const uint64_t *)xi, (uint64_t *)oi, na, p->b, p->b, p->a); break;
		}
		q += na;
	}
}

/* As tr_tiled_range, in units of 8 rows (so every range starts 16-byte aligned in the output). */
static void tr_u16_range(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	const struct tr_args *t = ctx;
	const struct tr *p = &t->p;
	size_t g = p->a / 8, mat = p->a * p->b * 2;
	for (size_t q = lo; q < hi;) {
		size_t io = q / g, r0 = q % g, r1 = io == (hi - 1) / g ? (hi - 1) % g + 1 : g;
		cpu_transpose_u16((const uint16_t *)(t->x + io * mat + r0 * 8 * p->b * 2),
				  (uint16_t *)(t->o + io * mat + r0 * 8 * 2), (r1 - r0) * 8, p->b, p->b, p->a, t->nt);
		q += r1 - r0;
	}
}

/* The general case: (outer, b) pairs [lo, hi) over threads. */
static void tr_gen_range(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	const struct tr_args *t = ctx;
	const struct tr *p = &t->p;
	size_t in_b = p->inner, in_m = p->b * in_b, in_a = p->mid * in_m, in_o = p->a * in_a;
	size_t out_a = p->inner, out_m = p->a * out_a, out_b = p->mid * out_m;
	for (size_t q = lo; q < hi; q++) {
		size_t io = q / p->b, ib = q % p->b;
		for (size_t im = 0; im < p->mid; im++)
			for (size_t ia = 0; ia < p->a; ia++)
				memcpy(t->o + io * in_o + ib * out_b + im * out_m + ia * out_a,
				       t->x + io * in_o + ia * in_a + im * in_m + ib * in_b, p->inner);
	}
}

static int tr_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct tr_args t = { .x = c->in[0].data, .o = c->out[0].data };
	PERFDB_TRY(tr_plan(c, &t.p, err));
	const struct tr *p = &t.p;
	size_t work = p->outer * p->a * p->mid * p->b * p->inner;
	t.nt = c->out[0].bytes >= NT_MIN_BYTES && cpu_transpose_u16_ok(t.o, p->a, p->a, 1);
	if (p->mid == 1 && p->inner == 2 && cpu_transpose_u16_ok(t.o, p->a, p->a, t.nt)) {
		cpu_parallel(p->outer * p->a / 8, work, c->threads, tr_u16_range, &t);
		return 0;
	}
	if (p->mid == 1 && (p->inner == 1 || p->inner == 2 || p->inner == 4 || p->inner == 8))
		cpu_parallel(p->outer * p->a, work, c->threads, tr_tiled_range, &t);
	else
		cpu_parallel(p->outer * p->b, work, c->threads, tr_gen_range, &t);
	return 0;
}

/* ---- Slice: out = in0[0:out.dims[0], 0:out.dims[1], ...] (offsets zero) ---- */

static int slice_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 1 || !c->in[0].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "Slice needs an input and an output");
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	if (x->ndims != o->ndims || x->dtype != o->dtype || x->ndims < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "Slice: input and output must have the same rank and dtype");
	for (size_t i = 0; i < x->ndims; i++)
		if (o->dims[i] > x->dims[i])
			return perfdb_err_set(err, PERFDB_EINVAL, "Slice: output dim %zu exceeds the input", i);
	return 0;
}

static int slice_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	size_t es = esize(x), nd = x->ndims, rowb = (size_t)o->dims[nd - 1] * es;
	size_t rows = (size_t)(o->dims[nd - 1] ? o->numel / o->dims[nd - 1] : 0);
	int64_t idx[PERFDB_SHAPE_MAX_DIMS] = { 0 };
	for (size_t r = 0; r < rows; r++) {
		size_t off = 0;   /* element offset of (idx..., 0) in x */
		for (size_t i = 0; i + 1 < nd; i++)
			off = off * (size_t)x->dims[i] + (size_t)idx[i];
		off *= (size_t)x->dims[nd - 1];
		memcpy((char *)o->data + r * rowb, (const char *)x->data + off * es, rowb);
		for (size_t i = nd - 1; i-- > 0;) {   /* next output row index */
			if (++idx[i] < o->dims[i])
				break;
			idx[i] = 0;
		}
	}
	return 0;
}

/* Spread an integer tensor's values over [0, v) (inputs are filled with randint(0, 8)). */
static void fold_indices(struct perfdb_tensor *ix, int64_t v)
{
	for (size_t i = 0; i < (size_t)ix->numel; i++) {
		int64_t k = cpu_ld_int(ix, i);
		k = spread(k, i, v);
		switch (ix->dtype) {
		case PERFDB_DTYPE_INT64: ((int64_t *)ix->data)[i] = k; break;
		case PERFDB_DTYPE_INT32: ((int32_t *)ix->data)[i] = (int32_t)k; break;
		case PERFDB_DTYPE_INT16: ((int16_t *)ix->data)[i] = (int16_t)k; break;
		case PERFDB_DTYPE_FLOAT: ((float *)ix->data)[i] = (float)k; break;   /* exact below 2^24 */
		default: ((uint8_t *)ix->data)[i] = (uint8_t)k; break;
		}
	}
}

/*
 * ---- Index: out0 = x[idx] along dim 0 ----
 * aclnnIndex slots: in0 x, in1 indexed sizes, in2 indexed strides, last
 * input the indices (numel = out0's first dim); the signature of spec §1b
 * keeps [in0, out0[0]] for the same reason.
 */
static const struct perfdb_tensor *index_ix(const struct perfdb_op_case *c)
{
	/*
	 * The integer slot with out0's first dim (the grid writes x;(1,);(o,);(1,)),
	 * then an fp32 one: a grown row whose template listed fewer dtypes than
	 * slots leaves the indices at the default DT_FLOAT (spec §4); they are
	 * read as whole numbers.  Else the last present slot.
	 */
	if (c->nout > 0 && c->out[0].present && c->out[0].ndims > 0) {
		for (size_t i = c->nin; i-- > 1;)
			if (c->in[i].present && is_int(c->in[i].dtype) && c->in[i].numel == c->out[0].dims[0])
				return &c->in[i];
		for (size_t i = c->nin; i-- > 1;)
			if (c->in[i].present && c->in[i].dtype == PERFDB_DTYPE_FLOAT && c->in[i].numel == c->out[0].dims[0])
				return &c->in[i];
	}
	for (size_t i = c->nin; i-- > 1;)
		if (c->in[i].present)
			return &c->in[i];
	return NULL;
}

static int index_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 2 || !c->in[0].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "Index needs x, indices and an output");
	const struct perfdb_tensor *x = &c->in[0], *ix = index_ix(c), *o = &c->out[0];
	if (!ix || !(is_int(ix->dtype) || (ix->dtype == PERFDB_DTYPE_FLOAT && x->dims[0] <= (1 << 24))) ||
	    x->ndims < 1 || x->dims[0] < 1 || o->ndims < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "Index: needs a non-empty x and integer indices");
	int64_t row = x->dims[0] ? x->numel / x->dims[0] : 0;
	if (o->dtype != x->dtype || ix->numel != o->dims[0] || o->numel != ix->numel * row)
		return perfdb_err_set(err, PERFDB_EINVAL, "Index: output must be (indices, x.shape[1:]) of x's dtype");
	return 0;
}

static int index_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	fold_indices((struct perfdb_tensor *)index_ix(c), c->in[0].dims[0]);
	return 0;
}

static int index_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	const struct perfdb_tensor *x = &c->in[0], *ix = index_ix(c);
	size_t row = (size_t)(x->numel / x->dims[0]) * esize(x);
	for (size_t i = 0; i < (size_t)ix->numel; i++)
		memcpy((char *)c->out[0].data + i * row, (const char *)x->data + (size_t)cpu_ld_int(ix, i) * row, row);
	return 0;
}

/* ---- PadV3 (constant 0): out0 = x placed at offset 0 of a zero tensor of out0's shape ---- */

static int pad_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 1 || !c->in[0].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "PadV3 needs an input and an output");
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	if (x->ndims != o->ndims || x->dtype != o->dtype || x->ndims < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "PadV3: input and output must have the same rank and dtype");
	for (size_t i = 0; i < x->ndims; i++)
		if (o->dims[i] < x->dims[i])
			return perfdb_err_set(err, PERFDB_EINVAL, "PadV3: output dim %zu is below the input's", i);
	return 0;
}

static int pad_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	size_t es = esize(x), nd = x->ndims, rowb = (size_t)x->dims[nd - 1] * es;
	size_t rows = (size_t)(x->dims[nd - 1] ? x->numel / x->dims[nd - 1] : 0);
	memset(o->data, 0, o->bytes);
	int64_t idx[PERFDB_SHAPE_MAX_DIMS] = { 0 };
	for (size_t r = 0; r < rows; r++) {
		size_t off = 0;   /* element offset of (idx..., 0) in out */
		for (size_t i = 0; i + 1 < nd; i++)
			off = off * (size_t)o->dims[i] + (size_t)idx[i];
		off *= (size_t)o->dims[nd - 1];
		memcpy((char *)o->data + off * es, (const char *)x->data + r * rowb, rowb);
		for (size_t i = nd - 1; i-- > 0;) {
			if (++idx[i] < x->dims[i])
				break;
			idx[i] = 0;
		}
	}
	return 0;
}

/*
 * ---- ScatterNdUpdate: var[idx[i]] = updates[i], in place on var ----
 * in0 var (V, ...), in1 indices (N, 1) integer, in2 updates (N, ...); out0
 * is var itself on the NPU and is not written separately.
 */
static int scatter_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 3 || !c->in[0].present || !c->in[1].present || !c->in[2].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "ScatterNdUpdate needs var, indices and updates");
	const struct perfdb_tensor *v = &c->in[0], *ix = &c->in[1], *u = &c->in[2];
	if (!is_int(ix->dtype) || ix->ndims < 1 || ix->dims[ix->ndims - 1] != 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "ScatterNdUpdate: indices must be integers of shape (N, 1)");
	if (v->ndims < 1 || v->dims[0] < 1 || u->dtype != v->dtype ||
	    u->numel != ix->numel * (v->numel / v->dims[0]))
		return perfdb_err_set(err, PERFDB_EINVAL, "ScatterNdUpdate: updates must be (N, var.shape[1:]) of var's dtype");
	return 0;
}

/*
 * Distinct rows of var when there are no more updates than rows (as a KV
 * cache's slot updates: each slot written once, so the result does not
 * depend on the order of the writes, on any backend); repeats otherwise.
 */
static int scatter_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_tensor *ix = &c->in[1];
	int64_t v = c->in[0].dims[0];
	size_t n = (size_t)ix->numel;
	if (n == 0 || (int64_t)n > v) {
		fold_indices(ix, v);
		return 0;
	}
	int64_t *rows = malloc(n * sizeof(int64_t));
	if (!rows)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	cpu_slots_distinct(rows, n, v, 1);
	cpu_store_index(ix, rows, n);
	free(rows);
	return 0;
}

static int scatter_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	const struct perfdb_tensor *v = &c->in[0], *ix = &c->in[1], *u = &c->in[2];
	size_t row = (size_t)(v->numel / v->dims[0]) * esize(v);
	for (size_t i = 0; i < (size_t)ix->numel; i++)
		memcpy((char *)v->data + (size_t)cpu_ld_int(ix, i) * row, (const char *)u->data + i * row, row);
	return 0;
}

const struct perfdb_op_impl cpu_ops_index[] = {
	{ .name = "GatherV2", .check = gather_check, .prepare = gather_prepare, .run = gather_run },
	{ .name = "Index", .check = index_check, .prepare = index_prepare, .run = index_run },
	{ .name = "PadV3", .check = pad_check, .run = pad_run },
	{ .name = "ScatterNdUpdate", .check = scatter_check, .prepare = scatter_prepare,
	  .run = scatter_run },
	{ .name = "Slice", .check = slice_check, .run = slice_run },
	{ .name = "Transpose", .check = tr_check, .run = tr_run },
	{ .name = NULL },
};
