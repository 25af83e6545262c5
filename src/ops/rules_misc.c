/*
 * The row rules of the remaining simple ops (docs/ops.md "Other
 * element-wise and conversion ops"): Cast, CastAiCore, Fill, Mul,
 * LayerNormV3.  The dtypes a conversion takes are the ones replay fills.
 */
#include "ops/opdef.h"
#include "ops/rules.h"

/* The integer dtypes and bool, which Cast and Fill hold exactly. */
static int is_intlike(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_INT8 || d == PERFDB_DTYPE_UINT8 || d == PERFDB_DTYPE_INT16 ||
	       d == PERFDB_DTYPE_INT32 || d == PERFDB_DTYPE_INT64 || d == PERFDB_DTYPE_BOOL;
}

int perfdb_castable(enum perfdb_dtype d)
{
	return perfdb_dtype_is_float(d) || d == PERFDB_DTYPE_FLOAT64 || is_intlike(d);
}

static int one_in_out(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 1 || !c->in[0].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs an input and an output", c->op);
	return 0;
}

/* out = in0 converted to out0's dtype. */
int perfdb_rules_cast(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(one_in_out(c, err));
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	if (x->numel != o->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: input and output differ in size", c->op);
	if (!perfdb_castable(x->dtype) || !perfdb_castable(o->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "%s: only fp32/fp16/bf16/fp64/int8..int64/uint8/bool are converted", c->op);
	return 0;
}

/* out0 = one value everywhere; the value's slot is optional. */
int perfdb_rules_fill(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nout < 1 || !c->out[0].present || !perfdb_castable(c->out[0].dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "Fill needs an output of a float, integer or bool dtype");
	return 0;
}

/* out = in0 · in1 (in1 broadcast trailing-wise as Add's; absent: 1.0). */
int perfdb_rules_mul(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(one_in_out(c, err));
	const struct perfdb_tensor *a = &c->in[0], *b = &c->in[1], *o = &c->out[0];
	int hb = c->nin > 1 && b->present;
	if (!perfdb_dtype_is_float(a->dtype) || !perfdb_dtype_is_float(o->dtype) ||
	    (hb && !perfdb_dtype_is_float(b->dtype)))
		return perfdb_err_set(err, PERFDB_EINVAL, "Mul: only fp32/bf16/fp16 tensors are supported");
	if (a->numel != o->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "Mul: input 0 and output differ in size");
	if (hb && !perfdb_rules_bcast(b, o))
		return perfdb_err_set(err, PERFDB_EINVAL, "Mul: input 1 does not broadcast to the output");
	return 0;
}

/*
 * in0 x, in1 gamma (the normalised trailing shape), in2 beta (optional);
 * out0 y.  The 65536 bound on the normalised size is the op's as the
 * tables record it (no row above it), kept here so that a row failing it
 * and another rule is refused for the same reason as before.
 */
int perfdb_rules_layer_norm(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 2 || !c->in[0].present || !c->in[1].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "LayerNormV3 needs x, gamma and an output");
	const struct perfdb_tensor *x = &c->in[0], *g = &c->in[1], *o = &c->out[0];
	int hb = c->nin > 2 && c->in[2].present;
	if (!perfdb_dtype_is_float(x->dtype) || !perfdb_dtype_is_float(g->dtype) || !perfdb_dtype_is_float(o->dtype) ||
	    (hb && !perfdb_dtype_is_float(c->in[2].dtype)))
		return perfdb_err_set(err, PERFDB_EINVAL, "LayerNormV3: tensors must be fp32/bf16/fp16");
	/* gamma's elements must be a product of x's trailing dims */
	int64_t h = 1;
	size_t i = x->ndims;
	while (i > 0 && h < g->numel)
		h *= x->dims[--i];
	if (g->numel < 1 || h != g->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "LayerNormV3: gamma's size must match x's trailing dims");
	if (g->numel > 65536)
		return perfdb_err_set(err, PERFDB_EINVAL, "LayerNormV3: normalised size above 65536");
	if (hb && c->in[2].numel != g->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "LayerNormV3: beta must have gamma's size");
	if (o->numel != x->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "LayerNormV3: output 0 must have x's shape");
	return 0;
}
