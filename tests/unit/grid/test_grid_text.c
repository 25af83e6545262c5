/*
 * Unit tests for src/grid/grid_text.c: the [MEMORY] and [TIME] lines (the
 * budget written as memory_estimator.py's format_bytes writes it: two
 * decimals in the largest binary unit it reaches, whole bytes below 1 KiB).
 * The header and summary are compared whole by the CLI cases tests/cli/grid/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "grid/grid.h"
#include "perfdb/strbuf.h"

static void memory_is(uint64_t budget, const char *want)
{
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_grid_memory_text("db/dir/MatMulV2.csv", 3, 40, budget, &out), 0);
	assert_string_equal(out.buf, want);
	perfdb_strbuf_release(&out);
}

static void test_memory(void **state)
{
	(void)state;
	/* 64 GiB = 64 * 2^30; 1.5 MiB = 1572864; 1536 B = 1.5 KiB */
	memory_is(64ull << 30, "[MEMORY] MatMulV2.csv: filtered 3/40 rows exceeding 64.00 GiB HBM budget\n");
	memory_is(1572864, "[MEMORY] MatMulV2.csv: filtered 3/40 rows exceeding 1.50 MiB HBM budget\n");
	memory_is(1536, "[MEMORY] MatMulV2.csv: filtered 3/40 rows exceeding 1.50 KiB HBM budget\n");
	memory_is(1023, "[MEMORY] MatMulV2.csv: filtered 3/40 rows exceeding 1023 B HBM budget\n");
}

static void test_slow(void **state)
{
	(void)state;
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_grid_slow_text("MatMulV2.csv", "SLOW_NPU", 5, 481, 60, &out), 0);
	assert_string_equal(out.buf, "[TIME] MatMulV2.csv: filtered 5/481 rows whose replay on SLOW_NPU would "
				     "exceed 60 s (a warm-up and 30 samples at its peaks)\n");
	perfdb_strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_slow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
