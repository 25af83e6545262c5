/*
 * Unit tests: devices perfdb met (src/core/device_met.c, docs/devices.md
 * "Devices perfdb met"): a noted device is read back with its kind and
 * memory, a second note leaves the first file as written, installed
 * definitions win, a file naming another device than its directory is
 * refused, and a database path's device is its deepest known component.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdb/device.h"
#include "perfdb/fsio.h"
#include "perfdb/strbuf.h"

static char root[64];

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/perfdb-met.XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void mkdir_in(const char *rel)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	struct perfdb_err err;
	assert_int_equal(perfdb_mkdir_p(p, &err), 0);
}

/* A hand-written perfdb-device.json in <root>/<dev>/. */
static void put_met(const char *dev, const char *doc)
{
	mkdir_in(dev);
	char p[256];
	snprintf(p, sizeof(p), "%s/%s/perfdb-device.json", root, dev);
	struct perfdb_err err;
	assert_int_equal(perfdb_file_write_atomic(p, doc, strlen(doc), &err), 0);
}

static void test_note_then_load(void **state)
{
	(void)state;
	mkdir_in("NVIDIA_H200_141G/torch/torch2.9.0");
	char devdir[256];
	snprintf(devdir, sizeof(devdir), "%s/NVIDIA_H200_141G", root);
	struct perfdb_device d = { .name = "NVIDIA_H200_141G", .kind = "gpu", .vendor = "NVIDIA",
				   .description = "first", .memory_bytes = 141.0 * 1024 * 1024 * 1024 };
	struct perfdb_err err;
	assert_int_equal(perfdb_device_met_note(devdir, &d, &err), 0);
	/* met again with other words: the first file stands */
	d.description = "second";
	assert_int_equal(perfdb_device_met_note(devdir, &d, &err), 0);

	struct perfdb_device_registry r;
	perfdb_device_registry_init(&r);
	assert_int_equal(perfdb_device_met_load(&r, root, &err), 0);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.v[0].name, "NVIDIA_H200_141G");
	assert_string_equal(r.v[0].kind, "gpu");
	assert_string_equal(r.v[0].description, "first");
	/* 141 GiB written as memory_gib and read back to the byte */
	assert_true(r.v[0].memory_bytes == 141.0 * 1024 * 1024 * 1024);
	perfdb_device_registry_release(&r);

	/* from a database path: the one device whose directory holds it */
	char db[256];
	snprintf(db, sizeof(db), "%s/NVIDIA_H200_141G/torch/torch2.9.0", root);
	perfdb_device_registry_init(&r);
	assert_int_equal(perfdb_device_met_load_db(&r, db, &err), 0);
	assert_int_equal(r.n, 1);
	const struct perfdb_device *found = perfdb_device_of_dir(&r, db);
	assert_non_null(found);
	assert_string_equal(found->name, "NVIDIA_H200_141G");
	perfdb_device_registry_release(&r);
}

static void test_registry_definition_wins(void **state)
{
	(void)state;
	put_met("TEST_DEVICE", "{\"format\": \"perfdb-devices/1\", \"devices\": [{\"name\": \"TEST_DEVICE\", "
			       "\"kind\": \"gpu\", \"description\": \"met\"}]}\n");
	struct perfdb_err err;
	struct perfdb_device_registry r;
	perfdb_device_registry_init(&r);
	unsetenv("PERFDB_DEVICES");
	assert_int_equal(perfdb_device_registry_load(&r, &err), 0);
	size_t n = r.n;
	assert_int_equal(perfdb_device_met_load(&r, root, &err), 0);
	assert_int_equal(r.n, n);
	assert_string_equal(perfdb_device_find(&r, "TEST_DEVICE")->kind, "test");
	perfdb_device_registry_release(&r);
}

static void test_name_must_match_directory(void **state)
{
	(void)state;
	put_met("SOME_GPU", "{\"format\": \"perfdb-devices/1\", \"devices\": [{\"name\": \"OTHER_GPU\", "
			    "\"kind\": \"gpu\"}]}\n");
	struct perfdb_err err;
	struct perfdb_device_registry r;
	perfdb_device_registry_init(&r);
	assert_true(perfdb_device_met_load(&r, root, &err) < 0);
	assert_non_null(strstr(err.msg, "SOME_GPU/perfdb-device.json: must define exactly one device, "
					"named 'SOME_GPU'"));
	perfdb_device_registry_release(&r);
}

static void test_of_dir_deepest(void **state)
{
	(void)state;
	struct perfdb_device_registry r;
	struct perfdb_err err;
	perfdb_device_registry_init(&r);
	unsetenv("PERFDB_DEVICES");
	assert_int_equal(perfdb_device_registry_load(&r, &err), 0);
	const struct perfdb_device *d =
		perfdb_device_of_dir(&r, "data/TEST_DEVICE/x/ATLAS_800_A2_280T_64G/vllm_ascend/v");
	assert_non_null(d);
	assert_string_equal(d->name, "ATLAS_800_A2_280T_64G");
	assert_null(perfdb_device_of_dir(&r, "db/NOT_A_DEVICE/torch"));
	assert_null(perfdb_device_of_dir(&r, ""));
	perfdb_device_registry_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_note_then_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_registry_definition_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_name_must_match_directory, setup, teardown),
		cmocka_unit_test(test_of_dir_deepest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
