/*
 * Unit tests for src/core/probe.c, the memory-bandwidth probe behind
 * microbench's contention retries (docs/replay.md "Contention").  The
 * engine's use of it (retries, kept measurement, journal, resume) is
 * tested end to end in tests/cli/microbench/cpu_contention.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfdb/probe.h"

/* The threshold: strictly below 80 % of the reference; nothing is contended without readings. */
static void test_contended_threshold(void **state)
{
	(void)state;
	assert_false(perfdb_probe_contended(40.0, 40.0));
	assert_false(perfdb_probe_contended(32.0, 40.0));     /* exactly 80 % */
	assert_true(perfdb_probe_contended(31.99, 40.0));
	assert_true(perfdb_probe_contended(1.0, 40.0));
	assert_false(perfdb_probe_contended(0.0, 40.0));      /* not probed */
	assert_false(perfdb_probe_contended(20.0, 0.0));      /* no reference yet */
}

/* Medians by hand: odd and even counts, readings <= 0 left out, none at all. */
static void test_median(void **state)
{
	(void)state;
	double a[] = { 41.0, 0.0, 46.0, 38.0 };             /* 38 41 46 */
	assert_true(perfdb_probe_median(a, 4) == 41.0);
	double b[] = { 40.0, 30.0, -1.0, 20.0, 50.0 };      /* 20 30 40 50 */
	assert_true(perfdb_probe_median(b, 5) == 35.0);
	double c[] = { 0.0, 0.0 };
	assert_true(perfdb_probe_median(c, 2) == 0.0);
	assert_true(perfdb_probe_median(NULL, 0) == 0.0);
}

/* The reference follows the noted rows; unprobed rows (0) do not count. */
static void test_reference(void **state)
{
	(void)state;
	struct perfdb_probe p;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_probe_init(&p, 0, &err), 0);
	assert_true(perfdb_probe_reference(&p) == 0.0);
	assert_int_equal(perfdb_probe_note(&p, 40.0), 0);
	assert_int_equal(perfdb_probe_note(&p, 0.0), 0);
	assert_true(perfdb_probe_reference(&p) == 40.0);
	assert_int_equal(perfdb_probe_note(&p, 20.0), 0);
	assert_true(perfdb_probe_reference(&p) == 30.0);
	for (int i = 0; i < 100; i++)   /* past the first allocation */
		assert_int_equal(perfdb_probe_note(&p, 44.0), 0);
	assert_true(perfdb_probe_reference(&p) == 44.0);
	assert_int_equal(p.nrows, 102);
	perfdb_probe_release(&p);
	assert_null(p.rows);
}

/* A real reading is a positive bandwidth. */
static void test_measured(void **state)
{
	(void)state;
	struct perfdb_probe p;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_probe_init(&p, (size_t)4 << 20, &err), 0);
	double a = perfdb_probe_gbs(&p);
	assert_true(a > 0.1 && a < 10000.0);
	perfdb_probe_release(&p);
	assert_null(p.buf);
}

/* A thread that spins on its own CPU time until told to stop, then blocks until released. */
struct spinner {
	pthread_t t;
	double spin_s;            /* this much of its own CPU time; 0: until stop */
	atomic_int started, stop, done;
	int gate[2];              /* it blocks reading gate[0] once done */
};

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *spin(void *arg)
{
	struct spinner *s = arg;
	double t0 = thread_cpu_s();
	atomic_store(&s->started, 1);
	while (!atomic_load(&s->stop) && (s->spin_s <= 0 || thread_cpu_s() - t0 < s->spin_s))
		;
	atomic_store(&s->done, 1);
	char c;
	(void)!read(s->gate[0], &c, 1);
	return NULL;
}

static void spinner_start(struct spinner *s, double spin_s)
{
	memset(s, 0, sizeof(*s));
	s->spin_s = spin_s;
	assert_int_equal(pipe(s->gate), 0);
	assert_int_equal(pthread_create(&s->t, NULL, spin, s), 0);
	while (!atomic_load(&s->started))   /* on its CPU, not only created */
		usleep(100);
}

static void spinner_end(struct spinner *s)
{
	atomic_store(&s->stop, 1);
	(void)!write(s->gate[1], "x", 1);
	pthread_join(s->t, NULL);
	close(s->gate[0]);
	close(s->gate[1]);
}

/*
 * A reading taken while another thread of the process runs is no reading
 * (0): it read the run's own workers, not the machine.  The spinner never
 * rests, so the probe waits PERFDB_PROBE_SETTLE_S and then reads beside
 * it.  On a loaded machine (ctest -j) the spinner may be off its CPU for a
 * whole reading, which is then rightly a reading: of five readings of
 * 64 MiB (~5 ms each), some must be refused.
 */
static void test_others_running(void **state)
{
	(void)state;
	struct perfdb_probe p;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_probe_init(&p, PERFDB_PROBE_BYTES, &err), 0);
	struct spinner s;
	spinner_start(&s, 0);
	int refused = 0;
	for (int k = 0; k < 5 && !refused; k++)
		refused = perfdb_probe_gbs(&p) == 0.0;
	assert_true(refused);
	spinner_end(&s);
	assert_true(perfdb_probe_gbs(&p) > 0.0);   /* at rest again (gone): a reading */
	perfdb_probe_release(&p);
}

/*
 * A thread that spins 80 ms of CPU and then blocks, as OpenMP's workers do
 * after an op: the probe waits it out rather than give no reading, so
 * readings come back (within 10 calls: on a loaded machine a reading may
 * still be taken beside the spinner and refused), and once it is at rest
 * every reading is one: a blocked thread is not a running one.
 */
static void test_settles(void **state)
{
	(void)state;
	struct perfdb_probe p;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_probe_init(&p, (size_t)4 << 20, &err), 0);
	struct spinner s;
	spinner_start(&s, 0.08);
	double g = 0;
	for (int k = 0; k < 10 && g <= 0; k++)
		g = perfdb_probe_gbs(&p);
	assert_true(g > 0.0);
	while (!atomic_load(&s.done))
		usleep(1000);
	for (int k = 0; k < 3; k++)
		assert_true(perfdb_probe_gbs(&p) > 0.0);
	spinner_end(&s);
	perfdb_probe_release(&p);
}

/* A row keeps the lower of its two readings, of those taken: 0 is no reading, not the lowest. */
static void test_lower(void **state)
{
	(void)state;
	assert_true(perfdb_probe_lower(30.0, 40.0) == 30.0);
	assert_true(perfdb_probe_lower(40.0, 30.0) == 30.0);
	assert_true(perfdb_probe_lower(0.0, 30.0) == 30.0);
	assert_true(perfdb_probe_lower(30.0, 0.0) == 30.0);
	assert_true(perfdb_probe_lower(0.0, 0.0) == 0.0);
}

/* The script hook: readings in order, the last repeated; without buffer or script, 0. */
static void test_script(void **state)
{
	(void)state;
	static const double s[] = { 30.0, 45.0, 20.0 };
	struct perfdb_probe p;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_probe_init(&p, 0, &err), 0);
	assert_null(p.buf);
	assert_true(perfdb_probe_gbs(&p) == 0.0);
	p.script = s;
	p.nscript = 3;
	assert_true(perfdb_probe_gbs(&p) == 30.0);
	assert_true(perfdb_probe_gbs(&p) == 45.0);
	assert_true(perfdb_probe_gbs(&p) == 20.0);
	assert_true(perfdb_probe_gbs(&p) == 20.0);
	perfdb_probe_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contended_threshold),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_reference),
		cmocka_unit_test(test_measured),
		cmocka_unit_test(test_script),
		cmocka_unit_test(test_others_running),
		cmocka_unit_test(test_settles),
		cmocka_unit_test(test_lower),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
