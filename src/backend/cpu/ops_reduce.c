/*
 * CPU backend, reductions and sorting (docs/spec/replay.md §4; docs/ops.md):
 * ArgMaxV2, ReduceSum, ReduceMean, Sort.
 */
#include <stdlib.h>

#include "cpu_internal.h"

static void put_index(struct perfdb_tensor *t, size_t i, int64_t v)
{
	if (t->dtype == PERFDB_DTYPE_INT64)
		((int64_t *)t->data)[i] = v;
	else
		((int32_t *)t->data)[i] = (int32_t)v;
}

/*
 * ---- ArgMaxV2: out0 = argmax of in0 over one dim ----
 * The dim is the one the output lacks (or, with keepdim, the one that is 1
 * in the output only): the dimension slot lives on the device and is not
 * recorded.  First maximum wins, as torch.argmax.
 */
struct red { size_t outer, d, inner; };

static int argmax_plan(const struct perfdb_op_case *c, struct red *p, struct perfdb_err *err)
{
	size_t dim;
	PERFDB_TRY(perfdb_argmax_dim(c, &dim, err));
	const struct perfdb_tensor *x = &c->in[0];
	*p = (struct red){ 1, (size_t)x->dims[dim], 1 };
	for (size_t i = 0; i < dim; i++)
		p->outer *= (size_t)x->dims[i];
	for (size_t i = dim + 1; i < x->ndims; i++)
		p->inner *= (size_t)x->dims[i];
	return 0;
}

static int argmax_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct red p;
	PERFDB_TRY(argmax_plan(c, &p, err));
	const struct perfdb_tensor *x = &c->in[0];
	for (size_t o = 0; o < p.outer; o++)
		for (size_t i = 0; i < p.inner; i++) {
			size_t base = o * p.d * p.inner + i, best = 0;
			float bv = cpu_ld(x, base);
			for (size_t k = 1; k < p.d; k++) {
				float v = cpu_ld(x, base + k * p.inner);
				if (v > bv) {
					bv = v;
					best = k;
				}
			}
			put_index(&c->out[0], o * p.inner + i, (int64_t)best);
		}
	return 0;
}

/* ---- Sort: ascending over the last dim; out0 values, out1 indices (optional) ---- */

struct kv { float v; int64_t i; };

static int kv_cmp(const void *a, const void *b)
{
	const struct kv *x = a, *y = b;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;   /* stable */
}

static int sort_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *x = &c->in[0];
	c->priv = malloc((size_t)x->dims[x->ndims - 1] * sizeof(struct kv) + 1);
	return c->priv ? 0 : perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
}

static int sort_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	const struct perfdb_tensor *x = &c->in[0];
	struct perfdb_tensor *idx = c->nout > 1 && c->out[1].present ? &c->out[1] : NULL;
	size_t h = (size_t)x->dims[x->ndims - 1], rows = h ? (size_t)x->numel / h : 0;
	struct kv *kv = c->priv;
	for (size_t r = 0; r < rows; r++) {
		for (size_t j = 0; j < h; j++)
			kv[j] = (struct kv){ cpu_ld(x, r * h + j), (int64_t)j };
		qsort(kv, h, sizeof(*kv), kv_cmp);
		for (size_t j = 0; j < h; j++) {
			cpu_store_row(&c->out[0], r * h + j, 1, &kv[j].v);
			if (idx)
				put_index(idx, r * h + j, kv[j].i);
		}
	}
	return 0;
}

static void sort_release(struct perfdb_op_case *c)
{
	free(c->priv);
	c->priv = NULL;
}

/*
 * ---- ReduceSum, ReduceMean: out0[r] = sum (or mean) of row r of in0 over its last dim ----
 * PyTorch's sum and mean rows (the dims they reduce are a list argument the
 * trace drops: the last, as RMSNorm's mean).  Rows in fp32 blocks, summed
 * in fp32 lanes; rows go to the threads in contiguous ranges.
 */
#define RBLK 1024

struct rsum {
	struct perfdb_op_case *c;
	size_t h;
	int mean;
};

CPU_CLONES static void rsum_range(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	const struct rsum *p = ctx;
	float v[RBLK];
	for (size_t r = lo; r < hi; r++) {
		float acc = 0.0f;
		for (size_t j = 0; j < p->h; j += RBLK) {
			size_t m = p->h - j < RBLK ? p->h - j : RBLK;
			cpu_load_row(&p->c->in[0], r * p->h + j, m, v);
			float part = 0.0f;
			for (size_t k = 0; k < m; k++)
				part += v[k];
			acc += part;
		}
		float out = p->mean ? acc / (float)p->h : acc;
		cpu_store_row(&p->c->out[0], r, 1, &out);
	}
}

static int rsum_run(struct perfdb_op_case *c, int mean)
{
	const struct perfdb_tensor *x = &c->in[0];
	struct rsum p = { c, (size_t)x->dims[x->ndims - 1], mean };
	size_t rows = (size_t)x->numel / p.h;
	cpu_parallel(rows, (size_t)x->numel, c->threads, rsum_range, &p);
	return 0;
}

static int reduce_sum_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	return rsum_run(c, 0);
}

static int reduce_mean_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	return rsum_run(c, 1);
}

const struct perfdb_op_impl cpu_ops_reduce[] = {
	{ .name = "ArgMaxV2", .check = cpu_no_limits, .run = argmax_run },
	{ .name = "ReduceMean", .check = cpu_no_limits, .run = reduce_mean_run },
	{ .name = "ReduceSum", .check = cpu_no_limits, .run = reduce_sum_run },
	{ .name = "Sort", .check = cpu_no_limits, .prepare = sort_prepare, .run = sort_run,
	  .release = sort_release },
	{ .name = NULL },
};
