/*
 * The normalisation family's row rules (docs/ops.md "Normalisation"):
 * RmsNorm, AddRmsNormBias, SoftmaxV2, all over the last dim of float
 * tensors (the ops are defined on fp32/bf16/fp16, on every backend).
 */
#include "ops/rules.h"

/* nin float inputs and a float output 0 of input 0's shape. */
static int floats(const struct perfdb_op_case *c, size_t nin, struct perfdb_err *err)
{
	if (c->nin < nin || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs %zu input(s) and an output", c->op, nin);
	for (size_t i = 0; i < nin; i++)
		if (!c->in[i].present || !perfdb_dtype_is_float(c->in[i].dtype))
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: input %zu must be an fp32/bf16/fp16 tensor",
					      c->op, i);
	if (!perfdb_dtype_is_float(c->out[0].dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 0 must be a float tensor", c->op);
	if (c->in[0].numel != c->out[0].numel || perfdb_rules_last(&c->in[0]) != perfdb_rules_last(&c->out[0]))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: input 0 and output 0 differ in shape", c->op);
	return 0;
}

/* in: x, gamma; out: y, rstd (optional). */
int perfdb_rules_rmsnorm(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(floats(c, 2, err));
	if (c->in[1].numel != perfdb_rules_last(&c->in[0]))
		return perfdb_err_set(err, PERFDB_EINVAL, "RmsNorm: gamma must have the last dim of x");
	return 0;
}

/* in: x1, x2, gamma, bias (optional); out: y, rstd (optional), x (optional). */
int perfdb_rules_add_rmsnorm_bias(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	PERFDB_TRY(floats(c, 3, err));
	int64_t h = perfdb_rules_last(&c->in[0]);
	if (c->in[1].numel != c->in[0].numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "AddRmsNormBias: x1 and x2 differ in size");
	if (c->in[2].numel != h)
		return perfdb_err_set(err, PERFDB_EINVAL, "AddRmsNormBias: gamma must have the last dim of x");
	if (c->nin > 3 && c->in[3].present && (!perfdb_dtype_is_float(c->in[3].dtype) || c->in[3].numel != h))
		return perfdb_err_set(err, PERFDB_EINVAL, "AddRmsNormBias: bias must have the last dim of x");
	if (c->nout > 2 && c->out[2].present &&
	    (c->out[2].numel != c->in[0].numel || !perfdb_dtype_is_float(c->out[2].dtype)))
		return perfdb_err_set(err, PERFDB_EINVAL, "AddRmsNormBias: output 2 must have the shape of x");
	return 0;
}

int perfdb_rules_softmax(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	return floats(c, 1, err);
}
