/*
 * Unit tests: the lock's sweep of temporary files left by killed writers
 * (src/core/fsio.c; docs/reliability.md guarantee 3).  Removed: hidden
 * `.<name>.tmp.<pid>.<hex>` files, at any depth, whose pid is not running.
 * Kept: a live pid's, the caller's own, anything not of that exact form.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfdb/fsio.h"
#include "perfdb/lock.h"

static char dir[64];

static void touch(const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
}

static int exists(const char *rel)
{
	char p[512];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	return stat(p, &st) == 0;
}

static void test_sweep(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/perfdb-test-sweep-XXXXXX");
	assert_non_null(mkdtemp(dir));
	/* a pid that is certainly dead: a child we reaped */
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);

	char dead[64], dead_sub[80], live[64], own[64];
	snprintf(dead, sizeof(dead), ".Add.csv.tmp.%ld.1f2e", (long)child);
	snprintf(dead_sub, sizeof(dead_sub), "reports/.r.md.tmp.%ld.ab", (long)child);
	snprintf(live, sizeof(live), ".Add.csv.tmp.%ld.1f2e", (long)getppid());
	snprintf(own, sizeof(own), ".Mul.csv.tmp.%ld.9", (long)getpid());
	char sub[128];
	snprintf(sub, sizeof(sub), "%s/reports", dir);
	assert_int_equal(mkdir(sub, 0777), 0);
	touch(dead);
	touch(dead_sub);
	touch(live);
	touch(own);
	/* the dead pid again, in names not of the temporary form */
	char odd[4][64];
	snprintf(odd[0], sizeof(odd[0]), "Add.csv.tmp.%ld.2", (long)child);     /* not hidden */
	snprintf(odd[1], sizeof(odd[1]), ".Add.csv.tmp.%ldx.2", (long)child);   /* pid not a number */
	snprintf(odd[2], sizeof(odd[2]), ".Add.csv.tmp.%ld.", (long)child);     /* no hex part */
	snprintf(odd[3], sizeof(odd[3]), ".tmp.%ld.2", (long)child);            /* no name */
	touch("Add.csv");
	for (int i = 0; i < 4; i++)
		touch(odd[i]);

	struct perfdb_lock lk;
	struct perfdb_err err;
	assert_int_equal(perfdb_lock_acquire(&lk, dir, 1, &err), 0);
	assert_false(exists(dead));
	assert_false(exists(dead_sub));
	assert_true(exists(live));
	assert_true(exists(own));
	assert_true(exists("Add.csv"));
	for (int i = 0; i < 4; i++)
		assert_true(exists(odd[i]));
	assert_false(exists(".perfdb.lock"));   /* the lock leaves no file */
	perfdb_lock_release(&lk);

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
