/*
 * Fuzz target: op_mapping.yaml (src/core/op_mapping.c over
 * src/core/yaml_doc.c).  fuzz_grid_yaml reaches the same parser behind a
 * selector byte; this target gives it the whole input and its own
 * `make fuzz-long` time.  Invariants: no crash, no leak, a failure carries
 * a message naming the file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grid/grid.h"
#include "perfdb/op_mapping.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_opmap *m = NULL;
	if (perfdb_opmap_load_mem(&m, "op_mapping.yaml", (const char *)data, size, &err) == 0)
		(void)perfdb_opmap_count(m);
	else if (!strstr(err.msg, "op_mapping"))
		abort();
	perfdb_opmap_free(m);
	return 0;
}
