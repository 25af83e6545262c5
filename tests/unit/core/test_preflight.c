/*
 * Unit tests for src/core/preflight.c: the /proc/stat arithmetic on
 * recorded text, the judgement of given readings against the thresholds
 * of perfdb/preflight.h, and the line people read.  The live window is
 * run end to end by the require_quiet_busy cases of tests/cli/microbench and
 * tests/cli/comm.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "perfdb/preflight.h"

static void test_ticks_parse(void **state)
{
	(void)state;
	struct perfdb_cpu_ticks t;
	/* user nice system idle iowait irq softirq steal guest guest_nice */
	const char *stat = "cpu  100 2 30 500 7 1 4 6 50 0\ncpu0 50 1 15 250 3 0 2 3 25 0\nintr 1\n";
	assert_int_equal(perfdb_cpu_ticks_parse(stat, &t), 0);
	assert_int_equal(t.busy, 100 + 2 + 30 + 1 + 4 + 6);   /* guest is inside user */
	assert_int_equal(t.steal, 6);
	assert_int_equal(t.total, 143 + 500 + 7);
	/* an old kernel's four fields: no steal */
	assert_int_equal(perfdb_cpu_ticks_parse("intr 5\ncpu 10 0 5 85\n", &t), 0);
	assert_int_equal(t.busy, 15);
	assert_int_equal(t.steal, 0);
	assert_int_equal(t.total, 100);
	assert_int_equal(perfdb_cpu_ticks_parse("cpu0 1 2 3 4\n", &t), -PERFDB_EPARSE);
	assert_int_equal(perfdb_cpu_ticks_parse("cpu 1 2 3\n", &t), -PERFDB_EPARSE);
}

static void test_judge(void **state)
{
	(void)state;
	struct perfdb_preflight pf;
	memset(&pf, 0, sizeof(pf));
	pf.ncpus = 2;
	pf.other_cpus = 0.24;
	pf.steal = 0.019;
	pf.probe_gbs = 32.1;
	pf.quiet_gbs = 40.0;   /* 80.25 %: above the 80 % line */
	perfdb_preflight_judge(&pf);
	assert_true(pf.quiet);
	assert_string_equal(pf.why, "");
	pf.other_cpus = 1.5;
	pf.steal = 0.05;
	pf.probe_gbs = 20.0;
	perfdb_preflight_judge(&pf);
	assert_false(pf.quiet);
	assert_string_equal(pf.why, "other processes used 1.50 of 2 CPUs; the VM lost 5.0 % of its time to steal; "
				    "memory bandwidth 20.0 GB/s is 50 % of this machine's quiet 40.0 GB/s");
	/* no quiet figure: the bandwidth is not judged */
	pf.other_cpus = 0;
	pf.steal = 0;
	pf.quiet_gbs = 0;
	perfdb_preflight_judge(&pf);
	assert_true(pf.quiet);
}

static void test_line(void **state)
{
	(void)state;
	struct perfdb_preflight pf;
	memset(&pf, 0, sizeof(pf));
	pf.ncpus = 4;
	pf.other_cpus = 0.02;
	pf.probe_gbs = 31.2;
	pf.quiet_gbs = 32.5;
	perfdb_preflight_judge(&pf);
	char line[256];
	perfdb_preflight_line(&pf, line, sizeof(line));
	assert_string_equal(line, "other processes 0.02 of 4 CPUs, steal 0.0 %, memory 31.2 GB/s (96 % of this "
				  "machine's quiet 32.5): quiet");
	pf.quiet_gbs = 0;
	pf.other_cpus = 3;
	perfdb_preflight_judge(&pf);
	perfdb_preflight_line(&pf, line, sizeof(line));
	assert_string_equal(line, "other processes 3.00 of 4 CPUs, steal 0.0 %, memory 31.2 GB/s (no quiet figure "
				  "yet): busy");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ticks_parse),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
