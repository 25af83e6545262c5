/*
 * Unit tests: the scheduler's accounts (include/perfdb/sched.h) on
 * recorded readings of the /proc files, and the judgement of a block.
 * Every expected figure is worked out by hand below.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfdb/sched.h"

static void test_parse_schedstat(void **state)
{
	(void)state;
	uint64_t run = 0, wait = 0;
	/* recorded from a shell on the CI VM */
	assert_int_equal(perfdb_sched_parse_schedstat("3983818 1466589 2\n", &run, &wait), 0);
	assert_true(run == 3983818);
	assert_true(wait == 1466589);
	assert_int_equal(perfdb_sched_parse_schedstat("3983818 1466589\n", &run, &wait), -PERFDB_EPARSE);
	assert_int_equal(perfdb_sched_parse_schedstat("", &run, &wait), -PERFDB_EPARSE);
}

static void test_parse_status(void **state)
{
	(void)state;
	/* the tail of a recorded status file: the voluntary line comes first
	 * and must not be taken for the involuntary one */
	const char *st = "Name:\tbash\nvoluntary_ctxt_switches:\t311\n"
			 "nonvoluntary_ctxt_switches:\t17\n";
	uint64_t n = 0;
	assert_int_equal(perfdb_sched_parse_status(st, &n), 0);
	assert_true(n == 17);
	assert_int_equal(perfdb_sched_parse_status("voluntary_ctxt_switches:\t3\n", &n), -PERFDB_EPARSE);
}

static void test_parse_state(void **state)
{
	(void)state;
	/* recorded: a thread reading its own status is running */
	const char *st = "Name:\tcat\nUmask:\t0022\nState:\tR (running)\nTgid:\t4242\n";
	char c = 0;
	assert_int_equal(perfdb_sched_parse_state(st, &c), 0);
	assert_true(c == 'R');
	assert_int_equal(perfdb_sched_parse_state("State:\tS (sleeping)\n", &c), 0);
	assert_true(c == 'S');
	assert_int_equal(perfdb_sched_parse_state("Name:\tcat\n", &c), -PERFDB_EPARSE);
	assert_int_equal(perfdb_sched_parse_state("State:\t\n", &c), -PERFDB_EPARSE);
}

static void test_parse_loadavg(void **state)
{
	(void)state;
	uint32_t n = 0;
	/* recorded on the CI VM under two busy loops: the reader and the loops */
	assert_int_equal(perfdb_sched_parse_loadavg("1.22 1.25 1.79 3/87 1280\n", &n), 0);
	assert_true(n == 3);
	assert_int_equal(perfdb_sched_parse_loadavg("0.00 0.01 0.05\n", &n), -PERFDB_EPARSE);
	assert_int_equal(perfdb_sched_parse_loadavg("", &n), -PERFDB_EPARSE);
}

static void test_parse_migrations(void **state)
{
	(void)state;
	const char *sched = "bash (1385, #threads: 1)\n"
			    "se.nr_migrations_cold                        :                   99\n"
			    "se.nr_migrations                             :                    7\n";
	uint64_t m = 0;
	assert_int_equal(perfdb_sched_parse_migrations(sched, &m), 0);
	assert_true(m == 7);   /* not the longer key above it */
	assert_int_equal(perfdb_sched_parse_migrations("se.exec_start : 1\n", &m), -PERFDB_ENOENT);
}

static void test_parse_stat(void **state)
{
	(void)state;
	const char *stat = "cpu  421849 916 215818 360562 7304 0 2568 40 11 0\n"
			   "cpu0 210000 400 100000 180000 3000 0 1200 20 5 0\n";
	uint64_t steal = 0, total = 0;
	assert_int_equal(perfdb_sched_parse_stat(stat, &steal, &total), 0);
	assert_true(steal == 40);
	/* user..steal: 421849+916+215818+360562+7304+0+2568+40; guest is inside user */
	assert_true(total == 1009057);
	/* an old kernel's four fields: no steal */
	assert_int_equal(perfdb_sched_parse_stat("intr 5\ncpu  10 0 5 85\n", &steal, &total), 0);
	assert_true(steal == 0 && total == 100);
	assert_int_equal(perfdb_sched_parse_stat("cpu0 1 2 3 4\n", &steal, &total), -PERFDB_EPARSE);
}

static struct perfdb_sched_reading reading(uint64_t wait, uint64_t nivcsw, uint64_t steal,
					   uint64_t total)
{
	struct perfdb_sched_reading r;
	memset(&r, 0, sizeof(r));
	r.wait_ns = wait;
	r.nivcsw = nivcsw;
	r.steal_ticks = steal;
	r.total_ticks = total;
	r.threads = 2;
	return r;
}

static void test_judge(void **state)
{
	(void)state;
	struct perfdb_sched_block b;
	struct perfdb_sched_reading a = reading(1000000, 4, 0, 1000);
	/* 40 us of wait in a 1 ms block: under the 50 us floor */
	struct perfdb_sched_reading z = reading(1040000, 4, 0, 1000);
	perfdb_sched_judge(&a, &z, 1e-3, -1, &b);
	assert_false(b.contaminated);
	assert_true(b.wait_ns == 40000);
	/* 100 us in 1 ms: 10 % > 2 % and over the floor */
	z = reading(1100000, 5, 0, 1000);
	perfdb_sched_judge(&a, &z, 1e-3, -1, &b);
	assert_true(b.contaminated);
	assert_string_equal(b.why, "run-queue wait");
	assert_true(b.nivcsw == 1);
	/* the same 100 us over 10 s: 0.001 %, a quiet machine's housekeeping */
	perfdb_sched_judge(&a, &z, 10.0, -1, &b);
	assert_false(b.contaminated);
	/* a scheduler slice (4 ms) lost at one OpenMP barrier in a 20 ms block: 20 % */
	z = reading(5000000, 5, 0, 1000);
	perfdb_sched_judge(&a, &z, 20e-3, -1, &b);
	assert_true(b.contaminated);
	/* steal: 5 of 100 ticks = 5 % > 2 % */
	z = reading(1000000, 4, 5, 1100);
	perfdb_sched_judge(&a, &z, 1.0, -1, &b);
	assert_true(b.contaminated);
	assert_string_equal(b.why, "steal");
	assert_true(b.steal_fraction > 0.0499 && b.steal_fraction < 0.0501);
	/* 1 of 100 ticks: 1 %, kept */
	z = reading(1000000, 4, 1, 1100);
	perfdb_sched_judge(&a, &z, 1.0, -1, &b);
	assert_false(b.contaminated);
	/* no tick passed (a short block): no steal figure, nothing judged on it */
	z = reading(1000000, 4, 0, 1000);
	perfdb_sched_judge(&a, &z, 1e-3, -1, &b);
	assert_false(b.contaminated);
	assert_true(b.steal_fraction == 0);
	/* a thread that exited took its counts: the sums fall, counted as 0, not as 2^64 */
	z = reading(900000, 3, 0, 1000);
	perfdb_sched_judge(&a, &z, 1e-3, -1, &b);
	assert_false(b.contaminated);
	assert_true(b.wait_ns == 0 && b.nivcsw == 0);
}

/*
 * Other processes at the block's edges: judged against the CPUs the caller
 * leaves free, at either reading, and only when the caller asks.
 */
static void test_judge_others(void **state)
{
	(void)state;
	struct perfdb_sched_block b;
	struct perfdb_sched_reading a = reading(1000000, 4, 0, 1000), z = a;
	/* two threads of ours running at both readings, nothing else: clean at 0 free CPUs */
	a.has_running = z.has_running = true;
	a.running_all = z.running_all = 2;
	a.running_ours = z.running_ours = 2;
	perfdb_sched_judge(&a, &z, 1e-3, 0, &b);
	assert_false(b.contaminated);
	assert_true(b.others == 0);
	/* two busy loops beside our two threads at the block's end: 4 - 2 = 2 others */
	z.running_all = 4;
	perfdb_sched_judge(&a, &z, 1e-3, 0, &b);
	assert_true(b.contaminated);
	assert_string_equal(b.why, "other processes");
	assert_true(b.others == 2);
	/* ... at its start only: the more of the two readings */
	perfdb_sched_judge(&z, &a, 1e-3, 0, &b);
	assert_true(b.contaminated && b.others == 2);
	/* the same two where --threads left two CPUs free: theirs to use */
	perfdb_sched_judge(&a, &z, 1e-3, 2, &b);
	assert_false(b.contaminated);
	/* one more than the free CPUs */
	perfdb_sched_judge(&a, &z, 1e-3, 1, &b);
	assert_true(b.contaminated);
	/* not asked (free_cpus < 0): not judged, still counted */
	perfdb_sched_judge(&a, &z, 1e-3, -1, &b);
	assert_false(b.contaminated);
	assert_true(b.others == 2);
	/* a worker of ours woke between the thread reads and /proc/loadavg: never negative */
	z.running_all = 1;
	perfdb_sched_judge(&a, &z, 1e-3, 0, &b);
	assert_false(b.contaminated);
	assert_true(b.others == 0);
	/* a reading without /proc/loadavg judges nothing on it */
	z.running_all = 9;
	z.has_running = false;
	a.has_running = false;
	perfdb_sched_judge(&a, &z, 1e-3, 0, &b);
	assert_false(b.contaminated);
	/* run-queue wait is named first when both hold */
	a.has_running = z.has_running = true;
	z.wait_ns = a.wait_ns + 100000;
	perfdb_sched_judge(&a, &z, 1e-3, 0, &b);
	assert_string_equal(b.why, "run-queue wait");
}

/* The live files, by rule: this process has a thread, the machine ticks, the counts only grow. */
static void test_read_live(void **state)
{
	(void)state;
	struct perfdb_sched_reading a, b;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_sched_read(&a, &err), 0);
	assert_true(a.threads >= 1);
	assert_true(a.total_ticks > 0);
	/* the reading thread is running as it reads, and is one of the machine's running tasks */
	assert_true(a.running_ours >= 1);
	assert_true(a.has_running && a.running_all >= 1);
	volatile uint64_t spin = 0;
	for (int i = 0; i < 20000000; i++)
		spin += (uint64_t)i;
	assert_int_equal(perfdb_sched_read(&b, &err), 0);
	assert_true(b.wait_ns >= a.wait_ns && b.nivcsw >= a.nivcsw && b.total_ticks >= a.total_ticks);
}

static atomic_int spun;

/* 50 ms of its own CPU time, then at rest until the pipe closes */
static void *spin50(void *arg)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9 < 0.05);
	atomic_store(&spun, 1);
	char c;
	(void)!read(*(int *)arg, &c, 1);
	return NULL;
}

/*
 * The other threads' CPU time: none besides the caller at first (the
 * caller's own time is never counted); with a second thread that has run
 * 50 ms of CPU, one more and at least 50 ms more, whatever else the machine
 * runs.
 */
static void test_others_run(void **state)
{
	(void)state;
	uint64_t ns, ns0;
	size_t n, n0;
	volatile uint64_t sink = 0;
	for (int i = 0; i < 20000000; i++)   /* the caller's own time */
		sink += (uint64_t)i;
	assert_int_equal(perfdb_sched_others_run_ns(&ns0, &n0), 0);
	if (n0 == 0)   /* a runtime may keep a thread of its own (a sanitizer's) */
		assert_true(ns0 == 0);
	int gate[2];
	assert_int_equal(pipe(gate), 0);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, spin50, &gate[0]), 0);
	while (!atomic_load(&spun))
		usleep(1000);
	assert_int_equal(perfdb_sched_others_run_ns(&ns, &n), 0);
	assert_int_equal(n, n0 + 1);
	assert_true(ns - ns0 >= 50000000u);
	close(gate[1]);
	pthread_join(t, NULL);
	close(gate[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_schedstat),
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_parse_state),
		cmocka_unit_test(test_parse_loadavg),
		cmocka_unit_test(test_parse_migrations),
		cmocka_unit_test(test_parse_stat),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_judge_others),
		cmocka_unit_test(test_read_live),
		cmocka_unit_test(test_others_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
