/*
 * The data-movement family's row rules (docs/ops.md "Data movement"):
 * GatherV2, Index, PadV3, ScatterNdUpdate, Slice, Transpose, which move
 * elements of any dtype; and what of their meaning every backend reads
 * (which slot holds Index's indices, which dims Transpose swaps).
 */
#include "ops/opdef.h"
#include "ops/rules.h"

/* out[i, :] = w[idx[i], :] (w = in0 (V, H), idx = in1). */
int perfdb_rules_gather(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 2 || !c->in[0].present || !c->in[1].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "GatherV2 needs inputs w, idx and an output");
	const struct perfdb_tensor *w = &c->in[0], *ix = &c->in[1], *o = &c->out[0];
	if (w->ndims != 2 || w->dims[0] < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "GatherV2: input 0 must be a 2-D table");
	if (!perfdb_rules_is_int(ix->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "GatherV2: indices must be integers");
	if (o->numel != ix->numel * w->dims[1] || o->dtype != w->dtype)
		return perfdb_err_set(err, PERFDB_EINVAL, "GatherV2: output must be (indices..., %lld) of the table's dtype",
				      (long long)w->dims[1]);
	return 0;
}

const struct perfdb_tensor *perfdb_index_indices(const struct perfdb_op_case *c)
{
	/*
	 * The integer slot with out0's first dim (the grid writes x;(1,);(o,);(1,)),
	 * then an fp32 one: a grown row whose template listed fewer dtypes than
	 * slots leaves the indices at the default DT_FLOAT (spec §4); they are
	 * read as whole numbers.  Else the last present slot.
	 */
	if (c->nout > 0 && c->out[0].present && c->out[0].ndims > 0) {
		for (size_t i = c->nin; i-- > 1;)
			if (c->in[i].present && perfdb_rules_is_int(c->in[i].dtype) && c->in[i].numel == c->out[0].dims[0])
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

/*
 * out0 = x[idx] along dim 0.  aclnnIndex slots: in0 x, in1 indexed sizes,
 * in2 indexed strides, last input the indices (numel = out0's first dim).
 */
int perfdb_rules_index(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 2 || !c->in[0].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "Index needs x, indices and an output");
	const struct perfdb_tensor *x = &c->in[0], *ix = perfdb_index_indices(c), *o = &c->out[0];
	/* fp32 indices are whole numbers only while the table has at most 2^24 rows */
	if (!ix || !(perfdb_rules_is_int(ix->dtype) || (ix->dtype == PERFDB_DTYPE_FLOAT && x->dims[0] <= (1 << 24))) ||
	    x->ndims < 1 || x->dims[0] < 1 || o->ndims < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "Index: needs a non-empty x and integer indices");
	int64_t row = x->dims[0] ? x->numel / x->dims[0] : 0;
	if (o->dtype != x->dtype || ix->numel != o->dims[0] || o->numel != ix->numel * row)
		return perfdb_err_set(err, PERFDB_EINVAL, "Index: output must be (indices, x.shape[1:]) of x's dtype");
	return 0;
}

/* Constant 0: out0 = x placed at offset 0 of a zero tensor of out0's shape. */
int perfdb_rules_pad(const struct perfdb_op_case *c, struct perfdb_err *err)
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

/*
 * var[idx[i]] = updates[i], in place on var: in0 var (V, ...), in1 indices
 * (N, 1) integer, in2 updates (N, ...); out0 is var itself on the NPU.
 */
int perfdb_rules_scatter(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 3 || !c->in[0].present || !c->in[1].present || !c->in[2].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "ScatterNdUpdate needs var, indices and updates");
	const struct perfdb_tensor *v = &c->in[0], *ix = &c->in[1], *u = &c->in[2];
	if (!perfdb_rules_is_int(ix->dtype) || ix->ndims < 1 || ix->dims[ix->ndims - 1] != 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "ScatterNdUpdate: indices must be integers of shape (N, 1)");
	if (v->ndims < 1 || v->dims[0] < 1 || u->dtype != v->dtype ||
	    u->numel != ix->numel * (v->numel / v->dims[0]))
		return perfdb_err_set(err, PERFDB_EINVAL, "ScatterNdUpdate: updates must be (N, var.shape[1:]) of var's dtype");
	return 0;
}

/* out = in0[0:out.dims[0], 0:out.dims[1], ...] (offsets zero). */
int perfdb_rules_slice(const struct perfdb_op_case *c, struct perfdb_err *err)
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

int perfdb_transpose_dims(const struct perfdb_op_case *c, size_t d[2], struct perfdb_err *err)
{
	if (c->nin < 1 || !c->in[0].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "Transpose needs an input and an output");
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	if (x->ndims != o->ndims || x->ndims < 2 || x->numel != o->numel || x->dtype != o->dtype)
		return perfdb_err_set(err, PERFDB_EINVAL, "Transpose: input and output must have the same rank, size and dtype");
	size_t nd = 0;
	d[0] = 0;
	d[1] = 1;
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
	return 0;
}

int perfdb_rules_transpose(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	size_t d[2];
	return perfdb_transpose_dims(c, d, err);
}
