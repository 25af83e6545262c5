/*
 * Unit tests for src/replay/msprof_run.c, the checks and helpers of
 * `perfdb microbench --backend msprof` (docs/spec/replay.md §1 steps 3-5).
 * msprof itself is not here; its runs are tested in tests/cli/microbench/
 * with a stand-in msprof on PATH.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfdb/fsio.h"
#include "replay/msprof_run.h"

static void test_expand(void **state)
{
	(void)state;
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	perfdb_msprof_expand_command("run {ops} --x {ops}{", "Add RmsNorm", &b);
	assert_string_equal(b.buf, "run Add RmsNorm --x Add RmsNorm{");
	perfdb_msprof_expand_command("plain", "Add", &b);   /* reset first */
	assert_string_equal(b.buf, "plain");
	perfdb_strbuf_release(&b);
}

static void test_selected(void **state)
{
	(void)state;
	const char *ops[] = { "Add", "MatMulV2" };
	assert_true(perfdb_msprof_selected(NULL, 0, "RmsNorm"));   /* none: every op */
	assert_true(perfdb_msprof_selected(ops, 2, "MatMulV2"));
	assert_false(perfdb_msprof_selected(ops, 2, "MatMul"));
}

static void test_visible_npus(void **state)
{
	(void)state;
	unsetenv("ASCEND_RT_VISIBLE_DEVICES");
	assert_int_equal(perfdb_msprof_visible_npus(), 0);
	setenv("ASCEND_RT_VISIBLE_DEVICES", "", 1);
	assert_int_equal(perfdb_msprof_visible_npus(), 0);
	setenv("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3", 1);
	assert_int_equal(perfdb_msprof_visible_npus(), 4);
	unsetenv("ASCEND_RT_VISIBLE_DEVICES");
}

/* Only the selected custom-OPP ops, and only while either variable is blank. */
static void test_custom_opp(void **state)
{
	(void)state;
	struct perfdb_strbuf need = PERFDB_STRBUF_INIT;
	const char *ops[] = { "Add", "DispatchFFNCombine" }, *plain[] = { "Add" };
	setenv("ASCEND_CUSTOM_OPP_PATH", " \t", 1);
	setenv("LD_LIBRARY_PATH", "/lib", 1);
	assert_int_equal(perfdb_msprof_custom_opp_missing(ops, 2, &need), 1);
	assert_string_equal(need.buf, "DispatchFFNCombine");
	assert_int_equal(perfdb_msprof_custom_opp_missing(plain, 1, &need), 0);
	assert_int_equal(perfdb_msprof_custom_opp_missing(NULL, 0, &need), 1);
	assert_string_equal(need.buf, "AddRmsNormBias, DispatchFFNCombine, KvRmsNormRopeCache, "
				      "RINGMLAPrefillBF16Kernel, split_qkv_rmsnorm_rope_kernel");
	setenv("ASCEND_CUSTOM_OPP_PATH", "/opp", 1);
	assert_int_equal(perfdb_msprof_custom_opp_missing(ops, 2, &need), 0);
	perfdb_strbuf_release(&need);
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[256];
	struct perfdb_err err;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_int_equal(perfdb_file_write_atomic(p, text, strlen(text), &err), 0);
}

/* Step 3: usable when every selected table there has only rows with a valid duration. */
static void test_all_usable(void **state)
{
	(void)state;
	char db[] = "/tmp/perfdb-test-msprof-XXXXXX";
	assert_non_null(mkdtemp(db));
	const char *add[] = { "Add" }, *mm[] = { "MatMulV2" };
	assert_false(perfdb_msprof_all_usable(db, NULL, 0));   /* no table at all */
	put(db, "Add.csv", "OP State,Average Duration(us)\r\ndynamic,1.5\r\n");
	assert_true(perfdb_msprof_all_usable(db, add, 1));
	assert_false(perfdb_msprof_all_usable(db, mm, 1));
	put(db, "MatMulV2.csv", "OP State,Average Duration(us),Profiling Average Duration(us)\r\n"
				"dynamic,,2.0\r\ndynamic,,\r\n");
	assert_true(perfdb_msprof_all_usable(db, add, 1));
	assert_false(perfdb_msprof_all_usable(db, NULL, 0));
	char p[256];
	snprintf(p, sizeof(p), "%s/Add.csv", db);
	remove(p);
	snprintf(p, sizeof(p), "%s/MatMulV2.csv", db);
	remove(p);
	rmdir(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_selected),
		cmocka_unit_test(test_visible_npus),
		cmocka_unit_test(test_custom_opp),
		cmocka_unit_test(test_all_usable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
