/*
 * The quantisation family's row rules (docs/ops.md "Quantisation"):
 * DynamicQuant and AscendQuantV2, whose rules are all the operator's.
 * QuantBatchMatmulV3's stay each backend's check: the CPU and CUDA
 * backends part from its first rule (CUDA takes a row without a scale,
 * and an x1 stored (K,M)).
 */
#include "ops/opdef.h"
#include "ops/rules.h"

int perfdb_quant_target(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_INT8 || d == PERFDB_DTYPE_INT32 || perfdb_dtype_is_float(d);
}

/* Rows of a (..., D) tensor. */
static int64_t rows_of(const struct perfdb_tensor *t)
{
	int64_t d = perfdb_rules_last(t);
	return d > 0 ? t->numel / d : 0;
}

/* in0 x (..., D) float, in1 smooth_scales (D,) optional; out0 (..., D) int8, out1 (rows,) float scales. */
int perfdb_rules_dynamic_quant(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 1 || !c->in[0].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs input 0 and output 0", c->op);
	const struct perfdb_tensor *x = &c->in[0], *y = &c->out[0];
	int64_t d = perfdb_rules_last(x);
	if (!perfdb_dtype_is_float(x->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: input dtype %s is not a float dtype", c->op,
				      perfdb_dtype_name(x->dtype));
	if (!perfdb_quant_target(y->dtype) || y->numel != x->numel || perfdb_rules_last(y) != d)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 0 must have the input's shape (int8)", c->op);
	if (c->nin > 1 && c->in[1].present && (c->in[1].numel != d || !perfdb_dtype_is_float(c->in[1].dtype)))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: smooth_scales must be a float (%lld,)", c->op, (long long)d);
	if (c->nout > 1 && c->out[1].present &&
	    (c->out[1].numel != rows_of(x) || !perfdb_dtype_is_float(c->out[1].dtype)))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 1 (scales) must be float with %lld elements",
				      c->op, (long long)rows_of(x));
	return 0;
}

/* in0 x (..., D) float, in1 scale and in2 offset (optional) (D,) or (1,) float; out0 int8 of x's shape. */
int perfdb_rules_ascend_quant(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 2 || !c->in[0].present || !c->in[1].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs x, scale and output 0", c->op);
	const struct perfdb_tensor *x = &c->in[0], *y = &c->out[0];
	int64_t d = perfdb_rules_last(x);
	if (!perfdb_dtype_is_float(x->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: input dtype %s is not a float dtype", c->op,
				      perfdb_dtype_name(x->dtype));
	if (!perfdb_quant_target(y->dtype) || y->numel != x->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 0 must have the input's shape (int8)", c->op);
	for (size_t i = 1; i < 3 && i < c->nin; i++) {
		const struct perfdb_tensor *t = &c->in[i];
		if (t->present && ((t->numel != d && t->numel != 1) || !perfdb_dtype_is_float(t->dtype)))
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: input %zu must be a float (%lld,) or (1,)", c->op, i,
					      (long long)d);
	}
	return 0;
}
