/*
 * Stand-ins for a broken cuda module (tests/module/modules.sh): built with
 * FAKE_API_VERSION it is a module of another perfdb (the loader must refuse
 * it); built against libperfdb_fake_stub.so, whose file the test leaves out
 * of the search path, it is a module whose libraries are missing (dlopen
 * must fail, naming the library).
 */
#include <stddef.h>

#include "backend/module.h"

#ifndef FAKE_API_VERSION
#define FAKE_API_VERSION PERFDB_MODULE_API_VERSION
#endif

#ifdef FAKE_NEEDS_STUB
int perfdb_fake_stub(void);
#endif

static const struct perfdb_module fake = {
	.api_version = FAKE_API_VERSION,
	.name = "cuda",
	.backend = NULL,
	.nccl = NULL,
};

const struct perfdb_module *perfdb_module_entry(void)
{
#ifdef FAKE_NEEDS_STUB
	(void)perfdb_fake_stub();
#endif
	return &fake;
}
