/*
 * CPU backend, paged KV-cache writes (docs/spec/replay.md §4; docs/ops.md "RoPE
 * and KV cache"): ReshapeAndCacheNdKernel, KvRmsNormRopeCache.  The caches
 * are updated in place in their input slots, as on the NPU, where the
 * outputs alias them.  The recorded slot mapping holds random small ints:
 * prepare replaces it by distinct, deterministic slots (cpu_slots_distinct),
 * kept as int64 in priv so that float-typed mappings stay exact.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_rope.h"
#include "ops/cache.h"

/* Block size of a paged cache (blocks, block_size, heads, d): dims[1]; else 1. */
static int64_t block_of(const struct perfdb_tensor *cache)
{
	return cache->ndims == 4 ? cache->dims[1] : 1;
}

static int slots_prepare(struct perfdb_op_case *c, size_t map_slot, size_t cache_slot, int64_t row,
			 struct perfdb_err *err)
{
	struct perfdb_tensor *map = &c->in[map_slot];
	size_t n = (size_t)map->numel;
	int64_t *s = malloc((n ? n : 1) * sizeof(int64_t));
	if (!s)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	cpu_slots_distinct(s, n, perfdb_cache_slots(&c->in[cache_slot], row), block_of(&c->in[cache_slot]));
	cpu_store_index(map, s, n);
	c->priv = s;
	return 0;
}

static void slots_free(struct perfdb_op_case *c)
{
	free(c->priv);
	c->priv = NULL;
}

/* Copy n elements src[so..] -> dst[do_..], converting between float dtypes when they differ. */
static void move_row(const struct perfdb_tensor *src, size_t so, struct perfdb_tensor *dst, size_t d0, size_t n)
{
	if (src->dtype == dst->dtype) {
		size_t es = perfdb_dtype_bytes(src->dtype, 1);
		memcpy((char *)dst->data + d0 * es, (const char *)src->data + so * es, n * es);
		return;
	}
	float buf[1024];
	for (size_t j = 0; j < n; j += 1024) {
		size_t m = n - j < 1024 ? n - j : 1024;
		cpu_load_row(src, so + j, m, buf);
		cpu_store_row(dst, d0 + j, m, buf);
	}
}

/*
 * ---- ReshapeAndCacheNdKernel: key_cache[slot[i]] = key[i], value_cache[slot[i]] = value[i] ----
 * in0 key (T, Nkv, D), in1 value (T, Nkv, Dv), in2 key_cache (blocks,
 * block_size, Nkv, D), in3 value_cache (…, Nkv, Dv), in4 slot_mapping (T).
 */
static int rac_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	return slots_prepare(c, 4, 2, c->in[0].numel / c->in[4].numel, err);
}

static int rac_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	const int64_t *slot = c->priv;
	size_t t = (size_t)c->in[4].numel;
	size_t rk = (size_t)c->in[0].numel / t, rv = (size_t)c->in[1].numel / t;
	for (size_t i = 0; i < t; i++) {
		move_row(&c->in[0], i * rk, &c->in[2], (size_t)slot[i] * rk, rk);
		move_row(&c->in[1], i * rv, &c->in[3], (size_t)slot[i] * rv, rv);
	}
	return 0;
}

/*
 * ---- KvRmsNormRopeCache (torch_npu.npu_kv_rmsnorm_rope_cache, DeepSeek MLA, PA cache mode) ----
 * in0 kv (B, 1, S, Dv + Dk), in1 gamma (Dv), in2 cos, in3 sin (B, 1, S, Dk)
 * or one row (Dk), in4 index (B·S slots), in5 k_cache (blocks, block_size,
 * 1, Dk), in6 ckv_cache (…, Dv); in7..in11 the quant scales and offsets
 * (must be empty).  out0/out1 alias the caches; out2 k_rope (…, Dk) and
 * out3 c_kv (…, Dv) are written when present (is_output_kv).
 * ckv_cache[slot] = RmsNorm(kv[..., :Dv]) · gamma (eps 1e-5);
 * k_cache[slot] = InterleaveRope(kv[..., Dv:]).
 */
/* Whether the optional output i is written (the definition refused a present one of another shape). */
static int opt_out(const struct perfdb_op_case *c, size_t i, size_t numel)
{
	return c->nout > i && c->out[i].present && perfdb_dtype_is_float(c->out[i].dtype) && (size_t)c->out[i].numel == numel;
}

/* The row rules are the definition's (rules_cache.c); rows of Dk and Dv are stack and row scratch here. */
static int kv_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_kv_plan k;
	perfdb_kv_plan(c, &k);
	if (k.dk < 2 || k.dk % 2 || k.dk > CPU_ROPE_MAX_D || k.dv < 1 || k.dv > 8192)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "KvRmsNormRopeCache: rope dim (cos's last) must be even and at most %d, gamma at most 8192",
				      CPU_ROPE_MAX_D);
	return 0;
}

static int kv_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_kv_plan k;
	perfdb_kv_plan(c, &k);
	return slots_prepare(c, 4, 5, (int64_t)k.dk, err);
}

CPU_CLONES static void scale_rows(float *x, const float *g, float r, size_t n)
{
	for (size_t j = 0; j < n; j++)
		x[j] = x[j] * r * g[j];
}

static int kv_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	struct perfdb_kv_plan k;
	perfdb_kv_plan(c, &k);
	const int64_t *slot = c->priv;
	size_t w = k.dv + k.dk;
	int bc = (size_t)c->in[2].numel != k.dk;   /* per-token cos/sin */
	float x[8192 + CPU_ROPE_MAX_D], g[8192], cs[CPU_ROPE_MAX_D], sn[CPU_ROPE_MAX_D], y[CPU_ROPE_MAX_D];
	cpu_load_row(&c->in[1], 0, k.dv, g);
	if (!bc) {
		cpu_load_row(&c->in[2], 0, k.dk, cs);
		cpu_load_row(&c->in[3], 0, k.dk, sn);
	}
	struct perfdb_tensor *kr = opt_out(c, 2, k.t * k.dk) ? &c->out[2] : NULL;
	struct perfdb_tensor *ckv = opt_out(c, 3, k.t * k.dv) ? &c->out[3] : NULL;
	for (size_t i = 0; i < k.t; i++) {
		cpu_load_row(&c->in[0], i * w, w, x);
		float rstd = 1.0f / sqrtf(cpu_sumsq(x, k.dv) / (float)k.dv + PERFDB_EPS_KV_RMSNORM);
		scale_rows(x, g, rstd, k.dv);
		cpu_store_row(&c->in[6], (size_t)slot[i] * k.dv, k.dv, x);
		if (ckv)
			cpu_store_row(ckv, i * k.dv, k.dv, x);
		if (bc) {
			cpu_load_row(&c->in[2], i * k.dk, k.dk, cs);
			cpu_load_row(&c->in[3], i * k.dk, k.dk, sn);
		}
		cpu_rope_interleave(x + k.dv, cs, sn, y, k.dk);
		cpu_store_row(&c->in[5], (size_t)slot[i] * k.dk, k.dk, y);
		if (kr)
			cpu_store_row(kr, i * k.dk, k.dk, y);
	}
	return 0;
}

const struct perfdb_op_impl cpu_ops_cache[] = {
	{ .name = "KvRmsNormRopeCache", .check = kv_check, .prepare = kv_prepare, .run = kv_run,
	  .release = slots_free },
	{ .name = "ReshapeAndCacheNdKernel", .check = cpu_no_limits, .prepare = rac_prepare, .run = rac_run,
	  .release = slots_free },
	{ .name = NULL },
};
