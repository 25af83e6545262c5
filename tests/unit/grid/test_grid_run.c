/*
 * Unit tests for src/grid/grid_run.c: a run over a database (spec §4, Decision 8).
 * Expected values are worked out by hand from docs/spec/grid.md (counts also
 * match tests/grid/oracle_grid.py).
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

#include "grid_test.h"

/* §4 "a cap without RNG takes the first N"; Decision 8: source bytes kept. */
static void test_run_cap_first_rows(void **state)
{
	(void)state;
	char dir[] = "/tmp/perfdb-test-grid.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/Add.csv", dir);
	/* LF line ends and an unquoted shape: the source rows stay byte for byte */
	const char *src = "Input Shapes,Input Data Types,Output Shapes,Duration(us)\n"
			  "3;7,DT_BF16,3,1.5";
	struct perfdb_err err;
	assert_int_equal(perfdb_file_write_atomic(path, src, strlen(src), &err), 0);
	struct perfdb_grid_config *cfg = load_cfg();
	struct perfdb_grid_models m;
	resolve(cfg, NULL, 0, &m);
	struct perfdb_grid_opts o = { .db_dir = dir, .cfg = cfg, .models = &m, .rows = 2,
				      .use_rng = false, .lock_timeout = -1 };
	struct perfdb_grid_result res;
	assert_int_equal(perfdb_grid_run(&o, &res, &err), 0);
	assert_int_equal(res.appended, 2);
	assert_int_equal(res.files[0].candidates, 481);
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_file_read_all(path, &sb, &err), 0);
	assert_string_equal(sb.buf,
		"Input Shapes,Input Data Types,Output Shapes,Duration(us)\n"
		"3;7,DT_BF16,3,1.5\r\n"
		"\"\"\"1,128;1,128\"\"\",DT_BF16,\"\"\"1,128\"\"\",0\r\n"
		"\"\"\"1,192;1,192\"\"\",DT_BF16,\"\"\"1,192\"\"\",0\r\n");
	perfdb_strbuf_release(&sb);
	perfdb_grid_result_release(&res);
	perfdb_grid_models_release(&m);
	perfdb_grid_config_free(cfg);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);   /* the lock left no file */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_cap_first_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
