/*
 * Atomic file replacement, whole-file reads, mkdir -p and the database
 * lock (include/perfdb/fsio.h).
 *
 * Atomic replace protocol: open `.<name>.tmp.<pid>.<n>` with O_EXCL in the
 * target's directory (same filesystem, so rename is atomic), write all,
 * fsync, close, rename over the target, fsync the directory so the rename
 * itself survives a power loss.  Any failure unlinks the temporary file.
 */
#include "perfdb/fsio.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len > ((size_t)1 << 30) ? (size_t)1 << 30 : len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static char *dir_of(const char *path)
{
	char *tmp = strdup(path);
	if (!tmp)
		return NULL;
	char *d = strdup(dirname(tmp));
	free(tmp);
	return d;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	/* Some filesystems refuse fsync on directories; the rename is still
	 * atomic there, only its durability is the filesystem's business. */
	if (rc < 0 && (errno == EINVAL || errno == EROFS))
		rc = 0;
	close(fd);
	return rc;
}

int perfdb_file_write_atomic(const char *path, const void *data, size_t len,
			     struct perfdb_err *err)
{
	char *dir = dir_of(path);
	char *tmpname = NULL;
	int fd = -1, rc = 0, saved;
	if (!dir)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");

	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t tlen = strlen(dir) + strlen(base) + 64;
	tmpname = malloc(tlen);
	if (!tmpname) {
		free(dir);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}

	mode_t mode = 0666;
	struct stat st;
	int exists = stat(path, &st) == 0;
	if (exists)
		mode = st.st_mode & 07777;

	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (unsigned n = 0; n < 100; n++) {
		snprintf(tmpname, tlen, "%s/.%s.tmp.%ld.%lx", dir, base, (long)getpid(),
			 (unsigned long)(ts.tv_nsec + n));
		fd = open(tmpname, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exists ? 0600 : 0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		saved = errno;
		rc = perfdb_err_errno(err, saved, "cannot create temporary file in '%s' to write '%s'", dir, base);
		goto out;
	}
	if (write_all(fd, data, len) < 0) {
		saved = errno;
		rc = perfdb_err_errno(err, saved, "cannot write '%s'", path);
		goto fail;
	}
	if (exists && fchmod(fd, mode) < 0) {
		saved = errno;
		rc = perfdb_err_errno(err, saved, "cannot set mode of '%s' (written as '%s')", path, tmpname);
		goto fail;
	}
	if (fsync(fd) < 0) {
		saved = errno;
		rc = perfdb_err_errno(err, saved, "cannot write '%s' (fsync)", path);
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		saved = errno;
		rc = perfdb_err_errno(err, saved, "cannot write '%s' (close)", path);
		goto fail;
	}
	fd = -1;
	if (rename(tmpname, path) < 0) {
		saved = errno;
		rc = perfdb_err_errno(err, saved, "cannot replace '%s'", path);
		goto fail;
	}
	if (fsync_dir(dir) < 0) {
		/* The new file is in place; report, but the table is consistent. */
		saved = errno;
		rc = perfdb_err_errno(err, saved, "cannot fsync directory '%s'", dir);
	}
	goto out;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmpname);
out:
	free(tmpname);
	free(dir);
	return rc;
}

int perfdb_file_read_all(const char *path, struct perfdb_strbuf *out,
			 struct perfdb_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			return perfdb_err_set(err, PERFDB_ENOENT, "file not found: '%s'", path);
		return perfdb_err_errno(err, e, "cannot open '%s'", path);
	}
	for (;;) {
		if (perfdb_strbuf_grow(out, 65536) < 0) {
			close(fd);
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory reading '%s'", path);
		}
		ssize_t n = read(fd, out->buf + out->len, out->alloc - out->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			return perfdb_err_errno(err, e, "cannot read '%s'", path);
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		out->buf[out->len] = '\0';
	}
	close(fd);
	return 0;
}

int perfdb_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int perfdb_mkdir_p(const char *path, struct perfdb_err *err)
{
	char *p = strdup(path);
	if (!p)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	size_t len = strlen(p);
	while (len > 1 && p[len - 1] == '/')
		p[--len] = '\0';
	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0777) < 0 && errno != EEXIST) {
				int e = errno;
				int rc = perfdb_err_errno(err, e, "cannot create directory '%s'", p);
				free(p);
				return rc;
			}
			if (!perfdb_is_dir(p)) {
				int rc = perfdb_err_set(err, PERFDB_EIO,
					"cannot create directory '%s': '%s' is not a directory", path, p);
				free(p);
				return rc;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return 0;
}

static int walk(const char *dir, int top,
		int (*visit)(void *, const char *, const char *, int), void *ctx,
		struct perfdb_err *err)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return top ? perfdb_err_errno(err, errno, "cannot list '%s'", dir) : 0;
	int rc = 0;
	size_t dl = strlen(dir);
	for (int i = 0; i < n; i++) {
		const char *nm = names[i]->d_name;
		if (rc >= 0 && strcmp(nm, ".") && strcmp(nm, "..")) {
			char *p = malloc(dl + strlen(nm) + 2);
			if (!p) {
				rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
			} else {
				sprintf(p, "%s/%s", dir, nm);
				int is_dir = perfdb_is_dir(p);
				rc = visit(ctx, p, nm, is_dir);
				if (rc == 1 && is_dir)
					rc = walk(p, 0, visit, ctx, err);
				free(p);
			}
		}
		free(names[i]);
	}
	free(names);
	return rc < 0 ? rc : 0;
}

int perfdb_dir_walk(const char *dir,
		    int (*visit)(void *ctx, const char *path, const char *name, int is_dir),
		    void *ctx, struct perfdb_err *err)
{
	return walk(dir, 1, visit, ctx, err);
}

/* ---- lock ------------------------------------------------------------ */

static double lock_timeout(double t)
{
	if (t >= 0)
		return t;
	const char *e = getenv("PERFDB_LOCK_TIMEOUT");
	if (e && *e) {
		char *end;
		double v = strtod(e, &end);
		if (end != e && *end == '\0' && v >= 0)
			return v;
	}
	return PERFDB_LOCK_TIMEOUT_DEFAULT;
}

static void read_holder(int fd, char *buf, size_t cap)
{
	ssize_t n = pread(fd, buf, cap - 1, 0);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
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

int perfdb_lock_acquire(struct perfdb_lock *lk, const char *dir,
			double timeout_s, struct perfdb_err *err)
{
	lk->fd = -1;
	lk->path = NULL;
	if (!perfdb_is_dir(dir))
		return perfdb_err_set(err, PERFDB_ENOENT, "database directory not found: '%s'", dir);
	size_t n = strlen(dir) + sizeof(PERFDB_LOCK_NAME) + 2;
	lk->path = malloc(n);
	if (!lk->path)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	snprintf(lk->path, n, "%s/%s", dir, PERFDB_LOCK_NAME);
	int fd = open(lk->path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0) {
		int e = errno;
		int rc = perfdb_err_errno(err, e, "cannot open lock file '%s'", lk->path);
		free(lk->path);
		lk->path = NULL;
		return rc;
	}
	double limit = lock_timeout(timeout_s);
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK && errno != EINTR) {
			int e = errno;
			int rc = perfdb_err_errno(err, e, "cannot lock '%s'", lk->path);
			close(fd);
			free(lk->path);
			lk->path = NULL;
			return rc;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		double waited = (double)(now.tv_sec - start.tv_sec) +
				(double)(now.tv_nsec - start.tv_nsec) * 1e-9;
		if (waited >= limit) {
			char holder[256];
			read_holder(fd, holder, sizeof(holder));
			int rc = perfdb_err_set(err, PERFDB_ELOCKED,
				"database '%s' is locked by another perfdb process (%s); "
				"gave up after %.0f s (set PERFDB_LOCK_TIMEOUT to wait longer)",
				dir, holder[0] ? holder : "holder unknown", limit);
			close(fd);
			free(lk->path);
			lk->path = NULL;
			return rc;
		}
		struct timespec d = { 0, 20 * 1000 * 1000 };
		nanosleep(&d, NULL);
	}
	/* Record the holder for the message another process may print. */
	char who[128];
	int len = snprintf(who, sizeof(who), "pid %ld\n", (long)getpid());
	if (ftruncate(fd, 0) == 0 && len > 0)
		(void)!pwrite(fd, who, (size_t)len, 0);
	lk->fd = fd;
	struct perfdb_err ignored;
	(void)perfdb_dir_walk(dir, sweep_visit, NULL, &ignored);
	return 0;
}

void perfdb_lock_release(struct perfdb_lock *lk)
{
	if (lk->fd >= 0) {
		flock(lk->fd, LOCK_UN);
		close(lk->fd);
	}
	lk->fd = -1;
	free(lk->path);
	lk->path = NULL;
}
