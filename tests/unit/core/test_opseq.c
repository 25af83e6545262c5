/*
 * Unit tests: an op sequence's storage (include/perfdb/opseq.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "perfdb/err.h"
#include "perfdb/opseq.h"

/* Steps keep their order, a table name is copied to the length given, and
 * growth past the first allocation keeps every step. */
static void test_add_order(void **state)
{
	(void)state;
	struct perfdb_opseq s = { 0 };
	assert_int_equal(perfdb_opseq_add(&s, "aten.linear.csv", 11, 2), 0);
	assert_int_equal(perfdb_opseq_add(&s, "aten.add", 8, 7), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.v[0].table, "aten.linear");
	assert_int_equal(s.v[0].line, 2);
	assert_string_equal(s.v[1].table, "aten.add");
	assert_int_equal(s.v[1].line, 7);
	for (size_t i = 0; i < 1000; i++) {
		char t[32];
		snprintf(t, sizeof(t), "t%zu", i);
		assert_int_equal(perfdb_opseq_add(&s, t, strlen(t), i + 2), 0);
	}
	assert_int_equal(s.n, 1002);
	assert_string_equal(s.v[1001].table, "t999");
	assert_int_equal(s.v[1001].line, 1001);
	assert_string_equal(s.v[0].table, "aten.linear");
	perfdb_opseq_release(&s);
	assert_null(s.v);
	assert_int_equal(s.n, 0);
	perfdb_opseq_release(&s);   /* twice: nothing left to free */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
