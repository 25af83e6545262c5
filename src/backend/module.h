/*
 * Backend modules: the CUDA backend and the NCCL transport live in a shared
 * object loaded with dlopen on first use (docs/design.md "Architecture",
 * in the spirit of ggml's dynamically loaded backends), so the perfdb
 * binary links no CUDA library: a command that does not use the GPU starts
 * in milliseconds, and on a machine without CUDA only `--backend cuda` and
 * `comm --backend nccl` fail, each with one line.
 *
 * A module exports one symbol, PERFDB_MODULE_ENTRY, returning its struct
 * perfdb_module.  The loader refuses a module whose api_version (or whose
 * backend's) is not this perfdb's.  Modules are looked for in
 * $PERFDB_MODULE_DIR, else <dir of the executable>/../PERFDB_MODULEDIR_REL
 * (lib/perfdb under the install prefix; build/lib/perfdb in a build tree),
 * named libperfdb-<name>.so.
 */
#ifndef PERFDB_BACKEND_MODULE_H
#define PERFDB_BACKEND_MODULE_H

#include <stddef.h>

#include "backend/backend.h"
#include "backend/transport.h"
#include "perfdb/err.h"

/* Bumped whenever struct perfdb_module, perfdb_backend_i or perfdb_comm_transport_i change. */
#define PERFDB_MODULE_API_VERSION 3

struct perfdb_module {
	unsigned api_version;                   /* PERFDB_MODULE_API_VERSION */
	const char *name;                       /* "cuda" */
	const struct perfdb_backend_i *backend; /* microbench --backend <name>, or NULL */
	const struct perfdb_comm_transport_i *nccl; /* comm --backend nccl, or NULL */
};

#define PERFDB_MODULE_ENTRY "perfdb_module_entry"
typedef const struct perfdb_module *(*perfdb_module_entry_fn)(void);
/* What a module defines (and nothing else needs to be visible). */
const struct perfdb_module *perfdb_module_entry(void);

/*
 * The path module name is loaded from (whether or not it exists); 0, or
 * -PERFDB_ENOENT when the executable's own path cannot be read.
 */
int perfdb_module_path(const char *name, char *buf, size_t cap, struct perfdb_err *err);

/*
 * Load module name (once per process: the handle stays open until exit,
 * the one process-wide state of the loader).  0 and *out, or an error
 * naming the module's path and the reason: -PERFDB_EINVAL when it is not
 * expected (perfdb_module_expected), -PERFDB_ENOENT when not installed,
 * -PERFDB_EIO for dlopen's message (a missing libcudart...), no entry
 * point, or an API version mismatch.
 */
int perfdb_module_load(const char *name, const struct perfdb_module **out, struct perfdb_err *err);

/* Whether this perfdb was built with module name (its file may be missing). */
int perfdb_module_built(const char *name);

/* Whether perfdb_module_load may find it: built, or $PERFDB_MODULE_DIR names
 * a directory to look in.  Otherwise loading is a usage error (-PERFDB_EINVAL). */
int perfdb_module_expected(const char *name);

#endif
