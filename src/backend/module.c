/*
 * The module loader (src/backend/module.h): dlopen on first use, the entry
 * point and the API versions checked before anything of the module runs.
 */
#include "backend/module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PERFDB_MODULEDIR_REL
#define PERFDB_MODULEDIR_REL "lib/perfdb"
#endif

/* The modules this build made (CMake: PERFDB_MODULES="cuda" or ""). */
#ifndef PERFDB_MODULES
#define PERFDB_MODULES ""
#endif

int perfdb_module_built(const char *name)
{
	const char *s = PERFDB_MODULES;
	size_t n = strlen(name);
	while (*s) {
		const char *e = strchr(s, ' ');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len == n && strncmp(s, name, n) == 0)
			return 1;
		s += len;
		while (*s == ' ')
			s++;
	}
	return 0;
}

int perfdb_module_expected(const char *name)
{
	return perfdb_module_built(name) || getenv("PERFDB_MODULE_DIR") != NULL;
}

int perfdb_module_path(const char *name, char *buf, size_t cap, struct perfdb_err *err)
{
	const char *dir = getenv("PERFDB_MODULE_DIR");
	if (dir && *dir) {
		snprintf(buf, cap, "%s/libperfdb-%s.so", dir, name);
		return 0;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return perfdb_err_set(err, PERFDB_ENOENT,
				      "cannot find the perfdb executable's directory (set PERFDB_MODULE_DIR)");
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(buf, cap, "%s/../%s/libperfdb-%s.so", exe, PERFDB_MODULEDIR_REL, name);
	return 0;
}

static struct {
	char name[32];
	const struct perfdb_module *m;
} loaded[4];

int perfdb_module_load(const char *name, const struct perfdb_module **out, struct perfdb_err *err)
{
	*out = NULL;
	for (size_t i = 0; i < sizeof(loaded) / sizeof(loaded[0]); i++)
		if (loaded[i].m && strcmp(loaded[i].name, name) == 0) {
			*out = loaded[i].m;
			return 0;
		}
	if (!perfdb_module_expected(name))
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "this perfdb was built without the %s module", name);
	char path[PATH_MAX + 64];
	PERFDB_TRY(perfdb_module_path(name, path, sizeof(path), err));
	struct stat st;
	if (stat(path, &st) < 0)
		return perfdb_err_set(err, PERFDB_ENOENT, "module '%s' is not installed", path);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		/* dlerror names the library that is missing (libcudart.so.13, ...) */
		const char *why = dlerror();
		return perfdb_err_set(err, PERFDB_EIO, "cannot load module '%s': %s", path,
				      why ? why : "unknown reason");
	}
	perfdb_module_entry_fn entry;
	void *sym = dlsym(h, PERFDB_MODULE_ENTRY);
	memcpy(&entry, &sym, sizeof(entry));   /* object to function pointer, as POSIX allows */
	const struct perfdb_module *m = entry ? entry() : NULL;
	int rc = 0;
	if (!m)
		rc = perfdb_err_set(err, PERFDB_EIO, "module '%s' has no %s()", path, PERFDB_MODULE_ENTRY);
	else if (m->api_version != PERFDB_MODULE_API_VERSION ||
		 (m->backend && m->backend->api_version != PERFDB_BACKEND_API_VERSION))
		rc = perfdb_err_set(err, PERFDB_EIO,
				    "module '%s' has API version %u (backend %u); this perfdb needs %u "
				    "(backend %u): install the module built with this perfdb",
				    path, m->api_version, m->backend ? m->backend->api_version : 0,
				    PERFDB_MODULE_API_VERSION, PERFDB_BACKEND_API_VERSION);
	if (rc < 0) {
		dlclose(h);
		return rc;
	}
	for (size_t i = 0; i < sizeof(loaded) / sizeof(loaded[0]); i++)
		if (!loaded[i].m) {
			snprintf(loaded[i].name, sizeof(loaded[i].name), "%s", name);
			loaded[i].m = m;
			break;
		}
	*out = m;   /* the handle stays open: the module's code is in use until exit */
	return 0;
}
