/*
 * The database lock (docs/design.md: "writers of one database directory
 * take a lock"; docs/reliability.md guarantees 4 and 5).
 *
 * The lock is a flock(2) on the database directory's own descriptor, so it
 * leaves no file behind: a directory perfdb has written holds exactly its
 * tables (and reports/), as the reference's does.
 *
 * Scope.  A writer locks one directory D: an exclusive flock on D and a
 * shared flock on every ancestor of D up to "/", taken top-down.  Two
 * writers therefore exclude each other whenever one's directory contains
 * the other's, whatever paths they were given: `grid --database-root R`
 * (D = R) and `parse --database-path R/dev/vllm_ascend/v` (D = that
 * directory, R share-locked) run one after the other, while two parses of
 * different version directories run side by side.  Locks are always taken
 * top-down, one path per lock, so no two writers can wait for each other
 * (no deadlock).  A process holds at most one lock at a time: a command
 * that writes several directories locks the directory that contains them.
 *
 * Every component is opened relative to its parent with O_NOFOLLOW, so no
 * symbolic link is followed while locking (the path itself is resolved
 * once, with realpath, before).  An ancestor that cannot be opened for
 * reading (no read permission) is not locked.
 *
 * The holder of a lock is named from /proc/locks (pid and command line), so
 * no pid file is needed.
 */
#ifndef PERFDB_LOCK_H
#define PERFDB_LOCK_H

#include <stddef.h>

#include "perfdb/err.h"

/* Default wait for the lock, seconds; PERFDB_LOCK_TIMEOUT overrides it. */
#define PERFDB_LOCK_TIMEOUT_DEFAULT 60.0

/* The file earlier perfdb versions kept in each database directory; the
 * next writer that holds the new lock removes it. */
#define PERFDB_LOCK_LEGACY_NAME ".perfdb.lock"

struct perfdb_lock {
	int fd;        /* the directory's descriptor, flock'ed exclusively; -1 when not held */
	int *up;       /* its ancestors' descriptors, share-locked, "/" first (owned) */
	size_t nup;
	char *path;    /* canonical path of the locked directory (owned) */
};

#define PERFDB_LOCK_INIT { -1, NULL, 0, NULL }

/*
 * Read $PERFDB_LOCK_TIMEOUT: unset means the default; otherwise seconds
 * as a plain decimal (digits and at most one '.': 60, 0.5; no sign, blank,
 * hex or exponent).  Returns 0 and sets *seconds, or -PERFDB_EINVAL
 * with a message naming the variable.
 */
int perfdb_lock_timeout_env(double *seconds, struct perfdb_err *err);

/*
 * Take the lock of database directory dir (see the top of this file).
 * Waits up to timeout_s seconds (< 0: $PERFDB_LOCK_TIMEOUT or the default),
 * then fails with -PERFDB_ELOCKED and a message naming the holder's pid.
 * -PERFDB_ENOENT if dir does not exist or is not a directory.  Once held,
 * the temporary files of dead writers under dir and the legacy lock file
 * are removed.  The kernel releases the lock when the process dies.
 */
int perfdb_lock_acquire(struct perfdb_lock *lk, const char *dir,
			double timeout_s, struct perfdb_err *err);

/* Release (idempotent). */
void perfdb_lock_release(struct perfdb_lock *lk);

#endif
