/*
 * The shape and dtype predicates the operator layer's row rules share
 * (rules.h), written against core's dtypes so that no rule depends on a
 * backend.
 */
#include "ops/rules.h"

int perfdb_rules_is_int(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_INT32 || d == PERFDB_DTYPE_INT64 || d == PERFDB_DTYPE_INT16 ||
	       d == PERFDB_DTYPE_INT8 || d == PERFDB_DTYPE_UINT8;
}

int64_t perfdb_rules_last(const struct perfdb_tensor *t)
{
	return t->ndims ? t->dims[t->ndims - 1] : 1;
}

int perfdb_rules_trailing_bcast(const struct perfdb_tensor *b, const struct perfdb_tensor *out)
{
	size_t nb = b->ndims;
	size_t lead = 0;
	while (lead < nb && b->dims[lead] == 1)
		lead++;
	if (nb - lead > out->ndims)
		return 0;
	for (size_t i = lead; i < nb; i++)
		if (b->dims[i] != out->dims[out->ndims - (nb - i)])
			return 0;
	return 1;
}

int perfdb_rules_bcast(const struct perfdb_tensor *b, const struct perfdb_tensor *out)
{
	size_t nb = b->ndims;
	while (nb > out->ndims && b->dims[b->ndims - nb] == 1)
		nb--;   /* extra leading 1s */
	if (nb > out->ndims)
		return 0;
	for (size_t k = 0; k < nb; k++) {
		int64_t bd = b->dims[b->ndims - 1 - k], od = out->dims[out->ndims - 1 - k];
		if (bd != od && bd != 1)
			return 0;
	}
	return 1;
}

int perfdb_rules_need(const struct perfdb_op_case *c, size_t nin, struct perfdb_err *err)
{
	if (c->nin < nin || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs %zu input(s) and an output", c->op, nin);
	for (size_t i = 0; i < nin; i++)
		if (!c->in[i].present)
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: input %zu is empty", c->op, i);
	return 0;
}

