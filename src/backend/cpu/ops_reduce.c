/*
 * CPU backend, reductions and sorting (docs/spec/replay.md §4; docs/ops.md):
 * ArgMaxV2, Sort.
 */
#include <stdlib.h>

#include "cpu_internal.h"

static int is_index_dtype(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_INT32 || d == PERFDB_DTYPE_INT64;
}

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
	if (c->nin < 1 || !c->in[0].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "ArgMaxV2 needs an input and an output");
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	if (!cpu_is_float(x->dtype) || !is_index_dtype(o->dtype) || x->ndims < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "ArgMaxV2: needs a float input and an int32/int64 output");
	size_t dim = x->ndims;
	for (size_t d = 0; d < x->ndims && dim == x->ndims; d++) {
		int ok = 1;
		if (o->ndims + 1 == x->ndims) {
			for (size_t i = 0, j = 0; i < x->ndims; i++)
				if (i != d)
					ok &= x->dims[i] == o->dims[j++];
		} else if (o->ndims == x->ndims) {
			for (size_t i = 0; i < x->ndims; i++)
				ok &= i == d ? o->dims[i] == 1 : x->dims[i] == o->dims[i];
		} else {
			ok = 0;
		}
		if (ok)
			dim = d;
	}
	if (dim == x->ndims)
		return perfdb_err_set(err, PERFDB_EINVAL, "ArgMaxV2: the output is not the input less one dim");
	*p = (struct red){ 1, (size_t)x->dims[dim], 1 };
	for (size_t i = 0; i < dim; i++)
		p->outer *= (size_t)x->dims[i];
	for (size_t i = dim + 1; i < x->ndims; i++)
		p->inner *= (size_t)x->dims[i];
	return p->d ? 0 : perfdb_err_set(err, PERFDB_EINVAL, "ArgMaxV2: empty reduction");
}

static int argmax_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct red p;
	return argmax_plan(c, &p, err);
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

static int sort_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 1 || !c->in[0].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "Sort needs an input and an output");
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	if (!cpu_is_float(x->dtype) || !cpu_is_float(o->dtype) || x->numel != o->numel || x->ndims < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "Sort: input and values output must be float tensors of one size");
	if (c->nout > 1 && c->out[1].present && (!is_index_dtype(c->out[1].dtype) || c->out[1].numel != x->numel))
		return perfdb_err_set(err, PERFDB_EINVAL, "Sort: indices output must be int32/int64 of the input's size");
	return 0;
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

const struct perfdb_op_impl cpu_ops_reduce[] = {
	{ .name = "ArgMaxV2", .check = argmax_check, .run = argmax_run },
	{ .name = "Sort", .check = sort_check, .prepare = sort_prepare, .run = sort_run,
	  .release = sort_release },
	{ .name = NULL },
};
