/*
 * Unit tests for src/grid/config.c: routing through op_mapping.yaml and
 * configuration errors (spec §1).
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

/* §1 routing through op_mapping.yaml. */
static void test_routing_op_mapping(void **state)
{
	(void)state;
	struct perfdb_grid_config *cfg = load_cfg();
	const char *y =
		"operator_mappings:\n"
		"  a: {kernel_type: Pack, zero_cost: true}\n"
		"  b: {kernel_type: RealDiv, composite: yes}\n"
		"  c: {kernel_type: hcom_x_, category: communication}\n"
		"  d: {kernel_type: Add, alternate_kernel_types: [AddVariant, Pack]}\n"
		"  e: {kernel_type: AddVariant, zero_cost: true}\n"
		"  f: {kernel_type: Mystery, query_mode: elementwise}\n"
		"  g: {kernel_type: Mul, zero_cost: \"false\"}\n";
	struct perfdb_opmap *m;
	struct perfdb_err err;
	assert_int_equal(perfdb_opmap_load_mem(&m, "op.yaml", y, strlen(y), &err), 0);
	const char *p;
	assert_int_equal(perfdb_grid_route(cfg, m, "Pack", &p), PERFDB_GRID_ROUTE_FLAGGED);
	assert_int_equal(perfdb_grid_route(cfg, m, "RealDiv", &p), PERFDB_GRID_ROUTE_FLAGGED);
	assert_int_equal(perfdb_grid_route(cfg, m, "hcom_x_", &p), PERFDB_GRID_ROUTE_FLAGGED);
	/* an alternate inherits its parent's pattern; the first entry naming it wins */
	assert_int_equal(perfdb_grid_route(cfg, m, "AddVariant", &p), PERFDB_GRID_ROUTE_PATTERN);
	assert_string_equal(p, "elementwise_binary");
	assert_int_equal(perfdb_grid_route(cfg, m, "Mystery", &p), PERFDB_GRID_ROUTE_PATTERN);
	assert_string_equal(p, "elementwise_binary");
	/* a quoted "false" is a non-empty string: truthy, as in Python */
	assert_int_equal(perfdb_grid_route(cfg, m, "Mul", &p), PERFDB_GRID_ROUTE_FLAGGED);
	assert_int_equal(perfdb_grid_route(cfg, m, "MatMulCommon", &p), PERFDB_GRID_ROUTE_SKIP);
	assert_int_equal(perfdb_grid_route(cfg, m, "Unknown", &p), PERFDB_GRID_ROUTE_UNASSIGNED);
	assert_int_equal(perfdb_opmap_count(m), 7);
	perfdb_opmap_free(m);
	perfdb_grid_config_free(cfg);
}

/* Configuration errors name file:line:col. */
static void test_config_errors(void **state)
{
	(void)state;
	static const struct { const char *yaml, *msg; } cases[] = {
		{ "version: 1\ngrids: {}\nmodels: {}\npatterns:\n  p:\n    iterators: {a: [1]}\n"
		  "    inputs: [\"(a, b)\"]\n    outputs: []\nassignments: {}\n",
		  "g.yaml:7:14: pattern 'p': expression 'b': unknown name 'b' at column 1" },
		{ "version: 1\ngrids: {}\nmodels: {}\npatterns:\n  p:\n    iterator: {a: [1]}\n"
		  "assignments: {}\n",
		  "g.yaml:6:5: unknown key 'iterator' in a template pattern" },
		{ "version: 1\ngrids: {}\nmodels: {}\npatterns: {}\nassignments:\n  Add: nope\n",
		  "g.yaml:6:8: 'Add' is assigned to unknown pattern 'nope' (write 'skip' to skip it)" },
		{ "version: 1\ngrids: {}\nmodels: {}\npatterns:\n  p:\n    iterators: {a: G}\n"
		  "    inputs: []\n    outputs: []\nassignments: {}\n",
		  "g.yaml:6:20: unknown grid 'G' (define it under 'grids:')" },
		{ "version: 2\n", "g.yaml:1:10: 'version: 1' expected" },
		{ "version: 1\ngrids: [\n", "g.yaml:3:1: YAML syntax error" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct perfdb_grid_config *c = NULL;
		struct perfdb_err err;
		perfdb_err_clear(&err);
		assert_int_equal(perfdb_grid_config_load_mem(&c, "g.yaml", cases[i].yaml,
							     strlen(cases[i].yaml), &err), -PERFDB_EPARSE);
		if (strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
			fail_msg("case %zu: got '%s'", i, err.msg);
		assert_null(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routing_op_mapping),
		cmocka_unit_test(test_config_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
