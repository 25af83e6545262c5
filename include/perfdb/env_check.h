/* The PERFDB_* environment variables' values, checked before a command runs. */
#ifndef PERFDB_ENV_CHECK_H
#define PERFDB_ENV_CHECK_H

#include "perfdb/err.h"

/* 0, or -PERFDB_EINVAL with "<VARIABLE>: ..." for the first bad value. */
int perfdb_env_check(struct perfdb_err *err);

/*
 * 1 when the switch `name` (PERFDB_PROBE, PERFDB_SCHED, PERFDB_PREFLIGHT) is
 * turned off, that is set to "0"; unset or any other value is on.
 */
int perfdb_env_off(const char *name);

#endif
