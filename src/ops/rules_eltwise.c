/*
 * The element-wise family's row rules (docs/ops.md "Element-wise"): Add,
 * SwiGlu, TensorMove, MaskedFill, Silu, Gelu (Cast, Fill and Mul: rules_misc.c).
 */
#include "ops/rules.h"

/* out = in0 + in1 (in1 broadcast by numpy's rule; absent: 1.0). */
int perfdb_rules_add(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(perfdb_rules_need(c, 1, err));
	const struct perfdb_tensor *a = &c->in[0], *b = &c->in[1], *o = &c->out[0];
	int bp = c->nin > 1 && b->present;
	/* integer Add (position and length arithmetic in the graph): one integer dtype throughout */
	int ints = perfdb_rules_is_int(o->dtype) && a->dtype == o->dtype && (!bp || b->dtype == o->dtype);
	if (!ints && (!perfdb_dtype_is_float(a->dtype) || !perfdb_dtype_is_float(o->dtype) ||
		      (bp && !perfdb_dtype_is_float(b->dtype))))
		return perfdb_err_set(err, PERFDB_EINVAL, "Add: fp32/bf16/fp16 tensors, or one integer dtype for all");
	if (a->numel != o->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "Add: input 0 and output differ in size");
	if (bp && !perfdb_rules_bcast(b, o))
		return perfdb_err_set(err, PERFDB_EINVAL, "Add: input 1 does not broadcast to the output");
	return 0;
}

/* Sub and RealDiv (PyTorch's sub and div): Mul's rules, the op named in the messages. */
int perfdb_rules_binary(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(perfdb_rules_need(c, 1, err));
	const struct perfdb_tensor *a = &c->in[0], *b = &c->in[1], *o = &c->out[0];
	int bp = c->nin > 1 && b->present;
	if (!perfdb_dtype_is_float(a->dtype) || !perfdb_dtype_is_float(o->dtype) ||
	    (bp && !perfdb_dtype_is_float(b->dtype)))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: only fp32/bf16/fp16 tensors are supported",
				      c->op);
	if (a->numel != o->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: input 0 and output differ in size", c->op);
	if (bp && !perfdb_rules_bcast(b, o))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: input 1 does not broadcast to the output",
				      c->op);
	return 0;
}

/* x (..., 2H) -> out (..., H) = silu(x[..., :H]) * x[..., H:]. */
int perfdb_rules_swiglu(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(perfdb_rules_need(c, 1, err));
	const struct perfdb_tensor *a = &c->in[0], *o = &c->out[0];
	if (!perfdb_dtype_is_float(a->dtype) || !perfdb_dtype_is_float(o->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "SwiGlu: only fp32/bf16/fp16 tensors are supported");
	if (a->ndims < 1 || o->ndims < 1 || a->dims[a->ndims - 1] % 2 || a->numel != 2 * o->numel ||
	    o->dims[o->ndims - 1] * 2 != a->dims[a->ndims - 1])
		return perfdb_err_set(err, PERFDB_EINVAL, "SwiGlu: output must halve the last dim of input 0");
	return 0;
}

int perfdb_rules_activation(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(perfdb_rules_need(c, 1, err));
	const struct perfdb_tensor *a = &c->in[0], *o = &c->out[0];
	if (!perfdb_dtype_is_float(a->dtype) || !perfdb_dtype_is_float(o->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: only fp32/bf16/fp16 tensors are supported", c->op);
	if (a->numel != o->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: input and output differ in size", c->op);
	return 0;
}

/* out = a copy of in0, byte for byte. */
int perfdb_rules_tensor_move(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(perfdb_rules_need(c, 1, err));
	if (c->in[0].bytes != c->out[0].bytes)
		return perfdb_err_set(err, PERFDB_EINVAL, "TensorMove: input and output differ in size");
	return 0;
}

/* out = mask ? value : in0 (mask = in1 broadcast, value = in2[0] or 0). */
int perfdb_rules_masked_fill(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(perfdb_rules_need(c, 2, err));
	const struct perfdb_tensor *a = &c->in[0], *m = &c->in[1], *o = &c->out[0];
	if (!perfdb_dtype_is_float(a->dtype) || a->dtype != o->dtype || a->numel != o->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "MaskedFill: input 0 and output must be the same float tensor");
	if (m->dtype != PERFDB_DTYPE_BOOL && m->dtype != PERFDB_DTYPE_UINT8 && m->dtype != PERFDB_DTYPE_INT8)
		return perfdb_err_set(err, PERFDB_EINVAL, "MaskedFill: mask must be bool");
	if (!perfdb_rules_trailing_bcast(m, o))
		return perfdb_err_set(err, PERFDB_EINVAL, "MaskedFill: mask does not broadcast to the output");
	return 0;
}
