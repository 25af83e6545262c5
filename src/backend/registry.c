/*
 * The backend registry (docs/style.md rule 3): the compiled-in CPU backend, and
 * the backends of loadable modules (src/backend/module.h), found by name on
 * first use.  The msprof backend is not here: it replays through an
 * external command (src/cli/cmd_microbench.c) and has no operator table.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/module.h"
#include "perfdb/local_rank.h"

const struct perfdb_backend_i *const perfdb_backends[] = {
	&perfdb_backend_cpu,
	NULL,
};

/* Backends that live in modules, by --backend name: the module's name. */
static const char *const module_backends[][2] = {
	{ "cuda", "cuda" },
};

int perfdb_backend_get(const char *name, const struct perfdb_backend_i **out,
		       struct perfdb_err *err)
{
	*out = NULL;
	for (size_t i = 0; perfdb_backends[i]; i++)
		if (strcmp(perfdb_backends[i]->name, name) == 0) {
			*out = perfdb_backends[i];
			return 0;
		}
	for (size_t i = 0; i < sizeof(module_backends) / sizeof(module_backends[0]); i++) {
		if (strcmp(module_backends[i][0], name) != 0)
			continue;
		const struct perfdb_module *m;
		struct perfdb_err e;
		perfdb_err_clear(&e);
		if (perfdb_module_load(module_backends[i][1], &m, &e) < 0)
			return perfdb_err_set(err, e.code, "--backend %s: %s", name, e.msg);
		if (!m->backend)
			return perfdb_err_set(err, PERFDB_EIO, "--backend %s: module '%s' has no backend",
					      name, module_backends[i][1]);
		if (m->backend->api_version != PERFDB_BACKEND_API_VERSION)
			return perfdb_err_set(err, PERFDB_EIO, "--backend %s: module '%s' has backend interface %u, "
					      "this perfdb needs %u (rebuild the module)", name, module_backends[i][1],
					      m->backend->api_version, PERFDB_BACKEND_API_VERSION);
		*out = m->backend;
		return 0;
	}
	return perfdb_err_set(err, PERFDB_EINVAL, "backend '%s' is not built in", name);
}

const struct perfdb_backend_i *perfdb_backend_find(const char *name)
{
	const struct perfdb_backend_i *be;
	struct perfdb_err e;
	return perfdb_backend_get(name, &be, &e) == 0 ? be : NULL;
}

int perfdb_pick_gpu(int count)
{
	return perfdb_pick_local_device(count);
}
