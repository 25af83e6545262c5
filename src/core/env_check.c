/*
 * The PERFDB_* environment, checked once before any command runs: a value
 * perfdb cannot use is a usage error naming the variable (exit 2), never a
 * silent default (docs/guide.md "Environment variables";
 * docs/reliability.md "Strict environment values").
 */
#include "perfdb/env_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perfdb/cpu_isa.h"
#include "perfdb/lock.h"

static int check_lock_timeout(const char *v, struct perfdb_err *err)
{
	(void)v;
	double s;
	return perfdb_lock_timeout_env(&s, err);
}

static int check_bool(const char *name, const char *v, struct perfdb_err *err)
{
	if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0)
		return 0;
	return perfdb_err_set(err, PERFDB_EINVAL, "%s: invalid value '%s' (expected 0 or 1)", name, v);
}

static int check_probe(const char *v, struct perfdb_err *err)
{
	return check_bool("PERFDB_PROBE", v, err);
}

static int check_sched(const char *v, struct perfdb_err *err)
{
	return check_bool("PERFDB_SCHED", v, err);
}

static int check_preflight(const char *v, struct perfdb_err *err)
{
	return check_bool("PERFDB_PREFLIGHT", v, err);
}

static int check_trace(const char *v, struct perfdb_err *err)
{
	return check_bool("PERFDB_TRACE_OPTIONS", v, err);
}

/* The timestamp becomes part of report file names under <db>/reports/: one
 * plain file-name component, so it can name nothing outside the database. */
static int check_timestamp(const char *v, struct perfdb_err *err)
{
	size_t n = strlen(v);
	int ok = n > 0 && n <= 64 && v[0] != '.';
	for (size_t i = 0; ok && i < n; i++)
		ok = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-",
			    v[i]) != NULL;
	if (ok)
		return 0;
	return perfdb_err_set(err, PERFDB_EINVAL,
			      "PERFDB_TIMESTAMP: invalid value '%s' (expected up to 64 letters, digits "
			      "and '_.+-', not starting with '.', e.g. 20260101_120000)", v);
}

static int check_data_dir(const char *v, struct perfdb_err *err)
{
	struct stat st;
	if (*v && stat(v, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	return perfdb_err_set(err, PERFDB_EINVAL, "PERFDB_DATA_DIR: not a directory: '%s'", v);
}

static int check_max_cpu_isa(const char *v, struct perfdb_err *err)
{
	enum perfdb_cpu_isa isa;
	return perfdb_cpu_isa_parse(v, &isa, err);
}

static int check_module_dir(const char *v, struct perfdb_err *err)
{
	struct stat st;
	if (*v && stat(v, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	return perfdb_err_set(err, PERFDB_EINVAL, "PERFDB_MODULE_DIR: not a directory: '%s'", v);
}

static int check_ascend_lib_dir(const char *v, struct perfdb_err *err)
{
	struct stat st;
	if (*v && stat(v, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	return perfdb_err_set(err, PERFDB_EINVAL, "PERFDB_ASCEND_LIB_DIR: not a directory: '%s'", v);
}

static const struct {
	const char *name;
	int (*check)(const char *value, struct perfdb_err *err);
} vars[] = {
	{ "PERFDB_ASCEND_LIB_DIR", check_ascend_lib_dir },
	{ "PERFDB_DATA_DIR", check_data_dir },
	{ "PERFDB_LOCK_TIMEOUT", check_lock_timeout },
	{ "PERFDB_MAX_CPU_ISA", check_max_cpu_isa },
	{ "PERFDB_MODULE_DIR", check_module_dir },
	{ "PERFDB_PROBE", check_probe },
	{ "PERFDB_SCHED", check_sched },
	{ "PERFDB_PREFLIGHT", check_preflight },
	{ "PERFDB_TIMESTAMP", check_timestamp },
	{ "PERFDB_TRACE_OPTIONS", check_trace },
};

int perfdb_env_check(struct perfdb_err *err)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i].name);
		if (v)
			PERFDB_TRY(vars[i].check(v, err));
	}
	return 0;
}

int perfdb_env_off(const char *name)
{
	const char *v = getenv(name);
	return v && strcmp(v, "0") == 0;
}
