/*
 * What the attention ops (ops_attention.c, ops_attention_sparse.c) write
 * into their index inputs: int32/int64 elements, shuffled block tables
 * (ops_attention_kernel.h).  The Runtime cells they read are the operator
 * layer's (ops/attention.h).
 */
#include <stdlib.h>

#include "ops_attention_kernel.h"

void attn_st_int(struct perfdb_tensor *t, size_t i, int64_t v)
{
	switch (t->dtype) {
	case PERFDB_DTYPE_INT64: ((int64_t *)t->data)[i] = v; break;
	case PERFDB_DTYPE_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
	default: break;
	}
}

int attn_fill_table(struct perfdb_tensor *bt, int64_t nblocks, struct perfdb_err *err)
{
	int64_t n = nblocks > 0 ? nblocks : 1;
	int64_t *perm = malloc((size_t)n * sizeof(int64_t));
	if (!perm)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	uint64_t st = 0x9e3779b97f4a7c15u;
	for (int64_t i = 0; i < n; i++)
		perm[i] = i;
	for (int64_t i = n - 1; i > 0; i--) {
		st = st * 6364136223846793005u + 1442695040888963407u;
		int64_t j = (int64_t)((st >> 33) % (uint64_t)(i + 1)), tmp = perm[i];
		perm[i] = perm[j];
		perm[j] = tmp;
	}
	for (int64_t i = 0; i < bt->numel; i++)
		attn_st_int(bt, (size_t)i, perm[i % n]);
	free(perm);
	return 0;
}
