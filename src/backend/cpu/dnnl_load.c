/*
 * oneDNN opened on first use (dnnl_load.h).
 *
 * Linked at build time, libdnnl (a 40 MB C++ library: its relocations,
 * static constructors and libstdc++) was loaded by every perfdb process,
 * and cost `perfdb --version` or a one-table parse 6-8 ms of their 14-18 ms
 * on the CI VMs.  Only the CPU backend uses it.  So perfdb links no oneDNN:
 * this file defines each oneDNN function the code calls, with dnnl.h's own
 * prototype, as a call through a table that dlopen and dlsym fill the first
 * time any of them runs.  The callers, the unit tests and the benchmarks'
 * direct oneDNN references stay as they were.
 *
 * The library and its table are the one process-wide state here: set once
 * (pthread_once), never closed.  Should it be missing, cpu_dnnl_open gives
 * the reason, which the CPU backend's open reports; every function then
 * returns oneDNN's own failure value (dnnl_runtime_error, NULL, 0).
 */
#include "dnnl_load.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl.h>
#include <dnnl_version.h>

#define STR_(x) #x
#define STR(x) STR_(x)
/* the soname of the oneDNN whose headers this perfdb was built with */
#define DNNL_SONAME "libdnnl.so." STR(DNNL_VERSION_MAJOR)

/*
 * Every oneDNN function perfdb calls: return type, name, parameters,
 * arguments, and the value it returns when oneDNN could not be loaded.
 */
#define DNNL_FUNCS(X)                                                                                             \
	X(dnnl_status_t, dnnl_engine_create, (dnnl_engine_t * a, dnnl_engine_kind_t b, size_t c), (a, b, c),       \
	  dnnl_runtime_error)                                                                                     \
	X(dnnl_status_t, dnnl_engine_destroy, (dnnl_engine_t a), (a), dnnl_runtime_error)                          \
	X(dnnl_cpu_isa_t, dnnl_get_effective_cpu_isa, (void), (), dnnl_cpu_isa_all)                                \
	X(dnnl_status_t, dnnl_matmul_desc_init,                                                                   \
	  (dnnl_matmul_desc_t * a, const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *c,                      \
	   const dnnl_memory_desc_t *d, const dnnl_memory_desc_t *e),                                             \
	  (a, b, c, d, e), dnnl_runtime_error)                                                                    \
	X(dnnl_status_t, dnnl_memory_create,                                                                      \
	  (dnnl_memory_t * a, const dnnl_memory_desc_t *b, dnnl_engine_t c, void *d), (a, b, c, d),               \
	  dnnl_runtime_error)                                                                                     \
	X(int, dnnl_memory_desc_equal, (const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *b), (a, b), 0)      \
	X(size_t, dnnl_memory_desc_get_size, (const dnnl_memory_desc_t *a), (a), 0)                                \
	X(dnnl_status_t, dnnl_memory_desc_init_by_strides,                                                        \
	  (dnnl_memory_desc_t * a, int b, const dnnl_dims_t c, dnnl_data_type_t d, const dnnl_dims_t e),          \
	  (a, b, c, d, e), dnnl_runtime_error)                                                                    \
	X(dnnl_status_t, dnnl_memory_desc_init_by_tag,                                                            \
	  (dnnl_memory_desc_t * a, int b, const dnnl_dims_t c, dnnl_data_type_t d, dnnl_format_tag_t e),          \
	  (a, b, c, d, e), dnnl_runtime_error)                                                                    \
	X(dnnl_status_t, dnnl_memory_destroy, (dnnl_memory_t a), (a), dnnl_runtime_error)                          \
	X(dnnl_status_t, dnnl_memory_get_data_handle, (const_dnnl_memory_t a, void **b), (a, b),                    \
	  dnnl_runtime_error)                                                                                     \
	X(dnnl_status_t, dnnl_memory_get_memory_desc, (const_dnnl_memory_t a, const dnnl_memory_desc_t **b),        \
	  (a, b), dnnl_runtime_error)                                                                             \
	X(dnnl_status_t, dnnl_memory_set_data_handle, (dnnl_memory_t a, void *b), (a, b), dnnl_runtime_error)      \
	X(dnnl_status_t, dnnl_primitive_create, (dnnl_primitive_t * a, const_dnnl_primitive_desc_t b), (a, b),      \
	  dnnl_runtime_error)                                                                                     \
	X(dnnl_status_t, dnnl_primitive_desc_create,                                                              \
	  (dnnl_primitive_desc_t * a, const_dnnl_op_desc_t b, const_dnnl_primitive_attr_t c, dnnl_engine_t d,    \
	   const_dnnl_primitive_desc_t e),                                                                        \
	  (a, b, c, d, e), dnnl_runtime_error)                                                                    \
	X(dnnl_status_t, dnnl_primitive_desc_destroy, (dnnl_primitive_desc_t a), (a), dnnl_runtime_error)          \
	X(dnnl_status_t, dnnl_primitive_desc_query,                                                               \
	  (const_dnnl_primitive_desc_t a, dnnl_query_t b, int c, void *d), (a, b, c, d), dnnl_runtime_error)     \
	X(const dnnl_memory_desc_t *, dnnl_primitive_desc_query_md,                                               \
	  (const_dnnl_primitive_desc_t a, dnnl_query_t b, int c), (a, b, c), NULL)                               \
	X(dnnl_status_t, dnnl_primitive_destroy, (dnnl_primitive_t a), (a), dnnl_runtime_error)                    \
	X(dnnl_status_t, dnnl_primitive_execute,                                                                  \
	  (const_dnnl_primitive_t a, dnnl_stream_t b, int c, const dnnl_exec_arg_t *d), (a, b, c, d),             \
	  dnnl_runtime_error)                                                                                     \
	X(dnnl_status_t, dnnl_reorder_primitive_desc_create,                                                      \
	  (dnnl_primitive_desc_t * a, const dnnl_memory_desc_t *b, dnnl_engine_t c, const dnnl_memory_desc_t *d, \
	   dnnl_engine_t e, const_dnnl_primitive_attr_t f),                                                       \
	  (a, b, c, d, e, f), dnnl_runtime_error)                                                                 \
	X(dnnl_status_t, dnnl_stream_create, (dnnl_stream_t * a, dnnl_engine_t b, unsigned c), (a, b, c),          \
	  dnnl_runtime_error)                                                                                     \
	X(dnnl_status_t, dnnl_stream_destroy, (dnnl_stream_t a), (a), dnnl_runtime_error)                          \
	X(dnnl_status_t, dnnl_stream_wait, (dnnl_stream_t a), (a), dnnl_runtime_error)                             \
	X(const dnnl_version_t *, dnnl_version, (void), (), NULL)

static struct {
#define X(ret, name, params, args, fail) ret(*name) params;
	DNNL_FUNCS(X)
#undef X
} api;
static pthread_once_t api_once = PTHREAD_ONCE_INIT;
static int api_ok;
static char api_why[600];

/* The library loaded: $PERFDB_DNNL_LIB, else the soname of the oneDNN
 * perfdb was built with (libdnnl.so.2). */
static const char *dnnl_lib(void)
{
	const char *over = getenv("PERFDB_DNNL_LIB");
	return over && *over ? over : DNNL_SONAME;
}

/* A library that is not the oneDNN wanted: closed, the table emptied. */
static void api_drop(void *h)
{
	dlclose(h);
	memset(&api, 0, sizeof(api));
}

static void api_load(void)
{
	const char *lib = dnnl_lib();
	/* RTLD_LOCAL: oneDNN's symbols stay out of the global scope, where
	 * they would meet the definitions below */
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(api_why, sizeof(api_why), "cannot load oneDNN (%s): install libdnnl%d (Debian) or set "
			 "PERFDB_DNNL_LIB", e ? e : lib, DNNL_VERSION_MAJOR);
		return;
	}
	void *s;
#define X(ret, name, params, args, fail)                                                                          \
	s = dlsym(h, #name);                                                                                       \
	if (!s) {                                                                                                  \
		snprintf(api_why, sizeof(api_why), "cannot load oneDNN: %s has no %s()", lib, #name);            \
		api_drop(h);                                                                                       \
		return;                                                                                            \
	}                                                                                                          \
	memcpy(&api.name, &s, sizeof(s));   /* object to function pointer, as POSIX allows */
	DNNL_FUNCS(X)
#undef X
	const dnnl_version_t *v = api.dnnl_version();
	if (!v || v->major != DNNL_VERSION_MAJOR) {
		snprintf(api_why, sizeof(api_why), "cannot load oneDNN: %s is version %d, perfdb was built for %d", lib,
			 v ? v->major : -1, DNNL_VERSION_MAJOR);
		api_drop(h);
		return;
	}
	api_ok = 1;
}

static int api_ready(void)
{
	pthread_once(&api_once, api_load);
	return api_ok;
}

int cpu_dnnl_open(struct perfdb_err *err)
{
	if (api_ready())
		return 0;
	return perfdb_err_set(err, PERFDB_EIO, "%s", api_why);
}

/* oneDNN's functions, each through the table.  Hidden: perfdb exports its
 * symbols (ENABLE_EXPORTS, for the cuda module), and oneDNN's own calls to
 * these names must not bind to them where it is loaded at start. */
#define X(ret, name, params, args, fail)                                                                          \
	__attribute__((visibility("hidden"))) ret name params                                                      \
	{                                                                                                          \
		return api_ready() ? api.name args : (fail);                                                       \
	}
DNNL_FUNCS(X)
#undef X
