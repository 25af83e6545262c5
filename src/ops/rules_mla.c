/*
 * mla_preprocess_0_mix_aic's row rules (docs/ops.md "MLA pre-processing";
 * docs/spec/replay.md §4): the slots in the aclnn parameter order, the
 * sizes they must agree on, the dtypes the op defines, and the plan
 * (mla.h) a backend's prepare reads.  Which Runtime modes and cache
 * layouts a backend implements, and the rope dim its kernels rotate, are
 * its limits, not rules here.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/mla.h"
#include "ops/opdef.h"
#include "ops/rules.h"

#define OP "mla_preprocess_0_mix_aic"

static const char *const IN_NAME[PERFDB_MLA_NIN_MIN] = {
	"input", "gamma0", "beta0", "quant_scale0", "quant_offset0", "wdqkv", "descale0", "bias0",
	"gamma1", "beta1", "quant_scale1", "quant_offset1", "wuq", "descale1", "bias1", "gamma2",
	"cos", "sin", "wuk", "kv_cache", "kv_cache_rope", "slot_mapping",
};

static int present(const struct perfdb_op_case *c, size_t i)
{
	return i < c->nin && c->in[i].present;
}

static int need(const struct perfdb_op_case *c, size_t i, struct perfdb_err *err)
{
	if (!present(c, i))
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s is missing", i, IN_NAME[i]);
	return 0;
}

/* A float vector input of n elements (gamma/beta). */
static int vec(const struct perfdb_op_case *c, size_t i, int64_t n, struct perfdb_err *err)
{
	const struct perfdb_tensor *t = &c->in[i];
	if (!perfdb_dtype_is_float(t->dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has dtype %s, expected a float dtype", i,
				      IN_NAME[i], perfdb_dtype_name(t->dtype));
	if (t->numel != n)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has %lld elements, expected %lld", i,
				      IN_NAME[i], (long long)t->numel, (long long)n);
	return 0;
}

/*
 * The Runtime cells, by name or by the aclnn number.  Which modes a backend
 * implements is its limit (its check): here a mode only says how the slots
 * are laid out, so an unknown cache_mode leaves that to the shapes.
 */
static int modes(const struct perfdb_op_case *c, struct perfdb_mla_plan *p, int *cache_mode, struct perfdb_err *err)
{
	const char *cm = perfdb_case_cell(c, "Runtime cache_mode");
	const char *qm = perfdb_case_cell(c, "Runtime quant_mode");
	const char *ep = perfdb_case_cell(c, "Runtime epsilon");
	*cache_mode = -1;
	if (cm && (!strcmp(cm, "krope_ctkv") || !strcmp(cm, "1")))
		*cache_mode = 1;
	else if (cm && !strcmp(cm, "0"))
		*cache_mode = 0;
	p->per_token = qm && (!strcmp(qm, "per_token_quant_symm") || !strcmp(qm, "1"));
	p->eps = PERFDB_EPS_KV_RMSNORM;
	if (ep) {
		char *end;
		double e = strtod(ep, &end);
		if (end == ep || *end || !(e >= 0))
			return perfdb_err_set(err, PERFDB_EINVAL, OP ": bad Runtime epsilon '%s'", ep);
		p->eps = (float)e;
	}
	return 0;
}

/* A GEMM stage's weight (stored (n, k), as transposeWdq/transposeWuq = true) and its scales. */
static int stage_check(const struct perfdb_op_case *c, size_t w, size_t ds, size_t bs, size_t qs, size_t qo,
		       int64_t k, int64_t n, int per_token, struct perfdb_err *err)
{
	const struct perfdb_tensor *t = &c->in[w];
	if (t->format != PERFDB_FORMAT_FRACTAL_NZ && t->ndims == 2 && t->dims[1] != k)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has K=%lld, expected %lld", w, IN_NAME[w],
				      (long long)t->dims[1], (long long)k);
	if (t->numel != k * n)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has %lld elements, expected %lld x %lld", w,
				      IN_NAME[w], (long long)t->numel, (long long)n, (long long)k);
	if (perfdb_dtype_is_float(t->dtype))
		return 0;   /* float weights: a float GEMM, no quantisation */
	if (t->dtype != PERFDB_DTYPE_INT8)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has dtype %s, expected INT8, BF16 or FLOAT16",
				      w, IN_NAME[w], perfdb_dtype_name(t->dtype));
	PERFDB_TRY(need(c, ds, err));
	if (c->in[ds].numel != n)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has %lld elements, expected %lld", ds,
				      IN_NAME[ds], (long long)c->in[ds].numel, (long long)n);
	if (present(c, bs) && c->in[bs].numel != n)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s has %lld elements, expected %lld", bs,
				      IN_NAME[bs], (long long)c->in[bs].numel, (long long)n);
	if (!per_token) {
		PERFDB_TRY(need(c, qs, err));
		PERFDB_TRY(need(c, qo, err));
		if (c->in[qs].numel != 1 || c->in[qo].numel != 1)
			return perfdb_err_set(err, PERFDB_EINVAL,
					      OP ": in%zu %s and in%zu %s must hold one value (per-tensor quantisation)",
					      qs, IN_NAME[qs], qo, IN_NAME[qo]);
	}
	return 0;
}

int perfdb_mla_plan(const struct perfdb_op_case *c, struct perfdb_mla_plan *p, struct perfdb_err *err)
{
	memset(p, 0, sizeof(*p));
	int cache_mode;
	PERFDB_TRY(modes(c, p, &cache_mode, err));
	if (c->nin < PERFDB_MLA_NIN_MIN || c->nout < 2)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": needs %d inputs and 2-4 outputs, the row has %zu and %zu",
				      PERFDB_MLA_NIN_MIN, c->nin, c->nout);
	static const size_t required[] = { PERFDB_MLA_X, PERFDB_MLA_GAMMA0, PERFDB_MLA_WDQKV, PERFDB_MLA_GAMMA1,
					   PERFDB_MLA_WUQ, PERFDB_MLA_GAMMA2, PERFDB_MLA_COS, PERFDB_MLA_SIN,
					   PERFDB_MLA_WUK, PERFDB_MLA_KVCACHE, PERFDB_MLA_SLOTS };
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		PERFDB_TRY(need(c, required[i], err));
	if (!c->out[PERFDB_MLA_QOUT].present)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": out0 q_out is missing");
	const struct perfdb_tensor *x = &c->in[PERFDB_MLA_X], *q = &c->out[PERFDB_MLA_QOUT];
	const struct perfdb_tensor *kc = &c->in[PERFDB_MLA_KVCACHE];
	if (x->ndims != 2 || x->dims[0] < 1 || x->dims[1] < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in0 input must be (tokens, hidden)");
	p->act = x->dtype;
	if (p->act != PERFDB_DTYPE_BF16 && p->act != PERFDB_DTYPE_FLOAT16)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in0 input has dtype %s, expected BF16 or FLOAT16",
				      perfdb_dtype_name(p->act));
	p->t = x->dims[0];
	p->h = x->dims[1];
	p->kv = c->in[PERFDB_MLA_GAMMA2].numel;
	p->ql = c->in[PERFDB_MLA_GAMMA1].numel;
	p->rope = perfdb_rules_last(&c->in[PERFDB_MLA_COS]);
	/* no such dims: their rule is said with the backends' rope bound, so it is their check */
	if (p->kv < 1 || p->ql < 1 || p->rope < 1)
		return 0;
	p->d0 = p->kv + p->rope + p->ql;
	/* cache mode: the Runtime cell, else the shapes (a rope cache: krope_ctkv) */
	p->split = cache_mode >= 0 ? cache_mode : present(c, PERFDB_MLA_KRCACHE);
	p->qw = p->split ? p->kv : p->kv + p->rope;
	p->crow = p->qw;
	if (q->ndims != 3 || q->dims[0] != p->t || q->dims[2] != p->qw || q->dims[1] < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": out0 q_out must be (%lld, heads, %lld)%s", (long long)p->t,
				      (long long)p->qw, p->split ? "" : " (cache mode 0: kv_lora + rope)");
	if (q->dtype != p->act)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": out0 q_out must have the input's dtype");
	p->n = q->dims[1];
	PERFDB_TRY(vec(c, PERFDB_MLA_GAMMA0, p->h, err));
	PERFDB_TRY(vec(c, PERFDB_MLA_GAMMA1, p->ql, err));
	PERFDB_TRY(vec(c, PERFDB_MLA_GAMMA2, p->kv, err));
	if (present(c, PERFDB_MLA_BETA0))
		PERFDB_TRY(vec(c, PERFDB_MLA_BETA0, p->h, err));
	if (present(c, PERFDB_MLA_BETA1))
		PERFDB_TRY(vec(c, PERFDB_MLA_BETA1, p->ql, err));
	PERFDB_TRY(stage_check(c, PERFDB_MLA_WDQKV, PERFDB_MLA_DESCALE0, PERFDB_MLA_BIAS0, PERFDB_MLA_QSCALE0,
			       PERFDB_MLA_QOFFSET0, p->h, p->d0, p->per_token, err));
	const struct perfdb_tensor *wuq = &c->in[PERFDB_MLA_WUQ];
	int64_t nq = wuq->numel % p->ql ? -1 : wuq->numel / p->ql;
	if (nq < 1 || nq % p->n || nq / p->n <= p->rope)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      OP ": in12 wuq has %lld elements, expected q_lora %lld x heads %lld x (nope + rope %lld)",
				      (long long)wuq->numel, (long long)p->ql, (long long)p->n, (long long)p->rope);
	p->hd = nq / p->n;
	p->nope = p->hd - p->rope;
	PERFDB_TRY(stage_check(c, PERFDB_MLA_WUQ, PERFDB_MLA_DESCALE1, PERFDB_MLA_BIAS1, PERFDB_MLA_QSCALE1,
			       PERFDB_MLA_QOFFSET1, p->ql, nq, p->per_token, err));
	const struct perfdb_tensor *wuk = &c->in[PERFDB_MLA_WUK];
	if (!perfdb_dtype_is_float(wuk->dtype) || wuk->numel != p->n * p->nope * p->kv)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in18 wuk must be a float (%lld, %lld, %lld)", (long long)p->n,
				      (long long)p->nope, (long long)p->kv);
	for (size_t i = PERFDB_MLA_COS; i <= PERFDB_MLA_SIN; i++)
		if (!perfdb_dtype_is_float(c->in[i].dtype) || c->in[i].numel != p->t * p->rope)
			return perfdb_err_set(err, PERFDB_EINVAL, OP ": in%zu %s must be a float (%lld, %lld)", i,
					      IN_NAME[i], (long long)p->t, (long long)p->rope);
	if (c->in[PERFDB_MLA_SLOTS].numel != p->t || perfdb_dtype_is_float(c->in[PERFDB_MLA_SLOTS].dtype))
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in21 slot_mapping must be an integer (%lld,)",
				      (long long)p->t);
	if (kc->format == PERFDB_FORMAT_FRACTAL_NZ || kc->dtype == PERFDB_DTYPE_INT8)
		return 0;   /* the NZ caches (int8_nzcache, nzcache): planned by no backend, refused by their checks */
	if (!perfdb_dtype_is_float(kc->dtype) || kc->numel % p->crow)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in19 kv_cache must be a float (blocks, block_size, 1, %lld)",
				      (long long)p->crow);
	p->nslots = kc->numel / p->crow;
	p->block = kc->ndims == 4 ? kc->dims[1] : 1;
	if (p->nslots < p->t)
		return perfdb_err_set(err, PERFDB_EINVAL, OP ": in19 kv_cache has %lld slots for %lld tokens",
				      (long long)p->nslots, (long long)p->t);
	if (p->split) {
		PERFDB_TRY(need(c, PERFDB_MLA_KRCACHE, err));
		const struct perfdb_tensor *kr = &c->in[PERFDB_MLA_KRCACHE];
		if (kr->format == PERFDB_FORMAT_FRACTAL_NZ || !perfdb_dtype_is_float(kr->dtype) ||
		    kr->numel != p->nslots * p->rope)
			return perfdb_err_set(err, PERFDB_EINVAL,
					      OP ": in20 kv_cache_rope must be a float ND cache of %lld slots x %lld",
					      (long long)p->nslots, (long long)p->rope);
		const struct perfdb_tensor *qr = &c->out[PERFDB_MLA_QROPE];
		if (c->nout <= PERFDB_MLA_QROPE || !qr->present || qr->numel != p->t * p->n * p->rope || qr->dtype != p->act)
			return perfdb_err_set(err, PERFDB_EINVAL,
					      OP ": out2 q_rope_out must be (%lld, %lld, %lld) of the input's dtype",
					      (long long)p->t, (long long)p->n, (long long)p->rope);
	}
	return 0;
}


int perfdb_rules_mla_preprocess(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_mla_plan p;
	return perfdb_mla_plan(c, &p, err);
}
