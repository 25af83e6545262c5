/*
 * Fuzz target: HuggingFace config.json models (src/grid/models.c
 * perfdb_grid_model_parse_hf) and the GEMM pairs of what loads.
 * Invariants: no crash or leak; a loaded model has positive hidden size,
 * heads and kv heads; every pair is positive.
 */
#include <stdint.h>
#include <stdlib.h>

#include "grid/grid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfdb_grid_models m;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	perfdb_grid_models_init(&m);
	if (perfdb_grid_model_parse_hf(&m, "config.json", "fuzz/model", (const char *)data, size,
				       NULL, &err) == 0) {
		const struct perfdb_grid_model *x = &m.v[0];
		if (x->hidden <= 0 || x->heads <= 0 || x->kv_heads <= 0)
			abort();
		int64_t(*p)[2] = NULL;
		size_t n = 0;
		if (perfdb_grid_nk_pairs(&m, &p, &n, &err) == 0)
			for (size_t i = 0; i < n; i++)
				if (p[i][0] < 0 || p[i][1] <= 0)
					abort();
		free(p);
	} else if (!err.msg[0]) {
		abort();
	}
	perfdb_grid_models_release(&m);
	return 0;
}
