/*
 * The backend registry (STYLE.md rule 3): every compiled-in native backend,
 * CPU last.  The msprof backend is not here: it replays through an external
 * command (src/cli/cmd_microbench.c) and has no operator table.
 */
#include <string.h>

#include "backend/backend.h"

const struct perfdb_backend_i *const perfdb_backends[] = {
#ifdef PERFDB_HAVE_CUDA
	&perfdb_backend_cuda,
#endif
	&perfdb_backend_cpu,
	NULL,
};

const struct perfdb_backend_i *perfdb_backend_find(const char *name)
{
	for (size_t i = 0; perfdb_backends[i]; i++)
		if (strcmp(perfdb_backends[i]->name, name) == 0)
			return perfdb_backends[i];
	return NULL;
}
