/*
 * CANN at run time (hccl_api.h): libascendcl and libhccl found and opened
 * with dlopen, their functions looked up by name, and CANN's result codes
 * turned into one-line messages.
 */
#include "hccl_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CANN's default install prefix (the toolkit's set_env.sh points
 * ASCEND_HOME_PATH there too) */
#define ASCEND_DEFAULT_LIB64 "/usr/local/Ascend/ascend-toolkit/latest/lib64"

/* hccl_types.h's HcclResult names, by value */
static const char *const hccl_names[] = {
	"HCCL_SUCCESS", "HCCL_E_PARA", "HCCL_E_PTR", "HCCL_E_MEMORY", "HCCL_E_INTERNAL",
	"HCCL_E_NOT_SUPPORT", "HCCL_E_NOT_FOUND", "HCCL_E_UNAVAIL", "HCCL_E_SYSCALL",
	"HCCL_E_TIMEOUT", "HCCL_E_OPEN_FILE_FAILURE", "HCCL_E_TCP_CONNECT", "HCCL_E_ROCE_CONNECT",
	"HCCL_E_TCP_TRANSFER", "HCCL_E_ROCE_TRANSFER", "HCCL_E_RUNTIME", "HCCL_E_DRV",
	"HCCL_E_PROFILING", "HCCL_E_CCE", "HCCL_E_NETWORK", "HCCL_E_AGAIN", "HCCL_E_REMOTE",
	"HCCL_E_SUSPENDING",
};

/*
 * Open lib (a file name) from the first place that has it; *why collects
 * each place tried and dlerror's reason, for the one-line error.
 */
static void *open_lib(const char *lib, char *path, size_t cap, char *why, size_t whycap)
{
	const char *dirs[3];
	size_t n = 0;
	const char *over = getenv("PERFDB_ASCEND_LIB_DIR");
	const char *home = getenv("ASCEND_HOME_PATH");
	char homelib[512];
	if (over && *over) {
		dirs[n++] = over;   /* the override is the only place looked at */
	} else {
		if (home && *home) {
			snprintf(homelib, sizeof(homelib), "%s/lib64", home);
			dirs[n++] = homelib;
		}
		dirs[n++] = "";   /* the dynamic linker's search */
		dirs[n++] = ASCEND_DEFAULT_LIB64;
	}
	why[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (dirs[i][0])
			snprintf(path, cap, "%s/%s", dirs[i], lib);
		else
			snprintf(path, cap, "%s", lib);
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
		const char *e = dlerror();
		size_t w = strlen(why);
		snprintf(why + w, whycap - w, "%s%s", w ? "; " : "", e ? e : path);
	}
	return NULL;
}

/* dlsym into a function pointer (object to function pointer, as POSIX allows) */
#define SYM(h, api, name, required)                                                     \
	do {                                                                            \
		void *s_ = dlsym((h), #name);                                           \
		memcpy(&(api)->name, &s_, sizeof(s_));                                  \
		if (!s_ && (required))                                                  \
			return perfdb_err_set(err, PERFDB_EIO, "%s has no %s()",         \
					      (h) == (api)->acl_lib ? (api)->acl_path   \
								    : (api)->hccl_path, \
					      #name);                                   \
	} while (0)

int perfdb_hccl_api_open(struct perfdb_hccl_api *api, struct perfdb_err *err)
{
	memset(api, 0, sizeof(*api));
	char why[2048];
	static const char *const hint = "install CANN and source its set_env.sh, or set "
					"ASCEND_HOME_PATH or PERFDB_ASCEND_LIB_DIR";
	/* libascendcl first: libhccl needs it, and the same one must serve both */
	api->acl_lib = open_lib("libascendcl.so", api->acl_path, sizeof(api->acl_path), why, sizeof(why));
	if (!api->acl_lib)
		return perfdb_err_set(err, PERFDB_ENOENT, "cannot load libascendcl.so (%s); %s", why, hint);
	api->hccl_lib = open_lib("libhccl.so", api->hccl_path, sizeof(api->hccl_path), why, sizeof(why));
	if (!api->hccl_lib)
		return perfdb_err_set(err, PERFDB_ENOENT, "cannot load libhccl.so (%s); %s", why, hint);
	void *a = api->acl_lib, *h = api->hccl_lib;
	SYM(a, api, aclInit, 1);
	SYM(a, api, aclFinalize, 1);
	SYM(a, api, aclrtGetDeviceCount, 1);
	SYM(a, api, aclrtSetDevice, 1);
	SYM(a, api, aclrtResetDevice, 1);
	SYM(a, api, aclrtMalloc, 1);
	SYM(a, api, aclrtFree, 1);
	SYM(a, api, aclrtMemcpy, 1);
	SYM(a, api, aclrtCreateStream, 1);
	SYM(a, api, aclrtDestroyStream, 1);
	SYM(a, api, aclrtSynchronizeStream, 1);
	SYM(a, api, aclrtCreateEvent, 1);
	SYM(a, api, aclrtDestroyEvent, 1);
	SYM(a, api, aclrtRecordEvent, 1);
	SYM(a, api, aclrtEventElapsedTime, 1);
	SYM(a, api, aclGetRecentErrMsg, 0);
	SYM(a, api, aclrtGetSocName, 0);
	SYM(h, api, HcclGetRootInfo, 1);
	SYM(h, api, HcclCommInitRootInfo, 1);
	SYM(h, api, HcclAllReduce, 1);
	SYM(h, api, HcclAllGather, 1);
	SYM(h, api, HcclReduceScatter, 1);
	SYM(h, api, HcclAlltoAll, 1);
	SYM(h, api, HcclCommDestroy, 1);
	SYM(h, api, HcclGetErrorString, 0);
	return 0;
}

void perfdb_hccl_api_close(struct perfdb_hccl_api *api)
{
	if (api->hccl_lib)
		dlclose(api->hccl_lib);
	if (api->acl_lib)
		dlclose(api->acl_lib);
	memset(api, 0, sizeof(*api));
}

int perfdb_hccl_fail(const struct perfdb_hccl_api *api, HcclResult r, const char *call,
		     struct perfdb_err *err)
{
	const char *name = r >= 0 && (size_t)r < sizeof(hccl_names) / sizeof(hccl_names[0])
				   ? hccl_names[r] : "unknown HcclResult";
	const char *words = api->HcclGetErrorString ? api->HcclGetErrorString(r) : NULL;
	if (words && *words)
		return perfdb_err_set(err, PERFDB_EIO, "%s failed: %s (%d): %s", call, name, r, words);
	return perfdb_err_set(err, PERFDB_EIO, "%s failed: %s (%d)", call, name, r);
}

int perfdb_acl_fail(const struct perfdb_hccl_api *api, aclError e, const char *call,
		    struct perfdb_err *err)
{
	const char *msg = api->aclGetRecentErrMsg ? api->aclGetRecentErrMsg() : NULL;
	char one[256] = "";
	if (msg) {
		/* CANN's message may span lines: the first says what went wrong */
		snprintf(one, sizeof(one), "%s", msg);
		one[strcspn(one, "\r\n")] = '\0';
	}
	if (one[0])
		return perfdb_err_set(err, PERFDB_EIO, "%s failed: ACL error %d: %s", call, e, one);
	return perfdb_err_set(err, PERFDB_EIO, "%s failed: ACL error %d", call, e);
}
