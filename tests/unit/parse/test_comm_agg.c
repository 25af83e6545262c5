/*
 * Unit tests: a profile's collective calls grouped for the comm tables
 * (src/parse/comm_agg.c, docs/parse.md "Comm tables from profiles").  The
 * name rule and the groups are worked out by hand from the docs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "parse/comm_agg.h"

static int op_of(const char *name)
{
	return perfdb_comm_obs_op(name, strlen(name));
}

static void test_names(void **state)
{
	(void)state;
	/* nccl: annotations, record_param_comms' Collective name, Ascend's opType */
	assert_int_equal(op_of("all_reduce"), PERFDB_COMM_ALL_REDUCE);
	assert_int_equal(op_of("allreduce"), PERFDB_COMM_ALL_REDUCE);
	assert_int_equal(op_of("allreduce_coalesced"), PERFDB_COMM_ALL_REDUCE);
	assert_int_equal(op_of("hcom_allReduce_"), PERFDB_COMM_ALL_REDUCE);
	assert_int_equal(op_of("_allgather_base"), PERFDB_COMM_ALL_GATHER);
	assert_int_equal(op_of("_all_gather_base"), PERFDB_COMM_ALL_GATHER);
	assert_int_equal(op_of("allgather_into_tensor_coalesced"), PERFDB_COMM_ALL_GATHER);
	assert_int_equal(op_of("hcom_allGather_"), PERFDB_COMM_ALL_GATHER);
	assert_int_equal(op_of("_reduce_scatter_base"), PERFDB_COMM_REDUCE_SCATTER);
	assert_int_equal(op_of("reduce_scatter_tensor_coalesced"), PERFDB_COMM_REDUCE_SCATTER);
	assert_int_equal(op_of("hcom_reduceScatter_"), PERFDB_COMM_REDUCE_SCATTER);
	assert_int_equal(op_of("all_to_all"), PERFDB_COMM_ALL_TO_ALL);
	assert_int_equal(op_of("all_to_allv"), PERFDB_COMM_ALL_TO_ALL);
	assert_int_equal(op_of("hcom_alltoallv_"), PERFDB_COMM_ALL_TO_ALL);
	/* collectives without a comm table */
	assert_int_equal(op_of("broadcast"), -1);
	assert_int_equal(op_of("hcom_broadcast_"), -1);
	assert_int_equal(op_of("reduce"), -1);
	assert_int_equal(op_of("send"), -1);
	assert_int_equal(op_of("barrier"), -1);
	assert_int_equal(op_of(""), -1);
}

static void test_dtypes(void **state)
{
	(void)state;
	assert_string_equal(perfdb_comm_obs_dtype(PERFDB_DTYPE_FLOAT), "DT_FLOAT");
	assert_string_equal(perfdb_comm_obs_dtype(PERFDB_DTYPE_BF16), "DT_BF16");
	assert_string_equal(perfdb_comm_obs_dtype(PERFDB_DTYPE_FLOAT16), "DT_FP16");   /* perfdb comm's, not DT_FLOAT16 */
	assert_string_equal(perfdb_comm_obs_dtype(PERFDB_DTYPE_INT8), "DT_INT8");
	assert_string_equal(perfdb_comm_obs_dtype(PERFDB_DTYPE_INT64), "DT_INT64");
}

static void test_groups(void **state)
{
	(void)state;
	struct perfdb_err err;
	struct perfdb_comm_agg *a = NULL, *b = NULL;
	assert_int_equal(perfdb_comm_agg_new(&a, &err), 0);
	assert_int_equal(perfdb_comm_agg_new(&b, &err), 0);
	struct perfdb_comm_obs o = { PERFDB_COMM_ALL_REDUCE, 4096, 8, "DT_FLOAT", "profiled:nccl", 10 };
	assert_int_equal(perfdb_comm_agg_add(a, &o, &err), 0);
	o.dur_us = 12;
	assert_int_equal(perfdb_comm_agg_add(a, &o, &err), 0);
	o.num_devices = 4;   /* another group size: another row */
	assert_int_equal(perfdb_comm_agg_add(a, &o, &err), 0);
	o.num_devices = 8;
	o.backend = "profiled:hccl";   /* another transport: another row */
	assert_int_equal(perfdb_comm_agg_add(a, &o, &err), 0);
	assert_int_equal(perfdb_comm_agg_ngroups(a), 3);
	/* b's calls after a's; its first group is a's first */
	struct perfdb_comm_obs p = { PERFDB_COMM_ALL_REDUCE, 4096, 8, "DT_FLOAT", "profiled:nccl", 30 };
	assert_int_equal(perfdb_comm_agg_add(b, &p, &err), 0);
	p.op = PERFDB_COMM_ALL_GATHER;
	assert_int_equal(perfdb_comm_agg_add(b, &p, &err), 0);
	assert_int_equal(perfdb_comm_agg_merge(a, b, &err), 0);
	assert_int_equal(perfdb_comm_agg_ngroups(a), 4);
	struct perfdb_comm_obs g;
	double *s;
	assert_int_equal(perfdb_comm_agg_group(a, 0, &g, &s), 3);
	assert_true(s[0] == 10 && s[1] == 12 && s[2] == 30);
	assert_int_equal(g.num_devices, 8);
	assert_string_equal(g.backend, "profiled:nccl");
	assert_int_equal(perfdb_comm_agg_group(a, 1, &g, &s), 1);
	assert_int_equal(g.num_devices, 4);
	assert_int_equal(perfdb_comm_agg_group(a, 3, &g, &s), 1);
	assert_int_equal(g.op, PERFDB_COMM_ALL_GATHER);
	perfdb_comm_agg_free(a);
	perfdb_comm_agg_free(b);
	perfdb_comm_agg_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_dtypes),
		cmocka_unit_test(test_groups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
