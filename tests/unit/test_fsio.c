/*
 * Unit tests: atomic replacement, mkdir -p and the database lock
 * (include/perfdb/fsio.h; DESIGN.md "A file is always replaced atomically
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
	assert_non_null(strstr(err.msg, "cannot create temporary file in"));
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
	snprintf(want, sizeof(want), "is locked by another perfdb process (pid %ld)", (long)getpid());
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
	unsetenv("PERFDB_LOCK_TIMEOUT");
	perfdb_lock_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic_failure_leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_p, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_timeout_env, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
