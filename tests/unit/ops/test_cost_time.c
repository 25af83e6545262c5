/*
 * Unit tests: a row's roofline time on a device (src/ops/cost_time.c):
 * max(flops / the unit's peak for the dtype, bytes / bandwidth), -1 where a
 * needed figure is unknown.  Figures worked by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ops/opdef.h"
#include "perfdb/device.h"
#include "perfdb/dtype.h"

static void test_roofline_time(void **state)
{
	(void)state;
	struct perfdb_device d = { .name = "X", .kind = "cpu", .memory_bandwidth = 1e11 };
	d.mma_flops[PERFDB_PEAK_BF16] = 1e12;
	d.vector_flops[PERFDB_PEAK_FP32] = 1e11;
	/* 2e12 FLOP on the matrix unit in bf16: 2 s; its 1e9 bytes take 0.01 s */
	struct perfdb_op_cost w = { .flops = 2e12, .bytes = 1e9, .unit = PERFDB_OP_UNIT_MATRIX,
				    .dtype = PERFDB_DTYPE_BF16 };
	assert_float_equal(perfdb_op_cost_seconds(&w, &d), 2.0, 1e-12);
	/* memory-bound: 1e8 FLOP at 1e11 on the vector unit = 1 ms, 1e10 bytes at 1e11 B/s = 0.1 s */
	struct perfdb_op_cost v = { .flops = 1e8, .bytes = 1e10, .unit = PERFDB_OP_UNIT_VECTOR,
				    .dtype = PERFDB_DTYPE_FLOAT };
	assert_float_equal(perfdb_op_cost_seconds(&v, &d), 0.1, 1e-12);
	/* fp16 on the matrix unit: no peak known */
	w.dtype = PERFDB_DTYPE_FLOAT16;
	assert_float_equal(perfdb_op_cost_seconds(&w, &d), -1, 0);
	/* pure data movement needs only the bandwidth */
	struct perfdb_op_cost m = { .flops = 0, .bytes = 5e10 };
	assert_float_equal(perfdb_op_cost_seconds(&m, &d), 0.5, 1e-12);
	d.memory_bandwidth = 0;
	assert_float_equal(perfdb_op_cost_seconds(&m, &d), -1, 0);
	assert_float_equal(perfdb_op_cost_seconds(&m, NULL), -1, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_roofline_time) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
