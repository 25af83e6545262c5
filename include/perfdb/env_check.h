/* The PERFDB_* environment variables' values, checked before a command runs. */
#ifndef PERFDB_ENV_CHECK_H
#define PERFDB_ENV_CHECK_H

#include "perfdb/err.h"

/* 0, or -PERFDB_EINVAL with "<VARIABLE>: ..." for the first bad value. */
int perfdb_env_check(struct perfdb_err *err);

#endif
