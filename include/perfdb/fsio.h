/*
 * Crash-safe file replacement and the database lock (DESIGN.md: "A file is
 * always replaced atomically ... writers of one database directory take a
 * lock.  A crash at any instant leaves every table either old or new.")
 */
#ifndef PERFDB_FSIO_H
#define PERFDB_FSIO_H

#include <stddef.h>

#include "perfdb/err.h"
#include "perfdb/strbuf.h"

/*
 * Replace path with data atomically: write a temporary file in the same
 * directory, fsync it, rename it over path, fsync the directory.  The new
 * file keeps the old file's permission bits (new files: 0666 & ~umask).
 * On any failure path is untouched and no temporary file is left.
 */
int perfdb_file_write_atomic(const char *path, const void *data, size_t len,
			     struct perfdb_err *err);

/* Read a whole file into out (appended).  -PERFDB_ENOENT if missing. */
int perfdb_file_read_all(const char *path, struct perfdb_strbuf *out,
			 struct perfdb_err *err);

/* mkdir -p with mode 0777 & ~umask.  Existing directories are fine. */
int perfdb_mkdir_p(const char *path, struct perfdb_err *err);

/* 1 if path is a directory, 0 if not or missing. */
int perfdb_is_dir(const char *path);

/*
 * Walk dir in sorted order (strcmp of names, so paths come out ordered
 * component by component, as the reference's sorted(rglob())), skipping
 * "." and "..".  visit(ctx, path, name, is_dir) returns <0 to stop with that
 * code, 1 to descend into a directory, 0 otherwise.  A directory that cannot
 * be listed is an error only for the top one.
 */
int perfdb_dir_walk(const char *dir,
		    int (*visit)(void *ctx, const char *path, const char *name, int is_dir),
		    void *ctx, struct perfdb_err *err);

/* Lock file name inside a database directory. */
#define PERFDB_LOCK_NAME ".perfdb.lock"

/* Default wait for the lock, seconds; PERFDB_LOCK_TIMEOUT overrides it. */
#define PERFDB_LOCK_TIMEOUT_DEFAULT 60.0

struct perfdb_lock {
	int fd;       /* -1 when not held */
	char *path;   /* lock file path (owned) */
};

#define PERFDB_LOCK_INIT { -1, NULL }

/*
 * Take the exclusive advisory lock of database directory dir (flock on
 * dir/.perfdb.lock, created if needed; the directory must exist).  Waits up
 * to timeout_s seconds (< 0: the default or $PERFDB_LOCK_TIMEOUT), then
 * fails with -PERFDB_ELOCKED and a message naming the holder's pid.  The
 * kernel releases the lock if the process dies.
 */
int perfdb_lock_acquire(struct perfdb_lock *lk, const char *dir,
			double timeout_s, struct perfdb_err *err);

/* Release (idempotent). */
void perfdb_lock_release(struct perfdb_lock *lk);

#endif
