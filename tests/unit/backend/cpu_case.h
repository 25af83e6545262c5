/*
 * Helpers shared by the CPU backend's op tests (test_cpu_misc.c,
 * test_cpu_rope.c): a case built by the engine from a table-like row,
 * checked, allocated and filled (seeded), then prepared and run.  Include
 * after <cmocka.h>; every function is static, one copy per test program.
 */
#ifndef PERFDB_TEST_CPU_CASE_H
#define PERFDB_TEST_CPU_CASE_H

#include <math.h>

#include "backend/cpu/cpu_internal.h"
#include "replay/engine.h"
#include "cpu_test_ctx.h"

static struct perfdb_engine_pool pool;

static const char *const FDT[] = { "DT_FLOAT", "DT_BF16", "DT_FLOAT16" };
static const enum perfdb_dtype FD[] = { PERFDB_DTYPE_FLOAT, PERFDB_DTYPE_BF16, PERFDB_DTYPE_FLOAT16 };

/* Build, check and allocate/fill one case of a memory-bound op (inputs from seed); returns check's result. */
static int cpu_case_setup(struct perfdb_op_case *c, const char *op, const char *ins, const char *idt,
			  const char *outs, const char *odt, uint64_t seed)
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_engine_build_case(op, ins, idt, "", outs, odt, "", c, &err), 0);
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(op);
	assert_non_null(impl);
	assert_true(perfdb_opdef_get(op)->memory_bound);
	int rc = perfdb_case_check(perfdb_opdef_get(impl->name), impl, c, &err);
	if (rc < 0)
		return rc;
	assert_int_equal(perfdb_engine_alloc_case(&pool, c, seed, &err), 0);
	return 0;
}

/* prepare, then run `runs` times (a replay times the same call repeatedly). */
static void cpu_case_run(struct perfdb_op_case *c, int runs)
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(c->op);
	if (impl->prepare)
		assert_int_equal(impl->prepare(with_ctx(c), &err), 0);
	for (int r = 0; r < runs; r++)
		assert_int_equal(impl->run(c, &err), 0);
}

static void finish(struct perfdb_op_case *c)
{
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op(c->op);
	if (impl->release)
		impl->release(c);
}

static float tol_of(enum perfdb_dtype d)
{
	return d == PERFDB_DTYPE_BF16 ? 2e-2f : d == PERFDB_DTYPE_FLOAT16 ? 2e-3f : 1e-5f;
}

static void near(double got, double want, double tol)
{
	if (fabs(got - want) > tol * (1.0 + fabs(want)))
		fail_msg("got %g, want %g (tol %g)", got, want, tol);
}

#endif
