/*
 * The replay engine's buffer pool and input data (docs/replay.md
 * "Buffers"): one buffer per tensor slot, aligned, pre-faulted when it
 * grows and reused by the next rows; inputs refilled per row from the
 * documented deterministic generator (splitmix64, seeded per row and slot),
 * on the run's threads.
 */
#include <stdlib.h>
#include <string.h>

#include "perfdb/dtype.h"
#include "replay/engine.h"
#include "perfdb/hugebuf.h"

/*
 * Element i of a tensor seeded with seed is splitmix64's (i+1)-th output
 * from state seed.  splitmix64 is a counter (the state only ever gains the
 * golden gamma), so that output is computed from i directly: the chunks of
 * a large tensor are filled in any order, on every thread of the run, and
 * the loops vectorise.  The values are those of the sequential generator
 * (tests/unit/replay/test_pool.c holds it as the reference).
 */
static inline uint64_t draw(uint64_t seed, uint64_t i)
{
	uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * x mod 7 and x mod 3 for x < 2^63, by folding 30 bits at a time
 * (2^30 = 8^10 = 4^15, which is 1 mod 7 and mod 3) into 32 bits, where the
 * modulo by a constant vectorises; 64-bit division does not.
 */
static inline uint32_t fold30(uint64_t x)
{
	x = (x >> 30) + (x & 0x3fffffffu);   /* < 2^34 */
	return (uint32_t)((x >> 30) + (x & 0x3fffffffu));   /* < 2^31 */
}

/* The hot loops compiled for AVX-512 and AVX2 too, picked at load time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FILL_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define FILL_CLONES
#endif

FILL_CLONES static void fill_f32(float *p, uint64_t seed, size_t lo, size_t hi)
{
	/* (r >> 40) * 2^-23 - 1 is exact in float as in double: 24-bit values */
	for (size_t i = lo; i < hi; i++)
		p[i] = (float)(uint32_t)(draw(seed, i) >> 40) * 0x1p-23f - 1.0f;
}

/* random in [-1, 1): sign, exponent 120..126, 7 random mantissa bits */
FILL_CLONES static void fill_bf16(uint16_t *p, uint64_t seed, size_t lo, size_t hi)
{
	for (size_t i = lo; i < hi; i++) {
		uint64_t r = draw(seed, i);
		p[i] = (uint16_t)(((r & 1) << 15) | ((120 + fold30(r >> 1) % 7u) << 7) | ((r >> 8) & 0x7f));
	}
}

/* random in [-1, 1): sign, exponent 9..14, 10 random mantissa bits;
 * (r >> 1) mod 6 = 2 * ((r >> 2) mod 3) + ((r >> 1) & 1) */
FILL_CLONES static void fill_f16(uint16_t *p, uint64_t seed, size_t lo, size_t hi)
{
	for (size_t i = lo; i < hi; i++) {
		uint64_t r = draw(seed, i);
		uint32_t m6 = 2 * (fold30(r >> 2) % 3u) + (uint32_t)((r >> 1) & 1);
		p[i] = (uint16_t)(((r & 1) << 15) | ((9 + m6) << 10) | ((r >> 8) & 0x3ff));
	}
}

static void fill_range(struct perfdb_tensor *t, uint64_t seed, size_t lo, size_t hi)
{
	switch (t->dtype) {
	case PERFDB_DTYPE_FLOAT:
		fill_f32(t->data, seed, lo, hi);
		break;
	case PERFDB_DTYPE_BF16:
		fill_bf16(t->data, seed, lo, hi);
		break;
	case PERFDB_DTYPE_FLOAT16:
		fill_f16(t->data, seed, lo, hi);
		break;
	case PERFDB_DTYPE_FLOAT64: {
		double *p = t->data;
		for (size_t i = lo; i < hi; i++)
			p[i] = (double)(draw(seed, i) >> 11) * 0x1p-52 - 1.0;
		break;
	}
	case PERFDB_DTYPE_BOOL: {
		uint8_t *p = t->data;
		for (size_t i = lo; i < hi; i++)
			p[i] = (uint8_t)(draw(seed, i) & 1);
		break;
	}
	default: {
		/* integers: randint(0, 8) in their own width (little-endian) */
		unsigned bits = perfdb_dtype_bits(t->dtype);
		uint8_t *p = t->data;
		if (bits >= 8) {
			size_t es = bits / 8;
			memset(p + lo * es, 0, (hi - lo) * es);
			for (size_t i = lo; i < hi; i++)
				p[i * es] = (uint8_t)(draw(seed, i) & 7);
		} else if (bits == 4) {
			/* two to a byte, element 2j in the low nibble (lo is even:
			 * FILL_CHUNK is).  Rows never get here (case_build.c refuses
			 * sub-byte dtypes), but a byte per element would overrun. */
			for (size_t i = lo; i < hi; i += 2) {
				uint8_t hi4 = i + 1 < hi ? (uint8_t)((draw(seed, i + 1) & 7) << 4) : 0;
				p[i / 2] = (uint8_t)((draw(seed, i) & 7) | hi4);
			}
		}
		break;
	}
	}
}

/* Elements per chunk: large enough that a thread's start costs nothing
 * beside it, small enough that a 1 MiB tensor already uses two threads. */
#define FILL_CHUNK ((size_t)1 << 18)

void perfdb_engine_fill(struct perfdb_tensor *t, uint64_t seed)
{
	size_t n = (size_t)t->numel;
	size_t nchunks = (n + FILL_CHUNK - 1) / FILL_CHUNK;
	/* the run's threads (OMP_NUM_THREADS, which the CPU backend's re-exec sets to --threads) */
#pragma omp parallel for schedule(static) if (nchunks > 1)
	for (size_t c = 0; c < nchunks; c++)
		fill_range(t, seed, c * FILL_CHUNK, c + 1 == nchunks ? n : (c + 1) * FILL_CHUNK);
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
		void *p = perfdb_huge_alloc(need, &cap);   /* on huge pages where offered: hugebuf.c */
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
			perfdb_engine_fill(&c->in[i], seed * 1000003u + i);
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
