/*
 * CPU backend, data-movement ops (docs/spec/replay.md §4; docs/ops.md): GatherV2,
 * Index, Transpose, Slice, PadV3, ScatterNdUpdate.  They move elements of
 * any dtype as bytes.  Their row rules and index spreading are the
 * operator layer's (src/ops/rules_index.c, index_fill.c).
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "cpu_rope.h"

static size_t esize(const struct perfdb_tensor *t)
{
	return perfdb_dtype_bytes(t->dtype, 1);
}

/* ---- GatherV2: out[i, :] = w[idx[i], :] (w = in0 (V,H), idx = in1) ---- */

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

/* The strides of the swap the operator layer found (the row passed its check). */
static int tr_plan(const struct perfdb_op_case *c, struct tr *p, struct perfdb_err *err)
{
	size_t d[2];
	PERFDB_TRY(perfdb_transpose_dims(c, d, err));
	const struct perfdb_tensor *x = &c->in[0];
	*p = (struct tr){ 1, (size_t)x->dims[d[0]], 1, (size_t)x->dims[d[1]], esize(x) };
	for (size_t i = 0; i < d[0]; i++)
		p->outer *= (size_t)x->dims[i];
	for (size_t i = d[0] + 1; i < d[1]; i++)
		p->mid *= (size_t)x->dims[i];
	for (size_t i = d[1] + 1; i < x->ndims; i++)
		p->inner *= (size_t)x->dims[i];
	return 0;
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
	enum perfdb_cpu_isa isa;
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
				  (uint16_t *)(t->o + io * mat + r0 * 8 * 2), (r1 - r0) * 8, p->b, p->b, p->a, t->nt, t->isa);
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
	struct tr_args t = { .x = c->in[0].data, .o = c->out[0].data, .isa = cpu_isa_of(c) };
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

/*
 * ---- Index: out0 = x[idx] along dim 0 ----
 * aclnnIndex slots: in0 x, in1 indexed sizes, in2 indexed strides, last
 * input the indices (numel = out0's first dim); the signature of spec §1b
 * keeps [in0, out0[0]] for the same reason.
 */
static int index_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	const struct perfdb_tensor *x = &c->in[0], *ix = perfdb_index_indices(c);
	size_t row = (size_t)(x->numel / x->dims[0]) * esize(x);
	for (size_t i = 0; i < (size_t)ix->numel; i++)
		memcpy((char *)c->out[0].data + i * row, (const char *)x->data + (size_t)cpu_ld_int(ix, i) * row, row);
	return 0;
}

/* ---- PadV3 (constant 0): out0 = x placed at offset 0 of a zero tensor of out0's shape ---- */

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
	{ .name = "GatherV2", .check = cpu_no_limits, .prepare = perfdb_gather_indices, .run = gather_run },
	{ .name = "Index", .check = cpu_no_limits, .prepare = perfdb_gather_indices, .run = index_run },
	{ .name = "PadV3", .check = cpu_no_limits, .run = pad_run },
	{ .name = "ScatterNdUpdate", .check = cpu_no_limits, .prepare = perfdb_gather_indices,
	  .run = scatter_run },
	{ .name = "Slice", .check = cpu_no_limits, .run = slice_run },
	{ .name = "Transpose", .check = cpu_no_limits, .run = tr_run },
	{ .name = NULL },
};
