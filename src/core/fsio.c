/*
 * Atomic file replacement, whole-file reads, mkdir -p and the directory
 * walk (include/perfdb/fsio.h); the lock is src/core/lock.c.
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

/*
 * Test hook (tests/reliability/signals.sh): PERFDB_TEST_FSYNC_DELAY=S sleeps
 * S seconds before the process's first fsync of a temporary file, a window
 * in which a test sends a signal to a writer that has it open.
 */
static void test_fsync_delay(void)
{
	static int done;   /* once per process: a test hook, not state a run depends on */
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	const char *d = getenv("PERFDB_TEST_FSYNC_DELAY");
	double s = d && *d ? strtod(d, NULL) : 0;
	if (s > 0 && s < 60) {
		struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
		while (nanosleep(&t, &t) < 0 && errno == EINTR)
			;
	}
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

/* len bytes from src at off, in chunks: the file is never held in memory. */
static int copy_range(int fd, int src, off_t off, size_t len)
{
	enum { CHUNK = 1 << 20 };
	char *buf = malloc(len < CHUNK ? (len ? len : 1) : CHUNK);
	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	int rc = 0;
	while (len && rc == 0) {
		ssize_t n = pread(src, buf, len < CHUNK ? len : CHUNK, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;   /* the source is shorter than it was said to be */
			rc = -1;
			break;
		}
		rc = write_all(fd, buf, (size_t)n);
		off += n;
		len -= (size_t)n;
	}
	free(buf);
	return rc;
}

/* The replace protocol; the bytes come from data, or from src at off when src >= 0. */
static int replace_atomic(const char *path, const void *data, int src, off_t off, size_t len,
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
	int slot = -1;
	for (unsigned n = 0; n < 100; n++) {
		snprintf(tmpname, tlen, "%s/.%s.tmp.%ld.%lx", dir, base, (long)getpid(),
			 (unsigned long)(ts.tv_nsec + n));
		/* named before it exists: a signal between open and here must find it */
		if (slot < 0)
			slot = perfdb_tmp_claim(tmpname);
		else
			perfdb_tmp_rename(slot, tmpname);
		fd = open(tmpname, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exists ? 0600 : 0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		saved = errno;
		rc = perfdb_err_errno(err, saved, "cannot write '%s': no temporary file in '%s'", path, dir);
		goto out;
	}
	if ((src >= 0 ? copy_range(fd, src, off, len) : write_all(fd, data, len)) < 0) {
		saved = errno;
		rc = perfdb_err_errno(err, saved, "cannot write '%s'", path);
		goto fail;
	}
	if (exists && fchmod(fd, mode) < 0) {
		saved = errno;
		rc = perfdb_err_errno(err, saved, "cannot set mode of '%s' (written as '%s')", path, tmpname);
		goto fail;
	}
	test_fsync_delay();
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
	perfdb_tmp_release(slot);
	free(tmpname);
	free(dir);
	return rc;
}

int perfdb_file_write_atomic(const char *path, const void *data, size_t len,
			     struct perfdb_err *err)
{
	return replace_atomic(path, data, -1, 0, len, err);
}

int perfdb_file_write_atomic_from(const char *path, int src, off_t off, size_t len,
				  struct perfdb_err *err)
{
	return replace_atomic(path, NULL, src, off, len, err);
}

int perfdb_open_regular(const char *path, struct perfdb_err *err)
{
	/* O_NONBLOCK: opening a FIFO without a writer must not wait */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return perfdb_err_errno(err, errno, "cannot open '%s'", path);
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return perfdb_err_set(err, PERFDB_EIO, "cannot read '%s': not a regular file", path);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int perfdb_file_read_all(const char *path, struct perfdb_strbuf *out,
			 struct perfdb_err *err)
{
	struct stat st;   /* stat: a dangling link is as missing as open finds it */
	if (stat(path, &st) < 0 && errno == ENOENT)
		return perfdb_err_set(err, PERFDB_ENOENT, "file not found: '%s'", path);
	int fd = perfdb_open_regular(path, err);
	if (fd < 0)
		return fd;
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

struct walk_frame {
	dev_t dev;
	ino_t ino;
	const struct walk_frame *up;
};

static int walk(const char *dir, int top, unsigned flags, const struct walk_frame *up, int depth,
		int (*visit)(void *, const char *, const char *, int), void *ctx,
		struct perfdb_err *err)
{
	struct stat ds;
	if (depth > 64 || stat(dir, &ds) < 0)
		return 0;
	for (const struct walk_frame *f = up; f; f = f->up)
		if (f->dev == ds.st_dev && f->ino == ds.st_ino)
			return 0;   /* a loop: this directory is being walked already */
	struct walk_frame here = { ds.st_dev, ds.st_ino, up };
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
				struct stat ls;
				int link = lstat(p, &ls) == 0 && S_ISLNK(ls.st_mode);
				if (link && (flags & PERFDB_WALK_NO_LINKS)) {
					free(p);
					free(names[i]);
					continue;
				}
				int is_dir = perfdb_is_dir(p);
				rc = visit(ctx, p, nm, is_dir);
				if (rc == 1 && is_dir)
					rc = walk(p, 0, flags, &here, depth + 1, visit, ctx, err);
				free(p);
			}
		}
		free(names[i]);
	}
	free(names);
	return rc < 0 ? rc : 0;
}

int perfdb_dir_walk(const char *dir, unsigned flags,
		    int (*visit)(void *ctx, const char *path, const char *name, int is_dir),
		    void *ctx, struct perfdb_err *err)
{
	return walk(dir, 1, flags, NULL, 0, visit, ctx, err);
}

const char *perfdb_spill_dir(const char *given)
{
	const char *d = given ? given : getenv("TMPDIR");
	return d && *d ? d : "/tmp";
}

int perfdb_spill_file(const char *dir, const char *tag, const char *what, struct perfdb_err *err)
{
#ifdef O_TMPFILE
	/* never named, so no crash can leave it behind; mkstemp where unsupported */
	int tfd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (tfd >= 0)
		return tfd;
#endif
	size_t len = strlen(dir) + strlen(tag) + 16;
	char *path = malloc(len);
	if (!path)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	snprintf(path, len, "%s/perfdb-%s-XXXXXX", dir, tag);
	int fd = mkstemp(path);
	if (fd < 0) {
		int rc = perfdb_err_errno(err, errno, "cannot create %s spill file in '%s'", what, dir);
		free(path);
		return rc;
	}
	unlink(path);
	free(path);
	return fd;
}
