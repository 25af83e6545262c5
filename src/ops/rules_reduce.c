/*
 * The reduction family's row rules (docs/ops.md "Reductions"): ArgMaxV2
 * (and which dim it reduces, which every backend reads) and Sort.
 */
#include "ops/opdef.h"
#include "ops/rules.h"

static int is_index_dtype(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_INT32 || d == PERFDB_DTYPE_INT64;
}

/*
 * The dim is the one the output lacks (or, with keepdim, the one that is 1
 * in the output only): the dimension slot lives on the device and is not
 * recorded.
 */
int perfdb_argmax_dim(const struct perfdb_op_case *c, size_t *dim, struct perfdb_err *err)
{
	if (c->nin < 1 || !c->in[0].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "ArgMaxV2 needs an input and an output");
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	if (!perfdb_dtype_is_float(x->dtype) || !is_index_dtype(o->dtype) || x->ndims < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "ArgMaxV2: needs a float input and an int32/int64 output");
	*dim = x->ndims;
	for (size_t d = 0; d < x->ndims && *dim == x->ndims; d++) {
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
			*dim = d;
	}
	if (*dim == x->ndims)
		return perfdb_err_set(err, PERFDB_EINVAL, "ArgMaxV2: the output is not the input less one dim");
	return x->dims[*dim] ? 0 : perfdb_err_set(err, PERFDB_EINVAL, "ArgMaxV2: empty reduction");
}

int perfdb_rules_argmax(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	size_t dim;
	return perfdb_argmax_dim(c, &dim, err);
}

/* ReduceSum, ReduceMean over the last dim: float in0 (…, H), out0 (…) or (…, 1). */
int perfdb_rules_reduce_last(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 1 || !c->in[0].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs an input and an output", c->op);
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	if (!perfdb_dtype_is_float(x->dtype) || !perfdb_dtype_is_float(o->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: only fp32/bf16/fp16 tensors are supported", c->op);
	if (x->ndims < 1 || x->dims[x->ndims - 1] < 1 || o->numel * x->dims[x->ndims - 1] != x->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: the output must have one element per row of "
				      "the input's last dim", c->op);
	return 0;
}

/* Ascending over the last dim; out0 values, out1 indices (optional). */
int perfdb_rules_sort(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 1 || !c->in[0].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "Sort needs an input and an output");
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	if (!perfdb_dtype_is_float(x->dtype) || !perfdb_dtype_is_float(o->dtype) || x->numel != o->numel || x->ndims < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "Sort: input and values output must be float tensors of one size");
	if (c->nout > 1 && c->out[1].present && (!is_index_dtype(c->out[1].dtype) || c->out[1].numel != x->numel))
		return perfdb_err_set(err, PERFDB_EINVAL, "Sort: indices output must be int32/int64 of the input's size");
	return 0;
}
