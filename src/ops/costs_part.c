/*
 * The costs of the ops that touch part of a tensor (opdef.h struct
 * perfdb_op_cost, docs/ops.md "Costs"): a gather or slice reads the rows
 * it copies, not its table; a scatter and the KV-cache writes
 * (ReshapeAndCacheNdKernel, KvRmsNormRopeCache, mla_preprocess's caches)
 * write the rows they update, not the cache.  Counting the whole table or
 * cache as traffic is what put every cache-update point above the roof.
 */
#include "ops/cache.h"
#include "ops/costs.h"
#include "ops/mla.h"

/*
 * GatherV2, Index, Slice: in0 the table; every other input (indices,
 * offsets, sizes) and the output whole, and of the table the output's
 * elements, read.
 */
int perfdb_cost_gather(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	if (!c->nin || !c->in[0].present || !c->nout || !c->out[0].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: needs a table and an output", c->op);
	w->bytes = perfdb_cost_bytes_from(c, 1) + perfdb_cost_elems_bytes(&c->in[0], (double)c->out[0].numel);
	w->unit = PERFDB_OP_UNIT_VECTOR;
	w->dtype = c->in[0].dtype;
	return 0;
}

/* ScatterNdUpdate: in0 var, in1 indices, in2 updates; out0 is var: updates' elements are written into it. */
int perfdb_cost_scatter(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	if (c->nin < 3 || !c->in[0].present || !c->in[1].present || !c->in[2].present)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: needs var, indices and updates", c->op);
	w->bytes = perfdb_cost_tbytes(&c->in[1]) + perfdb_cost_tbytes(&c->in[2]) +
		   perfdb_cost_elems_bytes(&c->in[0], (double)c->in[2].numel);
	w->unit = PERFDB_OP_UNIT_VECTOR;
	w->dtype = c->in[0].dtype;
	return 0;
}

/* key, value and slot_mapping read; their rows written into key_cache and value_cache (in place). */
int perfdb_cost_reshape_cache(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	(void)err;
	w->bytes = perfdb_cost_tbytes(&c->in[0]) + perfdb_cost_tbytes(&c->in[1]) + perfdb_cost_tbytes(&c->in[4]) +
		   perfdb_cost_elems_bytes(&c->in[2], (double)c->in[0].numel) +
		   perfdb_cost_elems_bytes(&c->in[3], (double)c->in[1].numel);
	w->unit = PERFDB_OP_UNIT_VECTOR;
	w->dtype = c->in[0].dtype;
	return 0;
}

/*
 * kv, gamma, cos, sin, index read; T rows of dk into k_cache and of dv into
 * ckv_cache written (in place); the optional k_rope and c_kv outputs whole.
 * FLOPs: the norm's four per normalised element, the rotation's three per
 * rope element.
 */
int perfdb_cost_kv_rmsnorm_rope_cache(const struct perfdb_op_case *c, struct perfdb_op_cost *w,
				      struct perfdb_err *err)
{
	(void)err;
	struct perfdb_kv_plan k;
	perfdb_kv_plan(c, &k);
	double t = (double)k.t;
	for (size_t i = 0; i < 5; i++)
		w->bytes += perfdb_cost_tbytes(&c->in[i]);
	w->bytes += perfdb_cost_elems_bytes(&c->in[5], t * (double)k.dk) +
		    perfdb_cost_elems_bytes(&c->in[6], t * (double)k.dv);
	for (size_t i = 2; i < c->nout; i++)
		w->bytes += perfdb_cost_tbytes(&c->out[i]);
	w->flops = t * (4.0 * (double)k.dv + 3.0 * (double)k.dk);
	w->unit = PERFDB_OP_UNIT_VECTOR;
	w->dtype = c->in[0].dtype;
	return 0;
}

/*
 * mla_preprocess_0_mix_aic: every input but the two caches and every
 * output not in place, whole; T rows written into kv_cache (and the rope
 * cache when split).  FLOPs: its three GEMMs, x·Wdqkv (H -> kv+rope+q_lora),
 * q·Wuq (q_lora -> heads·(nope+rope)) and q_nope·Wuk (nope -> kv per head),
 * on the matrix unit.
 */
int perfdb_cost_mla_preprocess(const struct perfdb_op_case *c, struct perfdb_op_cost *w, struct perfdb_err *err)
{
	struct perfdb_mla_plan p;
	PERFDB_TRY(perfdb_mla_plan(c, &p, err));
	if (p.kv < 1 || p.ql < 1 || p.n < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "%s: the row gives no kv_lora, q_lora or heads", c->op);
	double t = (double)p.t;
	w->bytes = perfdb_cost_all_bytes(c) - perfdb_cost_tbytes(&c->in[PERFDB_MLA_KVCACHE]) -
		   perfdb_cost_tbytes(&c->in[PERFDB_MLA_KRCACHE]) +
		   perfdb_cost_elems_bytes(&c->in[PERFDB_MLA_KVCACHE], t * (double)p.crow);
	if (p.split)
		w->bytes += perfdb_cost_elems_bytes(&c->in[PERFDB_MLA_KRCACHE], t * (double)p.rope);
	w->flops = 2.0 * t * ((double)p.h * (double)p.d0 + (double)p.ql * (double)p.n * (double)p.hd +
			      (double)p.n * (double)p.nope * (double)p.kv);
	w->unit = PERFDB_OP_UNIT_MATRIX;
	w->dtype = p.act;
	return 0;
}
