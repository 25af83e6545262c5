/*
 * The paged KV-cache family's row rules (docs/ops.md "RoPE and KV cache"):
 * ReshapeAndCacheNdKernel, KvRmsNormRopeCache.  KvRmsNormRopeCache's rule
 * on the rope and gamma sizes is said in one message with the backend's
 * bounds (CPU_ROPE_MAX_D, its row scratch), so it is each backend's check;
 * a row it refuses (odd or missing rope dim) passes here unjudged.
 */
#include "ops/cache.h"
#include "ops/rules.h"

/* in0 key, in1 value, in2 key_cache, in3 value_cache, in4 slot_mapping (T). */
int perfdb_rules_reshape_cache(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 5)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "ReshapeAndCacheNdKernel needs key, value, key_cache, value_cache, slot_mapping");
	for (size_t i = 0; i < 5; i++)
		if (!c->in[i].present)
			return perfdb_err_set(err, PERFDB_EINVAL, "ReshapeAndCacheNdKernel: input %zu is empty", i);
	const struct perfdb_tensor *map = &c->in[4];
	int64_t t = map->numel;
	if (t < 1)
		return perfdb_err_set(err, PERFDB_EINVAL, "ReshapeAndCacheNdKernel: empty slot_mapping");
	int64_t ns = -1;
	for (size_t k = 0; k < 2; k++) {
		const struct perfdb_tensor *x = &c->in[k], *cache = &c->in[k + 2];
		if (x->numel % t)
			return perfdb_err_set(err, PERFDB_EINVAL,
					      "ReshapeAndCacheNdKernel: input %zu is not one row per slot_mapping entry", k);
		int64_t s = perfdb_cache_slots(cache, x->numel / t);
		if (s < t || (ns >= 0 && s != ns))
			return perfdb_err_set(err, PERFDB_EINVAL,
					      "ReshapeAndCacheNdKernel: cache %zu must hold at least %lld rows of input %zu (both caches the same count)",
					      k + 2, (long long)t, k);
		ns = s;
		if (x->dtype != cache->dtype && (!perfdb_dtype_is_float(x->dtype) || !perfdb_dtype_is_float(cache->dtype)))
			return perfdb_err_set(err, PERFDB_EINVAL,
					      "ReshapeAndCacheNdKernel: input %zu and its cache must share a dtype or both be float",
					      k);
	}
	return 0;
}

void perfdb_kv_plan(const struct perfdb_op_case *c, struct perfdb_kv_plan *k)
{
	k->dv = (size_t)c->in[1].numel;
	k->dk = c->in[2].ndims ? (size_t)c->in[2].dims[c->in[2].ndims - 1] : 0;
	size_t w = k->dv + k->dk;
	k->t = w ? (size_t)c->in[0].numel / w : 0;
}

static int opt_out(const struct perfdb_op_case *c, size_t i, size_t numel)
{
	return c->nout > i && c->out[i].present && perfdb_dtype_is_float(c->out[i].dtype) &&
	       (size_t)c->out[i].numel == numel;
}

/*
 * in0 kv (B,1,S,Dv+Dk), in1 gamma (Dv), in2 cos, in3 sin, in4 index, in5
 * k_cache, in6 ckv_cache, in7..in11 quant scales/offsets (empty); out2
 * k_rope, out3 c_kv optional.
 */
int perfdb_rules_kv_rmsnorm_rope_cache(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (c->nin < 7)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "KvRmsNormRopeCache needs kv, gamma, cos, sin, index, k_cache, ckv_cache");
	for (size_t i = 0; i < 7; i++)
		if (!c->in[i].present)
			return perfdb_err_set(err, PERFDB_EINVAL, "KvRmsNormRopeCache: input %zu is empty", i);
	for (size_t i = 7; i < c->nin; i++)
		if (c->in[i].present)
			return perfdb_err_set(err, PERFDB_EINVAL,
					      "KvRmsNormRopeCache: quantised caches (input %zu: scale/offset) are not supported", i);
	for (size_t i = 0; i < 7; i++)
		if (i != 4 && !perfdb_dtype_is_float(c->in[i].dtype))
			return perfdb_err_set(err, PERFDB_EINVAL, "KvRmsNormRopeCache: input %zu must be fp32/bf16/fp16", i);
	struct perfdb_kv_plan k;
	perfdb_kv_plan(c, &k);
	if (k.dk < 2 || k.dk % 2 || k.dv < 1)
		return 0;   /* the backend's rope-dim rule refuses the row */
	const struct perfdb_tensor *kv = &c->in[0];
	if (kv->ndims < 1 || (size_t)kv->dims[kv->ndims - 1] != k.dv + k.dk)
		return perfdb_err_set(err, PERFDB_EINVAL, "KvRmsNormRopeCache: kv's last dim must be gamma's %zu + rope %zu",
				      k.dv, k.dk);
	if (!perfdb_tensor_same_dims(&c->in[2], &c->in[3]) || ((size_t)c->in[2].numel != k.t * k.dk && (size_t)c->in[2].numel != k.dk))
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "KvRmsNormRopeCache: cos and sin must be one %zu-row per token (or one row)", k.dk);
	if ((size_t)c->in[4].numel != k.t)
		return perfdb_err_set(err, PERFDB_EINVAL, "KvRmsNormRopeCache: index must hold one slot per token (%zu)",
				      k.t);
	int64_t sk = perfdb_cache_slots(&c->in[5], (int64_t)k.dk), sv = perfdb_cache_slots(&c->in[6], (int64_t)k.dv);
	if (sk < (int64_t)k.t || sk != sv)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "KvRmsNormRopeCache: k_cache and ckv_cache must hold the same number (>= %zu) of rows of %zu and %zu",
				      k.t, k.dk, k.dv);
	if (c->nout > 2 && c->out[2].present && !opt_out(c, 2, k.t * k.dk))
		return perfdb_err_set(err, PERFDB_EINVAL, "KvRmsNormRopeCache: output 2 (k_rope) must be float (T, %zu)", k.dk);
	if (c->nout > 3 && c->out[3].present && !opt_out(c, 3, k.t * k.dv))
		return perfdb_err_set(err, PERFDB_EINVAL, "KvRmsNormRopeCache: output 3 (c_kv) must be float (T, %zu)", k.dv);
	return 0;
}
