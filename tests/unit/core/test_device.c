/*
 * Unit tests: the device registry (include/perfdb/device.h, data/devices.json)
 * and topology tiers (docs/spec/comm.md §2).  Expected numbers are the reference
 * device profiles (TensorCast tensor_cast/device.py) as docs/spec/comm.md §5 uses
 * them for A3: tier 0 = (196e9 B/s, 5.5 us), 1 = (196e9, 0.5 us), 2 = (224e9, 0.2 us).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/device.h"
#include "perfdb/fsio.h"

static void test_builtin_registry(void **state)
{
	(void)state;
	unsetenv("PERFDB_DEVICES");
	struct perfdb_device_registry r;
	struct perfdb_err err;
	perfdb_device_registry_init(&r);
	if (perfdb_device_registry_load(&r, &err) != 0)
		fail_msg("%s", err.msg);
	/* the seed's SUPPORTED_DEVICES: TEST_DEVICE and seven ATLAS_800_* */
	const char *names[] = { "TEST_DEVICE", "ATLAS_800_A2_376T_64G", "ATLAS_800_A2_313T_64G",
				"ATLAS_800_A2_280T_64G", "ATLAS_800_A2_280T_64G_PCIE",
				"ATLAS_800_A2_280T_32G_PCIE", "ATLAS_800_A3_752T_128G_DIE",
				"ATLAS_800_A3_560T_128G_DIE" };
	assert_int_equal(r.n, 8);
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(r.v[i].name, names[i]);
	assert_string_equal(r.default_name, "ATLAS_800_A3_752T_128G_DIE");

	const struct perfdb_device *a3 = perfdb_device_find(&r, "ATLAS_800_A3_752T_128G_DIE");
	assert_non_null(a3);
	assert_string_equal(a3->kind, "npu");
	assert_int_equal(a3->grid_ndim, 3);
	assert_int_equal(a3->grid[0], 48);
	assert_int_equal(a3->grid[1], 8);
	assert_int_equal(a3->grid[2], 2);
	assert_true(a3->tiers[0].bandwidth == 196e9);
	assert_true(a3->tiers[0].latency > 5.5e-6 * 0.999999 && a3->tiers[0].latency < 5.5e-6 * 1.000001);
	assert_true(a3->tiers[2].bandwidth == 224e9);
	assert_true(a3->tiers[1].efficiency == 0.7);
	assert_true(a3->memory_bytes == 64.0 * 1024 * 1024 * 1024);   /* per die */
	assert_true(a3->mma_flops[PERFDB_PEAK_FP16] == 376e12);

	const struct perfdb_device *pcie = perfdb_device_find(&r, "ATLAS_800_A2_280T_32G_PCIE");
	assert_true(pcie->memory_bytes == 32.0 * 1024 * 1024 * 1024);
	assert_int_equal(pcie->grid_ndim, 1);
	assert_null(perfdb_device_find(&r, "UNKNOWN_DEVICE"));
	perfdb_device_registry_release(&r);
}

static void test_tiers(void **state)
{
	(void)state;
	struct perfdb_device_registry r;
	struct perfdb_err err;
	perfdb_device_registry_init(&r);
	assert_int_equal(perfdb_device_registry_load(&r, &err), 0);
	const struct perfdb_device *a3 = perfdb_device_find(&r, "ATLAS_800_A3_752T_128G_DIE");
	/* docs/spec/comm.md §2: for groups [0..n-1]: n=2 -> 2; n=4, 8, 16 -> 1; n>=32 -> 0 */
	assert_int_equal(perfdb_device_tier_of_group(a3, 1), 2);
	assert_int_equal(perfdb_device_tier_of_group(a3, 2), 2);
	assert_int_equal(perfdb_device_tier_of_group(a3, 4), 1);
	assert_int_equal(perfdb_device_tier_of_group(a3, 8), 1);
	assert_int_equal(perfdb_device_tier_of_group(a3, 16), 1);
	assert_int_equal(perfdb_device_tier_of_group(a3, 32), 0);
	assert_int_equal(perfdb_device_tier_of_group(a3, 768), 0);
	const struct perfdb_device *a2 = perfdb_device_find(&r, "ATLAS_800_A2_376T_64G");
	assert_int_equal(perfdb_device_tier_of_group(a2, 8), 1);
	assert_int_equal(perfdb_device_tier_of_group(a2, 16), 0);
	perfdb_device_registry_release(&r);
}

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/perfdb-test-devices-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (long)strlen(text));
	close(fd);
	return path;
}

static void test_user_devices(void **state)
{
	(void)state;
	char *extra = write_tmp(
		"{\"format\": \"perfdb-devices/1\", \"devices\": [\n"
		" {\"name\": \"MY_NPU\", \"kind\": \"npu\", \"memory_gib\": 96,\n"
		"  \"comm\": {\"grid\": [4, 2], \"tiers\": [{\"bandwidth_gbps\": 50, \"latency_us\": 3},\n"
		"                                        {\"bandwidth_gbps\": 400, \"latency_us\": 0.5}]}},\n"
		" {\"name\": \"TEST_DEVICE\", \"kind\": \"test\", \"memory_gib\": 1}\n"
		"]}\n");
	setenv("PERFDB_DEVICES", extra, 1);
	struct perfdb_device_registry r;
	struct perfdb_err err;
	perfdb_device_registry_init(&r);
	assert_int_equal(perfdb_device_registry_load(&r, &err), 0);
	unsetenv("PERFDB_DEVICES");
	assert_int_equal(r.n, 9);
	const struct perfdb_device *mine = perfdb_device_find(&r, "MY_NPU");
	assert_non_null(mine);
	assert_true(mine->memory_bytes == 96.0 * 1024 * 1024 * 1024);
	assert_int_equal(perfdb_device_tier_of_group(mine, 2), 1);
	assert_int_equal(perfdb_device_tier_of_group(mine, 4), 0);
	/* a later file replaces a device of the same name */
	assert_true(perfdb_device_find(&r, "TEST_DEVICE")->memory_bytes == 1024.0 * 1024 * 1024);
	assert_string_equal(perfdb_device_find(&r, "TEST_DEVICE")->source, extra);
	perfdb_device_registry_release(&r);
	unlink(extra);
	free(extra);
}

static void expect_bad(const char *text, const char *needle)
{
	char *path = write_tmp(text);
	struct perfdb_device_registry r;
	struct perfdb_err err;
	perfdb_device_registry_init(&r);
	assert_true(perfdb_device_registry_load_file(&r, path, &err) < 0);
	if (!strstr(err.msg, needle) || strncmp(err.msg, path, strlen(path)) != 0)
		fail_msg("message '%s' lacks '%s' or the file name", err.msg, needle);
	perfdb_device_registry_release(&r);
	unlink(path);
	free(path);
}

static void test_bad_registry_files(void **state)
{
	(void)state;
	expect_bad("{\"format\": \"perfdb-devices/1\",\n \"devices\": [\n", ":3:");
	expect_bad("[]", "not a device registry");
	expect_bad("{\"format\": \"perfdb-devices/1\", \"devices\": [{\"kind\": \"npu\"}]}",
		   "devices[0]: each device needs a non-empty \"name\"");
	expect_bad("{\"format\": \"perfdb-devices/1\", \"devices\": [{\"name\": \"X\", \"kind\": \"tpu\"}]}",
		   "device 'X': unknown kind 'tpu'");
	expect_bad("{\"format\": \"perfdb-devices/1\", \"devices\": [{\"name\": \"a/b\", \"kind\": \"npu\"}]}",
		   "name may hold only");
	expect_bad("{\"format\": \"perfdb-devices/1\", \"devices\": [{\"name\": \"X\", \"kind\": \"npu\","
		   " \"memory_gib\": -1}]}", "bad value for \"memory_gib\"");
	/* finite in JSON, inf once in bytes or FLOP/s (fuzz_device_registry's finding) */
	expect_bad("{\"format\": \"perfdb-devices/1\", \"devices\": [{\"name\": \"X\", \"kind\": \"npu\","
		   " \"memory_gib\": 1e300}]}", "bad value for \"memory_gib\"");
	expect_bad("{\"format\": \"perfdb-devices/1\", \"devices\": [{\"name\": \"X\", \"kind\": \"npu\","
		   " \"mma_tflops\": {\"bf16\": 1e300}}]}", "bad value for \"mma_tflops\"");
	expect_bad("{\"format\": \"perfdb-devices/1\", \"devices\": [{\"name\": \"X\", \"kind\": \"npu\","
		   " \"comm\": {\"grid\": [2], \"tiers\": []}}]}", "equal length");
	expect_bad("{\"format\": \"perfdb-devices/1\", \"default\": \"NOPE\", \"devices\": []}",
		   "default device 'NOPE' is not defined");
}

static void test_detect_host_cpu(void **state)
{
	(void)state;
	struct perfdb_device_registry r;
	struct perfdb_err err;
	const char *name, *again;
	perfdb_device_registry_init(&r);
	assert_int_equal(perfdb_device_detect_host_cpu(&r, &name, &err), 0);
	assert_int_equal(strncmp(name, "CPU_", 4), 0);
	for (const char *c = name; *c; c++)
		assert_true((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_');
	const struct perfdb_device *d = perfdb_device_find(&r, name);
	assert_string_equal(d->kind, "cpu");
	assert_string_equal(d->source, "detected");
	assert_true(d->memory_bytes > 0);
	assert_int_equal(perfdb_device_detect_host_cpu(&r, &again, &err), 0);
	assert_int_equal(r.n, 1);   /* not added twice */
	perfdb_device_registry_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_registry),
		cmocka_unit_test(test_tiers),
		cmocka_unit_test(test_user_devices),
		cmocka_unit_test(test_bad_registry_files),
		cmocka_unit_test(test_detect_host_cpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
