/*
 * Fuzz target: the YAML inputs of perfdb grid (src/core/yaml_doc.c,
 * config.c, op_mapping.c, expr.c): the first byte picks the parser, the rest
 * is the document.  A grid configuration that loads is also used to route
 * a few kernel types.  Invariants: no crash, no leak, a failure always
 * carries a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grid/grid.h"
#include "perfdb/op_mapping.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	const char *doc = (const char *)data + 1;
	size_t len = size - 1;
	if (data[0] & 1) {
		struct perfdb_opmap *m = NULL;
		if (perfdb_opmap_load_mem(&m, "op_mapping.yaml", doc, len, &err) == 0)
			(void)perfdb_opmap_count(m);
		else if (!err.msg[0])
			abort();
		perfdb_opmap_free(m);
	} else {
		struct perfdb_grid_config *c = NULL;
		if (perfdb_grid_config_load_mem(&c, "grid.yaml", doc, len, &err) == 0) {
			static const char *const k[] = { "Add", "MatMulV2", "Pack", "" };
			const char *p;
			for (size_t i = 0; i < 4; i++)
				(void)perfdb_grid_route(c, NULL, k[i], &p);
		} else if (!err.msg[0]) {
			abort();
		}
		perfdb_grid_config_free(c);
	}
	return 0;
}
