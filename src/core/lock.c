/*
 * The database lock: flock on the directory itself, shared locks on its
 * ancestors (include/perfdb/lock.h states the scope and why it cannot
 * deadlock).  No lock file is created.
 */
#include "perfdb/lock.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "perfdb/fsio.h"

int perfdb_lock_timeout_env(double *seconds, struct perfdb_err *err)
{
	*seconds = PERFDB_LOCK_TIMEOUT_DEFAULT;
	const char *e = getenv("PERFDB_LOCK_TIMEOUT");
	if (!e)
		return 0;
	/* a plain decimal only: no sign (so no "-0"), blank, hex, exponent or
	 * inf, all of which strtod would take */
	size_t n = strlen(e);
	const char *dot = strchr(e, '.');
	bool plain = n && strspn(e, "0123456789.") == n && strcspn(e, "0123456789") < n &&
		     !(dot && strchr(dot + 1, '.'));
	errno = 0;
	double v = plain ? strtod(e, NULL) : -1;
	if (!plain || errno || !isfinite(v) || v < 0)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "PERFDB_LOCK_TIMEOUT: invalid value '%s' "
				      "(expected seconds >= 0, e.g. 60 or 0.5)", e);
	*seconds = v;
	return 0;
}

static double elapsed(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) +
	       (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

/* "pid N" of a process holding a flock on (dev, ino) that conflicts with
 * the mode we asked for, from /proc/locks; "" if none is found. */
static void find_holder(const struct stat *st, int want_excl, char *out, size_t cap)
{
	out[0] = '\0';
	FILE *f = fopen("/proc/locks", "re");
	if (!f)
		return;
	char line[256];
	long found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char type[16], mode[16], rw[16];
		long pid;
		unsigned maj, min;
		unsigned long ino;
		/* "3: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; waiters have "->" */
		const char *p = strchr(line, ':');
		if (!p || strstr(line, "->"))
			continue;
		if (sscanf(p + 1, "%15s %15s %15s %ld %x:%x:%lu", type, mode, rw, &pid, &maj,
			   &min, &ino) != 7 || strcmp(type, "FLOCK") != 0)
			continue;
		if (ino != (unsigned long)st->st_ino || maj != major(st->st_dev) ||
		    min != minor(st->st_dev))
			continue;
		if (!want_excl && strcmp(rw, "WRITE") != 0)
			continue;
		found = pid;
	}
	fclose(f);
	if (!found)
		return;
	int n = snprintf(out, cap, "pid %ld", found);
	char path[64], cmd[160];
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", found);
	FILE *c = fopen(path, "re");
	if (!c || n < 0 || (size_t)n >= cap) {
		if (c)
			fclose(c);
		return;
	}
	size_t len = fread(cmd, 1, sizeof(cmd) - 1, c);
	fclose(c);
	/* argv[0]'s base name, and for perfdb its subcommand ("perfdb grid") */
	cmd[len] = '\0';
	const char *a0 = strrchr(cmd, '/') ? strrchr(cmd, '/') + 1 : cmd;
	size_t l0 = strlen(cmd);
	const char *a1 = l0 + 1 < len && strcmp(a0, "perfdb") == 0 ? cmd + l0 + 1 : "";
	if (*a0)
		snprintf(out + n, cap - (size_t)n, ": %.40s%s%.20s", a0, *a1 ? " " : "", a1);
}

/* flock fd in mode, retrying until the deadline.  1 = taken, 0 = timed out,
 * -errno on an error other than contention. */
static int flock_wait(int fd, int mode, const struct timespec *start, double limit)
{
	for (;;) {
		if (flock(fd, mode | LOCK_NB) == 0)
			return 1;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (elapsed(start) >= limit)
			return 0;
		struct timespec d = { 0, 20 * 1000 * 1000 };
		nanosleep(&d, NULL);
	}
}

/*
 * A writer killed between creating its temporary file and the rename
 * leaves `.<name>.tmp.<pid>.<hex>` behind (its table is intact).  The next
 * writer to take the lock removes those whose process no longer exists; a
 * live pid's file may belong to a writer that does not hold the lock (the
 * report files), so it is left alone.
 */
static int stale_tmp(const char *name)
{
	if (name[0] != '.')
		return 0;
	const char *t = NULL;
	for (const char *p = strstr(name + 1, ".tmp."); p; p = strstr(p + 1, ".tmp."))
		t = p;
	if (!t || t == name + 1)
		return 0;
	const char *s = t + 5;
	char *end;
	long pid = strtol(s, &end, 10);
	if (end == s || *end != '.' || pid <= 0 || !isxdigit((unsigned char)end[1]))
		return 0;
	for (s = end + 1; isxdigit((unsigned char)*s); s++)
		;
	if (*s || pid == (long)getpid())
		return 0;
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

static int sweep_visit(void *ctx, const char *path, const char *name, int is_dir)
{
	(void)ctx;
	struct stat st;
	if (is_dir)   /* not through links: the sweep stays inside the database */
		return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
	if (stale_tmp(name))
		(void)unlink(path);
	return 0;
}

/* The pid file of earlier perfdb versions ("pid N\n" or empty), only when it
 * is a regular file of that form: anything else of that name is the user's. */
static void remove_legacy(int dirfd)
{
	int fd = openat(dirfd, PERFDB_LOCK_LEGACY_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	char buf[40];
	ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < 32
		    ? read(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (n < 0)
		return;
	buf[n] = '\0';
	long pid;
	char nl;
	if (n == 0 || (sscanf(buf, "pid %ld%c", &pid, &nl) == 2 && nl == '\n'))
		(void)unlinkat(dirfd, PERFDB_LOCK_LEGACY_NAME, 0);
}

static void drop(struct perfdb_lock *lk)
{
	if (lk->fd >= 0)
		close(lk->fd);   /* closing the last descriptor releases its flock */
	for (size_t i = 0; i < lk->nup; i++)
		close(lk->up[i]);
	free(lk->up);
	free(lk->path);
	lk->fd = -1;
	lk->up = NULL;
	lk->nup = 0;
	lk->path = NULL;
}

/* Open every component of the canonical path canon, relative to its parent
 * and without following links: O_PATH descriptors in pathfd[0..*n-1], "/"
 * first, the directory itself last. */
static int open_chain(const char *canon, int **pathfd, size_t *n, struct perfdb_err *err)
{
	size_t cap = 1;
	for (const char *p = canon; *p; p++)
		cap += *p == '/';
	int *v = malloc(cap * sizeof(*v));
	if (!v)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	size_t k = 0;
	v[k] = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (v[k] < 0) {
		free(v);
		return perfdb_err_errno(err, errno, "cannot open '/'");
	}
	k++;
	const char *p = canon;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char name[256];
		int fd = -1, saved = ENAMETOOLONG;
		if (len < sizeof(name)) {
			memcpy(name, p, len);
			name[len] = '\0';
			fd = openat(v[k - 1], name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			saved = errno;
		}
		if (fd < 0) {
			for (size_t i = 0; i < k; i++)
				close(v[i]);
			free(v);
			/* a component replaced by a link after realpath is refused */
			return perfdb_err_errno(err, saved, "cannot lock database '%s'", canon);
		}
		v[k++] = fd;
		p += len;
	}
	*pathfd = v;
	*n = k;
	return 0;
}

int perfdb_lock_acquire(struct perfdb_lock *lk, const char *dir,
			double timeout_s, struct perfdb_err *err)
{
	*lk = (struct perfdb_lock)PERFDB_LOCK_INIT;
	double limit = timeout_s;
	if (limit < 0)
		PERFDB_TRY(perfdb_lock_timeout_env(&limit, err));
	lk->path = realpath(dir, NULL);
	int e = lk->path ? 0 : errno;
	if (e && e != ENOENT && e != ENOTDIR) {
		/* it may well exist: a relative path whose absolute form passes PATH_MAX */
		drop(lk);
		return perfdb_err_errno(err, e, "cannot resolve the database directory '%s'", dir);
	}
	if (!lk->path || !perfdb_is_dir(lk->path)) {
		drop(lk);
		return perfdb_err_set(err, PERFDB_ENOENT, "database directory not found: '%s'", dir);
	}
	int *chain = NULL;
	size_t n = 0;
	int rc = open_chain(lk->path, &chain, &n, err);
	if (rc < 0) {
		drop(lk);
		return rc;
	}
	lk->up = malloc(n * sizeof(*lk->up));
	if (!lk->up)
		rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		int last = i + 1 == n;
		int fd = openat(chain[i], ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			if (!last && (errno == EACCES || errno == EPERM))
				continue;   /* an unreadable ancestor is not locked */
			rc = perfdb_err_errno(err, errno, "cannot lock database '%s'", dir);
			break;
		}
		int got = flock_wait(fd, last ? LOCK_EX : LOCK_SH, &start, limit);
		if (got == 1) {
			if (last)
				lk->fd = fd;
			else
				lk->up[lk->nup++] = fd;
			continue;
		}
		if (got < 0) {
			rc = perfdb_err_errno(err, -got, "cannot lock database '%s'", dir);
		} else {
			struct stat st;
			char holder[256] = "";
			if (fstat(fd, &st) == 0)
				find_holder(&st, last, holder, sizeof(holder));
			char where[4200] = "";
			if (!last) {
				char lp[32];
				snprintf(lp, sizeof(lp), "/proc/self/fd/%d", fd);
				char anc[4096];
				ssize_t al = readlink(lp, anc, sizeof(anc) - 1);
				if (al > 0) {
					anc[al] = '\0';
					snprintf(where, sizeof(where), ", holding '%s'", anc);
				}
			}
			rc = perfdb_err_set(err, PERFDB_ELOCKED,
				"database '%s' is locked by another perfdb process (%s%s); "
				"gave up after %.0f s (set PERFDB_LOCK_TIMEOUT to wait longer)",
				dir, holder[0] ? holder : "holder unknown", where, limit);
		}
		close(fd);
	}
	for (size_t i = 0; i < n; i++)
		close(chain[i]);
	free(chain);
	if (rc < 0) {
		drop(lk);
		return rc;
	}
	remove_legacy(lk->fd);
	struct perfdb_err ignored;
	(void)perfdb_dir_walk(lk->path, PERFDB_WALK_NO_LINKS, sweep_visit, NULL, &ignored);
	return 0;
}

void perfdb_lock_release(struct perfdb_lock *lk)
{
	drop(lk);
}
