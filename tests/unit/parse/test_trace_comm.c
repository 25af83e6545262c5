/*
 * Unit tests: a trace's collective ops, their rows and their comm-table calls
 * (src/parse/trace_comm.c, docs/chrome_trace.md "Collectives").  Expected
 * values are worked out by hand from the documented rules.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "parse/trace_comm.h"

static struct perfdb_span sp(const char *s)
{
	return (struct perfdb_span){ s, strlen(s) };
}

static void resolve(const char *name, const char *shapes, const char *dtypes, const char *meta,
		    const struct perfdb_tmeta *tm, struct perfdb_tcomm *c)
{
	assert_int_equal(perfdb_tcomm_resolve(sp(name), sp(shapes), sp(dtypes), sp(meta), tm, c), 0);
}

static void test_not_a_collective(void **state)
{
	(void)state;
	struct perfdb_tmeta tm = { .has_dist = 1, .world_size = 8, .backend = "nccl" };
	struct perfdb_tcomm c;
	resolve("aten::mm", "\"8,64;64,32\"", "FLOAT;FLOAT", "", &tm, &c);
	assert_false(c.coll);
	assert_false(c.has_obs);
}

static void test_annotation(void **state)
{
	(void)state;
	struct perfdb_tmeta tm = { .has_dist = 1, .world_size = 16, .backend = "nccl" };
	struct perfdb_tcomm c;
	/* all_reduce: the tensor, 366336 floats = 1465344 bytes */
	resolve("nccl:all_reduce", "\"366336\"", "FLOAT", "A", &tm, &c);
	assert_true(c.coll && c.has_obs);
	assert_string_equal(c.name, "");   /* keeps its own name and cells */
	assert_int_equal(c.obs.op, PERFDB_COMM_ALL_REDUCE);
	assert_int_equal(c.obs.message_bytes, 1465344);
	assert_int_equal(c.obs.num_devices, 16);
	assert_string_equal(c.obs.dtype, "DT_FLOAT");
	assert_string_equal(c.obs.backend, "profiled:nccl");
	/* reduce_scatter lists the whole input: 65536*384*4 bytes over 16 ranks */
	resolve("nccl:_reduce_scatter_base", "\"65536,384\"", "FLOAT", "A", &tm, &c);
	assert_int_equal(c.obs.op, PERFDB_COMM_REDUCE_SCATTER);
	assert_int_equal(c.obs.message_bytes, 65536LL * 384 * 4 / 16);
	/* a coalesced call: every tensor it lists, each by its dtype (4*2 + 6*4) */
	resolve("rccl:all_reduce_coalesced", "\"2,2;6\"", "DT_BF16;FLOAT", "A", &tm, &c);
	assert_int_equal(c.obs.message_bytes, 32);
	assert_string_equal(c.obs.dtype, "DT_BF16");
	assert_string_equal(c.obs.backend, "profiled:rccl");
	/* no distributedInfo: no group size, no comm row, said why */
	struct perfdb_tmeta none = { .world_size = -1 };
	resolve("nccl:all_reduce", "\"366336\"", "FLOAT", "A", &none, &c);
	assert_true(c.coll);
	assert_false(c.has_obs);
	assert_non_null(c.skip);
	/* a collective without a comm table */
	resolve("nccl:broadcast", "\"64\"", "FLOAT", "A", &tm, &c);
	assert_true(c.coll);
	assert_false(c.has_obs);
	assert_null(c.skip);
}

static void test_args(void **state)
{
	(void)state;
	struct perfdb_tmeta tm = { .has_dist = 1, .world_size = 2, .backend = "nccl" };
	struct perfdb_tcomm c;
	/* record_param_comms of newer Kineto: "R" coll dtype in out group */
	resolve("record_param_comms", "", "", "R\x1e" "allreduce\x1e" "Float\x1e" "2049000\x1e" "2049000\x1e" "2",
		&tm, &c);
	assert_true(c.coll && c.has_obs);
	assert_string_equal(c.name, "nccl:all_reduce");
	assert_string_equal(c.shapes, "\"2049000\"");
	assert_string_equal(c.dtypes, "FLOAT");
	assert_int_equal(c.obs.message_bytes, 2049000LL * 4);
	assert_int_equal(c.obs.num_devices, 2);
	/* _allgather_base: the rank's input, In msg nelems; bf16 */
	resolve("record_param_comms", "", "", "R\x1e" "_allgather_base\x1e" "BFloat16\x1e" "65664\x1e" "131328\x1e" "2",
		&tm, &c);
	assert_string_equal(c.name, "nccl:_all_gather_base");
	assert_int_equal(c.obs.op, PERFDB_COMM_ALL_GATHER);
	assert_int_equal(c.obs.message_bytes, 65664LL * 2);
	assert_string_equal(c.obs.dtype, "DT_BF16");
	/* reduce_scatter: the rank's output, Out msg nelems */
	resolve("record_param_comms", "", "", "R\x1e" "reduce_scatter_tensor_coalesced\x1e" "Half\x1e" "800\x1e" "100\x1e" "8",
		&tm, &c);
	assert_int_equal(c.obs.message_bytes, 200);
	assert_string_equal(c.obs.dtype, "DT_FP16");
	/* no distributedInfo: the backend is c10d */
	struct perfdb_tmeta none = { .world_size = -1 };
	resolve("record_param_comms", "", "", "R\x1e" "broadcast\x1e" "Long\x1e" "53120\x1e" "53120\x1e" "2", &none, &c);
	assert_string_equal(c.name, "c10d:broadcast");
	assert_string_equal(c.dtypes, "INT64");
	assert_false(c.has_obs);
	/* no group size */
	resolve("record_param_comms", "", "", "R\x1e" "allreduce\x1e" "Float\x1e" "10\x1e" "10\x1e", &tm, &c);
	assert_false(c.has_obs);
	assert_non_null(c.skip);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_a_collective),
		cmocka_unit_test(test_annotation),
		cmocka_unit_test(test_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
