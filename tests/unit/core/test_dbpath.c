/*
 * Unit tests: database locations (include/perfdb/dbpath.h), following
 * docs/spec/parse.md §4 "Database path" and §6 (accepted/rejected versions),
 * and Decision 9 (root search, version.info).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/dbpath.h"
#include "perfdb/fsio.h"

static const char bad_version_msg[] =
	"Invalid version value: '%s'. Expected something like 0.9.2, 2.9.0, 8.5, or "
	"vllm0.13.0_torch2.8.0_cann8.3.";

static void test_check_version(void **state)
{
	(void)state;
	struct perfdb_err err;
	/* §6: accepted */
	const char *ok[] = { "0.18.0", "vllm0.18.0_torch2.9.0_cann8.5", "2.9.0", "8.5",
			     " 8.5 ", "2.9.0+cpu", "8.5.RC1", "v0.9.2" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_int_equal(perfdb_db_check_version(ok[i], &err), 0);
	/* §6: empty rejected; and anything off the pattern */
	const char *bad[] = { "", "  ", "a b", "1..2", ".1", "1.", "8.5/x", "1._2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(perfdb_db_check_version(bad[i], &err), -PERFDB_EINVAL);
		char want[256];
		snprintf(want, sizeof(want), bad_version_msg, bad[i]);
		assert_string_equal(err.msg, want);
	}
}

static void expect_dir(const char *v, const char *t, const char *c, const char *want)
{
	struct perfdb_db_opts o = { .vllm_version = v, .torch_version = t, .cann_version = c };
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	struct perfdb_err err;
	if (perfdb_db_version_dir(&o, &sb, &err) != 0)
		fail_msg("unexpected error: %s", err.msg);
	assert_string_equal(sb.buf, want);
	perfdb_strbuf_release(&sb);
}

static void test_version_dir(void **state)
{
	(void)state;
	unsetenv("ASCEND_HOME_PATH");
	expect_dir("0.9.2", "2.9.0", "8.5", "vllm0.9.2_torch2.9.0_cann8.5");
	/* prefixes dropped (any case), 'v' dropped for vllm, torch cut at '+' */
	expect_dir(" v0.9.2 ", "torch2.9.0+cpu", "CANN8.5", "vllm0.9.2_torch2.9.0_cann8.5");
	expect_dir("vLLM0.13.0", "Torch2.8.0", "cann8.3", "vllm0.13.0_torch2.8.0_cann8.3");
	/* a lone full directory name is used as is */
	expect_dir("vllm0.13.0_torch2.8.0_cann8.3", NULL, NULL, "vllm0.13.0_torch2.8.0_cann8.3");
}

static void test_missing_versions(void **state)
{
	(void)state;
	unsetenv("ASCEND_HOME_PATH");
	struct perfdb_db_opts o = { .vllm_version = "0.9.2" };
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	struct perfdb_err err;
	assert_int_equal(perfdb_db_version_dir(&o, &sb, &err), -PERFDB_EINVAL);
	assert_string_equal(err.msg,
		"Could not detect runtime stack version(s): PyTorch, CANN. Specify --database-path "
		"or pass --vllm-version/--torch-version/--cann-version explicitly.");
	struct perfdb_db_opts none = { 0 };
	assert_int_equal(perfdb_db_version_dir(&none, &sb, &err), -PERFDB_EINVAL);
	assert_non_null(strstr(err.msg, "version(s): vLLM-Ascend, PyTorch, CANN."));

	/* Decision 9: CANN read from a version.info under $ASCEND_HOME_PATH */
	char home[] = "/tmp/perfdb-test-ascend-XXXXXX";
	assert_non_null(mkdtemp(home));
	char sub[128], file[160];
	snprintf(sub, sizeof(sub), "%s/ascend-toolkit/latest", home);
	assert_int_equal(perfdb_mkdir_p(sub, &err), 0);
	snprintf(file, sizeof(file), "%s/version.info", sub);
	const char info[] = "package_name=Ascend-cann-toolkit\nversion=8.5.RC1\n";
	assert_int_equal(perfdb_file_write_atomic(file, info, sizeof(info) - 1, &err), 0);
	setenv("ASCEND_HOME_PATH", home, 1);
	struct perfdb_db_opts o2 = { .vllm_version = "0.9.2", .torch_version = "2.9.0" };
	assert_int_equal(perfdb_db_version_dir(&o2, &sb, &err), 0);
	assert_string_equal(sb.buf, "vllm0.9.2_torch2.9.0_cann8.5.RC1");
	unsetenv("ASCEND_HOME_PATH");
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
	assert_int_equal(system(cmd), 0);
	perfdb_strbuf_release(&sb);
}

static void test_root_search(void **state)
{
	(void)state;
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	struct perfdb_err err;
	const char *src;
	char old[PATH_MAX];
	assert_non_null(getcwd(old, sizeof(old)));

	struct perfdb_db_opts o = { .database_root = "/r" };
	setenv("PERFDB_DATA_ROOT", "/env", 1);
	assert_int_equal(perfdb_db_root(&o, &sb, &src, &err), 0);
	assert_string_equal(sb.buf, "/r");
	assert_string_equal(src, "--database-root");
	struct perfdb_db_opts none = { 0 };
	assert_int_equal(perfdb_db_root(&none, &sb, &src, &err), 0);
	assert_string_equal(sb.buf, "/env");
	unsetenv("PERFDB_DATA_ROOT");

	/* inside a TensorCast checkout: the nearest data dir above the cwd */
	char top[] = "/tmp/perfdb-test-tc-XXXXXX";
	assert_non_null(mkdtemp(top));
	char data[256], deep[256];
	snprintf(data, sizeof(data), "%s/%s", top, PERFDB_TENSORCAST_DATA);
	snprintf(deep, sizeof(deep), "%s/tools/perf_data_collection", top);
	assert_int_equal(perfdb_mkdir_p(data, &err), 0);
	assert_int_equal(perfdb_mkdir_p(deep, &err), 0);
	assert_int_equal(chdir(deep), 0);
	assert_int_equal(perfdb_db_root(&none, &sb, &src, &err), 0);
	assert_string_equal(sb.buf, data);
	assert_string_equal(src, "TensorCast checkout");

	/* elsewhere: ./profiling_database/data */
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(perfdb_db_root(&none, &sb, &src, &err), 0);
	assert_string_equal(sb.buf, "./profiling_database/data");
	assert_string_equal(src, "default");
	assert_int_equal(chdir(old), 0);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	assert_int_equal(system(cmd), 0);
	perfdb_strbuf_release(&sb);
}

static void test_resolve(void **state)
{
	(void)state;
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	struct perfdb_err err;
	/* --database-path is verbatim; the device and versions are ignored */
	struct perfdb_db_opts p = { .database_path = "db/x", .device = "TEST_DEVICE" };
	assert_int_equal(perfdb_db_resolve(&p, &sb, &err), 0);
	assert_string_equal(sb.buf, "db/x");
	struct perfdb_db_opts o = { .database_root = "/root", .device = "TEST_DEVICE",
				    .vllm_version = "0.9.2", .torch_version = "2.9.0",
				    .cann_version = "8.5" };
	assert_int_equal(perfdb_db_resolve(&o, &sb, &err), 0);
	assert_string_equal(sb.buf, "/root/TEST_DEVICE/vllm_ascend/vllm0.9.2_torch2.9.0_cann8.5");
	o.device = NULL;
	assert_int_equal(perfdb_db_resolve(&o, &sb, &err), 0);
	assert_string_equal(sb.buf,
		"/root/ATLAS_800_A3_752T_128G_DIE/vllm_ascend/vllm0.9.2_torch2.9.0_cann8.5");
	perfdb_strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_version),
		cmocka_unit_test(test_version_dir),
		cmocka_unit_test(test_missing_versions),
		cmocka_unit_test(test_root_search),
		cmocka_unit_test(test_resolve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
