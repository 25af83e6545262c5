/*
 * Unit tests: atomic replacement, mkdir -p and the database lock
 * (include/perfdb/fsio.h; docs/design.md "A file is always replaced atomically
 * ... writers of one database directory take a lock").
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfdb/fsio.h"
#include "perfdb/lock.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/perfdb-test-fsio-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static int count_entries(const char *d, const char *needle)
{
	DIR *dp = opendir(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dp)))
		if (strstr(e->d_name, needle))
			n++;
	closedir(dp);
	return n;
}

static void test_write_atomic(void **state)
{
	(void)state;
	char path[128];
	struct perfdb_err err;
	snprintf(path, sizeof(path), "%s/T.csv", dir);
	assert_int_equal(perfdb_file_write_atomic(path, "old\r\n", 5, &err), 0);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(perfdb_file_write_atomic(path, "new\r\n", 5, &err), 0);
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_file_read_all(path, &sb, &err), 0);
	assert_string_equal(sb.buf, "new\r\n");
	perfdb_strbuf_release(&sb);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);  /* mode of the old file kept */
	assert_int_equal(count_entries(dir, ".tmp."), 0);
}

static void test_write_atomic_failure_leaves_nothing(void **state)
{
	(void)state;
	char path[160], blocker[128];
	struct perfdb_err err;
	/* parent is a regular file: the temp file cannot be created */
	snprintf(blocker, sizeof(blocker), "%s/notadir", dir);
	assert_int_equal(perfdb_file_write_atomic(blocker, "x", 1, &err), 0);
	snprintf(path, sizeof(path), "%s/T.csv", blocker);
	assert_int_equal(perfdb_file_write_atomic(path, "y", 1, &err), -PERFDB_EIO);
	assert_non_null(strstr(err.msg, "/T.csv': no temporary file in"));
	/* target is a directory: rename fails, temp file removed */
	char sub[160];
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0777), 0);
	char inner[200];
	snprintf(inner, sizeof(inner), "%s/f", sub);
	assert_int_equal(perfdb_file_write_atomic(inner, "z", 1, &err), 0);
	assert_int_equal(perfdb_file_write_atomic(sub, "w", 1, &err), -PERFDB_EIO);
	assert_non_null(strstr(err.msg, "cannot replace"));
	assert_int_equal(count_entries(dir, ".tmp."), 0);
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_file_read_all(path, &sb, &err), -PERFDB_EIO);
	perfdb_strbuf_release(&sb);
}

static void test_mkdir_p(void **state)
{
	(void)state;
	char path[160];
	struct perfdb_err err;
	snprintf(path, sizeof(path), "%s/a/b/c/", dir);
	assert_int_equal(perfdb_mkdir_p(path, &err), 0);
	assert_true(perfdb_is_dir(path));
	assert_int_equal(perfdb_mkdir_p(path, &err), 0);  /* idempotent */
	char file[160];
	snprintf(file, sizeof(file), "%s/a/file", dir);
	assert_int_equal(perfdb_file_write_atomic(file, "x", 1, &err), 0);
	snprintf(path, sizeof(path), "%s/a/file/d", dir);
	assert_true(perfdb_mkdir_p(path, &err) < 0);
}

static void test_lock(void **state)
{
	(void)state;
	struct perfdb_lock a, b;
	struct perfdb_err err;
	assert_int_equal(perfdb_lock_acquire(&a, dir, 1.0, &err), 0);
	/* a second holder (flock is per open file) waits, then gives up clearly */
	assert_int_equal(perfdb_lock_acquire(&b, dir, 0.1, &err), -PERFDB_ELOCKED);
	char want[160];
	/* the holder named from /proc/locks: pid and program */
	snprintf(want, sizeof(want), "is locked by another perfdb process (pid %ld: test_fsio)",
		 (long)getpid());
	if (!strstr(err.msg, want))
		fprintf(stderr, "got: %s\n", err.msg);
	assert_non_null(strstr(err.msg, want));
	assert_non_null(strstr(err.msg, "PERFDB_LOCK_TIMEOUT"));
	perfdb_lock_release(&a);
	perfdb_lock_release(&a);  /* idempotent */
	assert_int_equal(perfdb_lock_acquire(&b, dir, 0.1, &err), 0);
	perfdb_lock_release(&b);

	/* a process that dies holding the lock releases it */
	pid_t pid = fork();
	if (pid == 0) {
		struct perfdb_lock c;
		if (perfdb_lock_acquire(&c, dir, 1.0, &err) != 0)
			_exit(1);
		_exit(0);  /* exits without releasing */
	}
	int status;
	waitpid(pid, &status, 0);
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(perfdb_lock_acquire(&b, dir, 0.5, &err), 0);
	perfdb_lock_release(&b);

	char missing[128];
	snprintf(missing, sizeof(missing), "%s/nope", dir);
	assert_int_equal(perfdb_lock_acquire(&b, missing, 0.1, &err), -PERFDB_ENOENT);
	assert_non_null(strstr(err.msg, "database directory not found"));
}

static void test_lock_timeout_env(void **state)
{
	(void)state;
	struct perfdb_lock a, b;
	struct perfdb_err err;
	assert_int_equal(perfdb_lock_acquire(&a, dir, 1.0, &err), 0);
	setenv("PERFDB_LOCK_TIMEOUT", "0", 1);
	assert_int_equal(perfdb_lock_acquire(&b, dir, -1, &err), -PERFDB_ELOCKED);
	assert_non_null(strstr(err.msg, "gave up after 0 s"));
	setenv("PERFDB_LOCK_TIMEOUT", "0.25", 1);
	double t = 0;
	assert_int_equal(perfdb_lock_timeout_env(&t, &err), 0);
	assert_true(t == 0.25);
	/* values that once silently meant 60 s (or forever) are refused */
	static const char *const bad[] = { "abc", "1s", "-1", "", "inf", "nan", "1e999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("PERFDB_LOCK_TIMEOUT", bad[i], 1);
		assert_int_equal(perfdb_lock_acquire(&b, dir, -1, &err), -PERFDB_EINVAL);
		assert_non_null(strstr(err.msg, "PERFDB_LOCK_TIMEOUT: invalid value"));
	}
	unsetenv("PERFDB_LOCK_TIMEOUT");
	assert_int_equal(perfdb_lock_timeout_env(&t, &err), 0);
	assert_true(t == PERFDB_LOCK_TIMEOUT_DEFAULT);
	perfdb_lock_release(&a);
}

static void mk(const char *rel)
{
	char p[160];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	struct perfdb_err err;
	assert_int_equal(perfdb_mkdir_p(p, &err), 0);
}

/* rc of taking the lock of dir/rel for 0.05 s */
static int try_lock(const char *rel, struct perfdb_err *err)
{
	char p[160];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	struct perfdb_lock l;
	int rc = perfdb_lock_acquire(&l, p, 0.05, err);
	perfdb_lock_release(&l);
	return rc;
}

/* The scope: a directory excludes everything under it and above it, not its
 * siblings; a link reaches the directory it names. */
static void test_lock_scope(void **state)
{
	(void)state;
	mk("root/dev/vllm_ascend/v1");
	mk("root/dev/vllm_ascend/v2");
	char p[160], l[160];
	snprintf(l, sizeof(l), "%s/alias", dir);
	assert_int_equal(symlink("root/dev/vllm_ascend/v1", l), 0);
	struct perfdb_err err;
	struct perfdb_lock a;

	snprintf(p, sizeof(p), "%s/root", dir);
	assert_int_equal(perfdb_lock_acquire(&a, p, 1.0, &err), 0);
	assert_int_equal(try_lock("root/dev/vllm_ascend/v1", &err), -PERFDB_ELOCKED);
	/* the message names the database asked for and the holder */
	assert_non_null(strstr(err.msg, "root/dev/vllm_ascend/v1' is locked by another perfdb process (pid"));
	assert_int_equal(try_lock("root", &err), -PERFDB_ELOCKED);
	assert_int_equal(try_lock("alias", &err), -PERFDB_ELOCKED);
	assert_int_equal(try_lock(".", &err), -PERFDB_ELOCKED);
	perfdb_lock_release(&a);

	snprintf(p, sizeof(p), "%s/root/dev/vllm_ascend/v1", dir);
	assert_int_equal(perfdb_lock_acquire(&a, p, 1.0, &err), 0);
	assert_int_equal(try_lock("root", &err), -PERFDB_ELOCKED);
	assert_int_equal(try_lock("root/dev", &err), -PERFDB_ELOCKED);
	assert_int_equal(try_lock("alias", &err), -PERFDB_ELOCKED);
	assert_int_equal(try_lock("root/dev/vllm_ascend/v2", &err), 0);   /* a sibling */
	perfdb_lock_release(&a);
	assert_int_equal(try_lock("root", &err), 0);

	/* a file is not a database directory */
	snprintf(p, sizeof(p), "%s/root/f", dir);
	assert_int_equal(perfdb_file_write_atomic(p, "x", 1, &err), 0);
	assert_int_equal(try_lock("root/f", &err), -PERFDB_ENOENT);
}

/* Nothing is left behind: the directory holds what it held; the pid file of
 * earlier versions goes, a user's file of that name stays. */
static void test_lock_leaves_nothing(void **state)
{
	(void)state;
	mk("db");
	char p[160], f[200];
	snprintf(p, sizeof(p), "%s/db", dir);
	struct perfdb_err err;
	struct perfdb_lock a;
	assert_int_equal(perfdb_lock_acquire(&a, p, 1.0, &err), 0);
	perfdb_lock_release(&a);
	assert_int_equal(count_entries(p, ""), 2);   /* "." and ".." */

	snprintf(f, sizeof(f), "%s/.perfdb.lock", p);
	assert_int_equal(perfdb_file_write_atomic(f, "pid 12345\n", 10, &err), 0);
	assert_int_equal(perfdb_lock_acquire(&a, p, 1.0, &err), 0);
	perfdb_lock_release(&a);
	assert_int_equal(count_entries(p, ""), 2);   /* "." and ".." */

	assert_int_equal(perfdb_file_write_atomic(f, "my notes\n", 9, &err), 0);
	assert_int_equal(perfdb_lock_acquire(&a, p, 1.0, &err), 0);
	perfdb_lock_release(&a);
	assert_int_equal(count_entries(p, ".perfdb.lock"), 1);
}

/* The replacement from a spill file: the range, not the whole file; no temporary left. */
static void test_write_atomic_from(void **state)
{
	(void)state;
	char path[128];
	struct perfdb_err err;
	snprintf(path, sizeof(path), "%s/T.csv", dir);
	int fd = perfdb_spill_file(dir, "t", "test", &err);
	assert_true(fd >= 0);
	assert_int_equal(count_entries(dir, "perfdb-t-"), 0);   /* unnamed */
	/* larger than one copy chunk (1 MiB), at an offset */
	size_t len = (3u << 20) + 7;
	char *buf = malloc(len + 100);
	for (size_t i = 0; i < len + 100; i++)
		buf[i] = (char)('a' + i % 26);
	assert_int_equal(write(fd, buf, len + 100), (ssize_t)(len + 100));
	assert_int_equal(perfdb_file_write_atomic_from(path, fd, 50, len, &err), 0);
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_file_read_all(path, &sb, &err), 0);
	assert_int_equal(sb.len, len);
	assert_memory_equal(sb.buf, buf + 50, len);
	/* a range past the end of the source fails and leaves the old file */
	assert_true(perfdb_file_write_atomic_from(path, fd, (off_t)len, 200, &err) < 0);
	perfdb_strbuf_reset(&sb);
	assert_int_equal(perfdb_file_read_all(path, &sb, &err), 0);
	assert_int_equal(sb.len, len);
	assert_int_equal(count_entries(dir, ".tmp."), 0);
	perfdb_strbuf_release(&sb);
	free(buf);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic_failure_leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_p, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_timeout_env, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_scope, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic_from, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
