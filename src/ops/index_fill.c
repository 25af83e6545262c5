/*
 * The index operands of the data-movement ops, as every backend fills them
 * (opdef.h perfdb_gather_indices): the engine fills integer inputs with
 * randint(0, 8), which would hit 8 cache-hot rows of a table, so the
 * indices are spread over the whole table, deterministically, and a row
 * reads (or a scatter writes) the same rows on every backend.
 */
#include <stdlib.h>
#include <string.h>

#include "perfdb/half.h"
#include "ops/opdef.h"
#include "ops/rules.h"

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t r = a % b;
		a = b;
		b = r;
	}
	return a;
}

void perfdb_slots_distinct(int64_t *slots, size_t n, int64_t nslots, int64_t block_size)
{
	int64_t bs = block_size > 0 && nslots % block_size == 0 ? block_size : 1;
	int64_t nb = nslots / bs;
	/* block i -> (a·i + 7) mod nb, a coprime with nb: a bijection on the block ids */
	int64_t a = (int64_t)(0x9e3779b1u % (uint64_t)nb) | 1;
	while (gcd64(a, nb) != 1)
		a += 2;
	int64_t pb = 7 % nb;   /* block 0's place; block i+1's is (pb + a) mod nb, no overflow */
	for (size_t i = 0; i < n; i++) {
		int64_t off = (int64_t)i % bs;
		if (i && off == 0)
			pb = (pb + a) % nb;
		slots[i] = pb * bs + off;
	}
}

static void st_index(struct perfdb_tensor *t, size_t i, int64_t k)
{
	switch (t->dtype) {
	case PERFDB_DTYPE_INT64: ((int64_t *)t->data)[i] = k; break;
	case PERFDB_DTYPE_INT32: ((int32_t *)t->data)[i] = (int32_t)k; break;
	case PERFDB_DTYPE_INT16: ((int16_t *)t->data)[i] = (int16_t)k; break;
	case PERFDB_DTYPE_FLOAT: ((float *)t->data)[i] = (float)k; break;   /* exact below 2^24 */
	default: ((uint8_t *)t->data)[i] = (uint8_t)k; break;              /* int8/uint8: the same bytes */
	}
}

/* An index in [0, v) from the filled value k and the position i. */
static int64_t spread(int64_t k, size_t i, int64_t v)
{
	uint64_t h = ((uint64_t)k + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)i * 0xbf58476d1ce4e5b9ull;
	return (int64_t)((h >> 11) % (uint64_t)v);
}

static void fold(struct perfdb_tensor *ix, int64_t v)
{
	for (size_t i = 0; i < (size_t)ix->numel; i++)
		st_index(ix, i, spread(perfdb_int_elem(ix->data, ix->dtype, i), i, v));
}

/*
 * ScatterNdUpdate: distinct rows of var when there are no more updates
 * than rows (as a KV cache's slot updates: each slot written once, so the
 * result does not depend on the order of the writes); repeats otherwise.
 */
static int scatter_rows(struct perfdb_tensor *ix, int64_t v, struct perfdb_err *err)
{
	size_t n = (size_t)ix->numel;
	if (n == 0 || (int64_t)n > v) {
		fold(ix, v);
		return 0;
	}
	int64_t *rows = malloc(n * sizeof(int64_t));
	if (!rows)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	perfdb_slots_distinct(rows, n, v, 1);
	for (size_t i = 0; i < n; i++)
		st_index(ix, i, rows[i]);
	free(rows);
	return 0;
}

/* op is base, or base's AiCore twin (the same op on the NPU's other core type). */
static int is_op(const char *op, const char *base)
{
	size_t n = strlen(base);
	return op && strncmp(op, base, n) == 0 && (op[n] == '\0' || strcmp(op + n, "AiCore") == 0);
}

int perfdb_gather_indices(struct perfdb_op_case *c, struct perfdb_err *err)
{
	if (is_op(c->op, "GatherV2")) {
		fold(&c->in[1], c->in[0].dims[0]);
	} else if (is_op(c->op, "Index")) {
		fold((struct perfdb_tensor *)perfdb_index_indices(c), c->in[0].dims[0]);
	} else if (is_op(c->op, "ScatterNdUpdate")) {
		return scatter_rows(&c->in[1], c->in[0].dims[0], err);
	}
	return 0;
}
