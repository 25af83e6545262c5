/*
 * The MoE family's row rules (docs/ops.md "MoE and grouped matmul"):
 * GroupedMatmul, GroupedMatmulSwigluQuant, MoeGatingTopK, MoeTokenPermute,
 * MoeTokenUnpermute.  Each definition's rules are the first of the op's
 * rules, in the order the CPU backend said them, up to the first that is
 * a backend's: GroupedMatmul's CUDA kernels take other dims and dtypes than
 * the CPU's (the group count from the weight, INT8 x INT8 only), and
 * MoeGatingTopK's expert count is said with the CPU's bound.
 */
#include <string.h>

#include "ops/moe.h"
#include "ops/rules.h"

/* x, weight and out0 present; x (T,K) and out0 (T,N) 2-D with one T: both backends' first rules. */
static int gmm_slots(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 2 || c->nout < 1 || !c->in[0].present || !c->in[1].present || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs x (slot 0), weight (slot 1) and output 0", c->op);
	const struct perfdb_tensor *x = &c->in[0], *o = &c->out[0];
	if (x->ndims != 2 || o->ndims != 2 || o->dims[0] != x->dims[0])
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: x (T,K) and output 0 (T,N) must be 2-D with the same T",
				      c->op);
	return 0;
}

int perfdb_gmm_shape(const struct perfdb_op_case *c, struct perfdb_gmm_shape *p, struct perfdb_err *err)
{
	memset(p, 0, sizeof(*p));
	p->swq = strcmp(c->op, "GroupedMatmulSwigluQuant") == 0;
	PERFDB_TRY(gmm_slots(c, err));
	const struct perfdb_tensor *x = &c->in[0], *w = &c->in[1], *o = &c->out[0];
	p->t = x->dims[0];
	p->k = x->dims[1];
	p->scale = c->nin > 3 && c->in[3].present ? &c->in[3] : NULL;
	p->glist = c->nin > 7 && c->in[7].present ? &c->in[7] : NULL;
	p->ptok = c->nin > 8 && c->in[8].present ? &c->in[8] : NULL;
	if (p->glist)
		p->e = p->glist->numel;
	else if (p->scale && p->scale->ndims == 2)
		p->e = p->scale->dims[0];
	else
		p->e = w->ndims >= 3 ? w->dims[0] : 1;
	if (p->e < 1 || p->k < 1 || p->t < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: no groups or an empty x", c->op);
	if (w->numel % (p->e * p->k))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: weight has %lld elements, not a multiple of E*K = %lld*%lld",
				      c->op, (long long)w->numel, (long long)p->e, (long long)p->k);
	p->n = w->numel / (p->e * p->k);
	if (p->swq) {
		if (p->n % 2 || (o->dims[1] != p->n / 2 && o->dims[1] != p->n))
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 0 must be (T,N/2) for the weight's N = %lld",
					      c->op, (long long)p->n);
		if (c->nout > 1 && c->out[1].present &&
		    (c->out[1].numel != p->t || !perfdb_dtype_is_float(c->out[1].dtype)))
			return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 1 (scales) must be float (T,)", c->op);
	} else if (o->dims[1] != p->n) {
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: weight holds %lld groups of (%lld,%lld), output has N = %lld",
				      c->op, (long long)p->e, (long long)p->k, (long long)p->n, (long long)o->dims[1]);
	}
	return 0;
}

int perfdb_rules_gmm(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	return gmm_slots(c, err);
}

/* GroupedMatmulSwigluQuant is the CPU's alone: its whole shape is the definition's. */
int perfdb_rules_gmm_swiglu_quant(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_gmm_shape s;
	return perfdb_gmm_shape(c, &s, err);
}

/* in0 x (T,E) float, out0 y and out1 expert ids; the rest follows the expert count, which the CPU bounds. */
int perfdb_rules_gating_topk(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 1 || !c->in[0].present || c->nout < 2 || !c->out[0].present || !c->out[1].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs x and outputs y, expert_idx", c->op);
	const struct perfdb_tensor *x = &c->in[0];
	if (x->ndims != 2 || !perfdb_dtype_is_float(x->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: x must be a float (T,E)", c->op);
	return 0;
}

/* An index operand: any integer dtype, or a float holding whole numbers (a synthetic row's default). */
static int index_dtype(enum perfdb_dtype d)
{
	return perfdb_rules_is_int(d) || perfdb_dtype_is_float(d);
}

/* in0 tokens (T,H), in1 expert ids (T,k); out0 (R,H) R <= T*k of the tokens' dtype, out1 sorted_indices (T*k,). */
int perfdb_rules_token_permute(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 2 || !c->in[0].present || !c->in[1].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs tokens, indices and output 0", c->op);
	const struct perfdb_tensor *x = &c->in[0], *id = &c->in[1], *o = &c->out[0];
	if (x->ndims != 2 || o->ndims != 2 || o->dims[1] != x->dims[1] || x->dtype != o->dtype)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: tokens (T,H) and output (R,H) of one dtype", c->op);
	if (id->numel % (x->dims[0] ? x->dims[0] : 1) || id->numel < x->dims[0])
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: indices must be (T,k) for T = %lld", c->op,
				      (long long)x->dims[0]);
	if (o->dims[0] > id->numel)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: %lld output rows exceed T*k = %lld", c->op,
				      (long long)o->dims[0], (long long)id->numel);
	if (!index_dtype(id->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: indices dtype %s not supported", c->op,
				      perfdb_dtype_name(id->dtype));
	if (c->nout > 1 && c->out[1].present &&
	    (c->out[1].numel != id->numel || !perfdb_rules_is_int(c->out[1].dtype) ||
	     c->out[1].dtype == PERFDB_DTYPE_INT8 || c->out[1].dtype == PERFDB_DTYPE_UINT8))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: output 1 (sorted_indices) must be int32/int64 (T*k,)", c->op);
	return 0;
}

/* in0 permuted (T*k,H) float, in1 sorted_indices (T*k,), in2 probs (T,k) optional; out0 (T,H) float. */
int perfdb_rules_token_unpermute(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 2 || !c->in[0].present || !c->in[1].present || c->nout < 1 || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s needs permuted tokens, sorted_indices and output 0", c->op);
	const struct perfdb_tensor *x = &c->in[0], *si = &c->in[1], *o = &c->out[0];
	if (x->ndims != 2 || o->ndims != 2 || o->dims[1] != x->dims[1] || !perfdb_dtype_is_float(x->dtype) ||
	    !perfdb_dtype_is_float(o->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: permuted (T*k,H) and output (T,H) must be float", c->op);
	if (o->dims[0] < 1 || x->dims[0] % o->dims[0] || si->numel != x->dims[0])
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "%s: permuted rows (%lld) must be T*k for T = %lld, sorted_indices (T*k,)", c->op,
				      (long long)x->dims[0], (long long)o->dims[0]);
	if (!index_dtype(si->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: sorted_indices dtype %s not supported", c->op,
				      perfdb_dtype_name(si->dtype));
	if (c->nin > 2 && c->in[2].present && (c->in[2].numel != x->dims[0] || !perfdb_dtype_is_float(c->in[2].dtype)))
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: probs must be float (T,k)", c->op);
	return 0;
}
