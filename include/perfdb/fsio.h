/*
 * Crash-safe file replacement, whole-file reads and directory walks
 * (docs/design.md: "A file is always replaced atomically ... A crash at any
 * instant leaves every table either old or new.")  The database lock is
 * perfdb/lock.h.
 */
#ifndef PERFDB_FSIO_H
#define PERFDB_FSIO_H

#include <stddef.h>
#include <sys/types.h>

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

/*
 * The same replacement with len bytes read from the descriptor src at
 * offset off (a spill file: perfdb_spill_file), copied in chunks, so a
 * table of any size is replaced in bounded memory.
 */
int perfdb_file_write_atomic_from(const char *path, int src, off_t off, size_t len,
				  struct perfdb_err *err);

/*
 * Open path for reading, only if it is a regular file: a FIFO, a device or
 * a directory where a table or an input should be is refused at once
 * ("'<path>' is not a regular file") instead of blocking.  Returns the
 * descriptor (blocking, close-on-exec), or -PERFDB_EIO ("cannot open
 * '<path>': <reason>", or not a regular file).
 */
int perfdb_open_regular(const char *path, struct perfdb_err *err);

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
 *
 * PERFDB_WALK_NO_LINKS (database walks): symbolic links are not reported
 * and not followed, so the walk stays inside the database.  Without it
 * (profiler inputs) a link is followed, but never into a directory already
 * on the current path, so a loop (`d/loop -> .`) is walked once.  Depth is
 * capped at 64 levels either way.
 */
#define PERFDB_WALK_NO_LINKS 1u
int perfdb_dir_walk(const char *dir, unsigned flags,
		    int (*visit)(void *ctx, const char *path, const char *name, int is_dir),
		    void *ctx, struct perfdb_err *err);

/*
 * Scratch files of the spilling stores (samples.c, recsort.c).  The
 * directory is `given`, else $TMPDIR, else /tmp.  perfdb_spill_file creates
 * "<dir>/perfdb-<tag>-XXXXXX" and unlinks it at once, so nothing is left
 * behind even on a crash; it returns the descriptor, or a negative code with
 * "cannot create <what> spill file in '<dir>': <reason>".
 */
const char *perfdb_spill_dir(const char *given);
int perfdb_spill_file(const char *dir, const char *tag, const char *what, struct perfdb_err *err);

/*
 * Temporary files and catchable signals (tmp_signal.c): perfdb_file_write_atomic
 * names the temporary file it writes (perfdb_tmp_claim returns a slot, or -1
 * when all are taken; perfdb_tmp_rename re-names it; perfdb_tmp_release
 * frees it), and after perfdb_tmp_cleanup_on_signals() SIGINT, SIGTERM and
 * SIGHUP unlink every named one before the process dies of the signal
 * (exit status 128+n).  A command that handles those signals itself
 * (microbench stops after its row) installs its handlers after this.
 */
int perfdb_tmp_claim(const char *name);
void perfdb_tmp_rename(int slot, const char *name);
void perfdb_tmp_release(int slot);
void perfdb_tmp_cleanup_on_signals(void);

#endif
