/*
 * Unit tests: the database schema's rules (include/perfdb/schema.h): the
 * usable duration (docs/spec/replay.md §2 "Validity") and the hotspot
 * band (§3), with the cases worked out by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "parse/parse.h"
#include "perfdb/schema.h"

static void test_duration_cell(void **state)
{
	(void)state;
	double v = -1;
	assert_true(perfdb_schema_duration("12.5", true, &v));
	assert_true(v == 12.5);
	assert_true(perfdb_schema_duration(" 1e1 ", false, &v));
	assert_true(v == 10);
	static const char *const invalid[] = { "", "N/A", "abc", "0", "-0", "-3", "nan", "0x10" };
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		v = -1;
		assert_false(perfdb_schema_duration(invalid[i], false, &v));
		assert_true(v == -1);   /* left alone */
	}
	assert_false(perfdb_schema_duration(NULL, false, NULL));
	/* infinity: valid for the reference's rule, not for a simulator */
	assert_true(perfdb_schema_duration("inf", false, &v));
	assert_true(isinf(v));
	assert_false(perfdb_schema_duration("inf", true, NULL));
}

static void test_usable_duration(void **state)
{
	(void)state;
	double v = 0;
	assert_true(perfdb_schema_usable_duration("3", "5", true, &v));
	assert_true(v == 3);                      /* microbench first */
	assert_true(perfdb_schema_usable_duration("", "5", true, &v));
	assert_true(v == 5);                      /* else profiling */
	assert_true(perfdb_schema_usable_duration("0", "N/A", false, NULL) == false);
	assert_true(perfdb_schema_usable_duration("inf", "5", true, &v));
	assert_true(v == 5);
	assert_true(perfdb_schema_usable_duration("inf", "5", false, &v));
	assert_true(isinf(v));
	assert_false(perfdb_schema_usable_duration("inf", "", true, NULL));
	assert_false(perfdb_schema_usable_duration(NULL, NULL, false, NULL));
}

static void test_band(void **state)
{
	(void)state;
	assert_true(perfdb_schema_in_band(1.0));
	assert_true(perfdb_schema_in_band(0.8));  /* the edges are inside */
	assert_true(perfdb_schema_in_band(1.2));
	assert_false(perfdb_schema_in_band(0.79));
	assert_false(perfdb_schema_in_band(1.21));
	assert_true(perfdb_schema_in_band(NAN));  /* no hotspot */
}

/* The counter list builds the names parse and writeback use. */
static void test_counter_names(void **state)
{
	(void)state;
#define ONE(n) +1
	assert_int_equal(0 PERFDB_SCHEMA_COUNTERS(ONE), PERFDB_NCOUNTERS);
#undef ONE
	assert_string_equal(perfdb_counter_names[0], "aicore_time(us)");
	assert_string_equal(perfdb_counter_names[PERFDB_NCOUNTERS - 1], "cube_utilization(%)");
	assert_string_equal(perfdb_parse_columns[11], "Profiling Average aicore_time(us)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_cell),
		cmocka_unit_test(test_usable_duration),
		cmocka_unit_test(test_band),
		cmocka_unit_test(test_counter_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
