/*
 * The replay engine's buffer pool and input data (docs/replay.md
 * "Buffers"): one buffer per tensor slot, aligned, pre-faulted when it
 * grows and reused by the next rows; inputs refilled per row from the
 * documented deterministic generator (splitmix64, seeded per row and slot).
 */
#include <stdlib.h>
#include <string.h>

#include "perfdb/dtype.h"
#include "replay/engine.h"
#include "replay/hugebuf.h"

static uint64_t mix(uint64_t *s)
{
	/* splitmix64: a documented, seedable generator */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fill(struct perfdb_tensor *t, uint64_t seed)
{
	uint64_t s = seed;
	size_t n = (size_t)t->numel;
	switch (t->dtype) {
	case PERFDB_DTYPE_FLOAT: {
		float *p = t->data;
		for (size_t i = 0; i < n; i++)
			p[i] = (float)((double)(mix(&s) >> 40) * 0x1p-23 - 1.0);
		break;
	}
	case PERFDB_DTYPE_BF16:
	case PERFDB_DTYPE_FLOAT16: {
		/* random in [-1, 1): exponent 126 or below, random mantissa bits */
		uint16_t *p = t->data;
		int bf = t->dtype == PERFDB_DTYPE_BF16;
		for (size_t i = 0; i < n; i++) {
			uint64_t r = mix(&s);
			if (bf)   /* sign, exponent 120..126, 7 mantissa bits */
				p[i] = (uint16_t)(((r & 1) << 15) | ((120 + (r >> 1) % 7) << 7) | ((r >> 8) & 0x7f));
			else      /* sign, exponent 9..14, 10 mantissa bits */
				p[i] = (uint16_t)(((r & 1) << 15) | ((9 + (r >> 1) % 6) << 10) | ((r >> 8) & 0x3ff));
		}
		break;
	}
	case PERFDB_DTYPE_FLOAT64: {
		double *p = t->data;
		for (size_t i = 0; i < n; i++)
			p[i] = (double)(mix(&s) >> 11) * 0x1p-52 - 1.0;
		break;
	}
	case PERFDB_DTYPE_BOOL: {
		uint8_t *p = t->data;
		for (size_t i = 0; i < n; i++)
			p[i] = (uint8_t)(mix(&s) & 1);
		break;
	}
	default: {
		/* integers: randint(0, 8) in their own width (little-endian) */
		size_t es = perfdb_dtype_bytes(t->dtype, 1);
		uint8_t *p = t->data;
		memset(p, 0, t->bytes);
		for (size_t i = 0; i < n; i++)
			p[i * es] = (uint8_t)(mix(&s) & 7);
		break;
	}
	}
}

static int get_buf(struct perfdb_engine_pool *pool, size_t slot, struct perfdb_tensor *t,
		   struct perfdb_err *err)
{
	size_t need = t->bytes ? t->bytes : 1;
	if (pool->cap[slot] < need) {
		free(pool->buf[slot]);
		pool->buf[slot] = NULL;
		pool->cap[slot] = 0;
		size_t cap;
		void *p = replay_huge_alloc(need, &cap);   /* on huge pages where offered: hugebuf.c */
		if (!p)
			return perfdb_err_set(err, PERFDB_ENOMEM, "cannot allocate %zu bytes for %s", need,
					      "a tensor");
		pool->buf[slot] = p;
		pool->cap[slot] = cap;
	}
	t->data = pool->buf[slot];
	return 0;
}

int perfdb_engine_alloc_case(struct perfdb_engine_pool *pool, struct perfdb_op_case *c, uint64_t seed,
			     struct perfdb_err *err)
{
	for (size_t i = 0; i < c->nin; i++)
		if (c->in[i].present) {
			PERFDB_TRY(get_buf(pool, i, &c->in[i], err));
			fill(&c->in[i], seed * 1000003u + i);
		}
	for (size_t i = 0; i < c->nout; i++) {
		struct perfdb_tensor *o = &c->out[i];
		if (!o->present)
			continue;
		size_t a = (size_t)(o->alias_in > 0 ? o->alias_in - 1 : 0);
		if (o->alias_in > 0 && a < c->nin && c->in[a].present && c->in[a].bytes >= o->bytes)
			o->data = c->in[a].data;   /* in place: the input's buffer */
		else
			PERFDB_TRY(get_buf(pool, PERFDB_OP_MAX_TENSORS + i, o, err));
	}
	return 0;
}

void perfdb_engine_pool_release(struct perfdb_engine_pool *pool)
{
	for (size_t i = 0; i < 2 * PERFDB_OP_MAX_TENSORS; i++)
		free(pool->buf[i]);
	memset(pool, 0, sizeof(*pool));
}
