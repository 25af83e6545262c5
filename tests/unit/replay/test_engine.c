/*
 * Unit tests for the replay engine's steps (src/replay/engine_internal.h;
 * docs/replay.md "Tensors", "Timing", "Contention"; engine.h "Scale-out"),
 * driven with a fake op instead of a backend: a row's cells to a case
 * (in-place outputs, the memory cap, the skip hook), the timeout and the
 * contention retries of timing.c, and scaleout.c's sharding and row
 * records, none of which needs MPI.  Whole runs are tested end to end in
 * tests/cli/microbench/ and tests/mpi/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "replay/engine_internal.h"

static int nrun;

static int fake_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)c;
	(void)err;
	return 0;
}

static int fake_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)c;
	(void)err;
	nrun++;
	return 0;
}

static int slow_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	return fake_run(c, err);
}

static const struct perfdb_op_impl add_impl = { .name = "Add", .check = fake_check, .run = fake_run };

static int fake_time_run(const struct perfdb_op_impl *impl, struct perfdb_op_case *c, bool flush, double *us,
			 struct perfdb_err *err)
{
	(void)impl, (void)flush;
	*us = 1;
	return fake_run(c, err);
}
/* What an op is comes from its definition (src/ops/): DispatchFFNCombine is the collective one. */
static const struct perfdb_op_impl coll_impl = { .name = "DispatchFFNCombine", .check = fake_check,
						 .run = fake_run };

static bool fake_supports(const char *op)
{
	return strcmp(op, "Add") == 0 || strcmp(op, "DispatchFFNCombine") == 0;
}

static const struct perfdb_op_impl *fake_find(const char *op)
{
	return strcmp(op, "DispatchFFNCombine") == 0 ? &coll_impl : &add_impl;
}

static const struct perfdb_backend_i fake_backend = {
	.name = "fake", .supports_op = fake_supports, .find_op = fake_find,
};

static void load(struct perfdb_table *t, const char *name, const char *csv)
{
	struct perfdb_err err;
	perfdb_err_clear(&err);
	perfdb_table_init(t);
	assert_int_equal(perfdb_table_load_mem(t, name, csv, strlen(csv), &err), 0);
}

static const char *const row_csv =
	"Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats\n"
	"\"4,8\",DT_FLOAT16,ND,\"4,8\",DT_FLOAT16,ND\n";

/* The row's tensors and context; an in-place output is not counted against the cap. */
static void test_case_from_row_cap(void **state)
{
	(void)state;
	struct perfdb_table t;
	load(&t, "Add.csv", row_csv);
	struct perfdb_engine_opts o = { .threads = 3, .ep_size = 16, .row_max_bytes = 100 };
	struct perfdb_op_case c;
	struct case_cells cc;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	/* 64 bytes in, 64 out: over a 100-byte cap */
	assert_int_equal(case_from_row(&o, "Add", &add_impl, &t, 0, 2, &cc, &c, &err), -PERFDB_EINVAL);
	assert_non_null(strstr(err.msg, "Add: the row needs 0.0 GiB of tensors"));

	/* under a cap it fits: 64 bytes in, 64 out, the run's context on the case */
	o.row_max_bytes = 1000;
	perfdb_err_clear(&err);
	assert_int_equal(case_from_row(&o, "Add", &add_impl, &t, 0, 2, &cc, &c, &err), 0);
	assert_int_equal(c.out[0].alias_in, 0);
	assert_int_equal(perfdb_engine_case_bytes(&c), 128);
	assert_int_equal(c.in[0].bytes, 64);
	assert_int_equal(c.line, 2);
	assert_int_equal(c.threads, 3);
	assert_int_equal(c.ep_size, 16);
	assert_int_equal(c.nranks, 1);
	assert_string_equal(perfdb_case_cell(&c, "Input Shapes"), "4,8");
	assert_null(perfdb_case_cell(&c, "No Such Column"));

	/*
	 * ReshapeAndCacheNdKernel's definition: outputs 0 and 1 are inputs 2
	 * and 3 (the caches), so four (4,8) fp16 inputs of 64 bytes count and
	 * its outputs do not: 256 bytes, under a 300-byte cap.
	 */
	struct perfdb_table tc;
	load(&tc, "ReshapeAndCacheNdKernel.csv",
	     "Input Shapes,Input Data Types,Output Shapes,Output Data Types\n"
	     "\"4,8;4,8;4,8;4,8\",DT_FLOAT16;DT_FLOAT16;DT_FLOAT16;DT_FLOAT16,\"4,8;4,8\",DT_FLOAT16;DT_FLOAT16\n");
	struct perfdb_op_impl inplace = add_impl;
	inplace.name = "ReshapeAndCacheNdKernel";
	o.row_max_bytes = 300;
	perfdb_err_clear(&err);
	assert_int_equal(case_from_row(&o, "ReshapeAndCacheNdKernel", &inplace, &tc, 0, 2, &cc, &c, &err), 0);
	assert_int_equal(c.out[0].alias_in, 3);
	assert_int_equal(c.out[1].alias_in, 4);
	assert_int_equal(perfdb_engine_case_bytes(&c), 256);
	perfdb_table_release(&tc);
	perfdb_table_release(&t);
}

/* The skip hook sees the run's context; an op without one replays every row. */
static void test_case_skipped(void **state)
{
	(void)state;
	struct perfdb_table t;
	load(&t, "Add.csv", row_csv);
	struct perfdb_engine_opts o = { .ep_size = 8 };
	char why[32] = "";
	assert_false(case_skipped(&o, &add_impl, &t, 0, why, sizeof(why)));
	/* DispatchFFNCombine keeps rows of another EP Size than the run's */
	struct perfdb_table td;
	load(&td, "DispatchFFNCombine.csv", "Input Shapes,EP Size\n\"4,8\",4\n\"4,8\",8\n");
	char whyd[128] = "";
	assert_true(case_skipped(&o, &coll_impl, &td, 0, whyd, sizeof(whyd)));
	assert_string_equal(whyd, "EP Size 4 differs from the run's --dispatch-ffn-combine-ep-size 8");
	assert_false(case_skipped(&o, &coll_impl, &td, 1, whyd, sizeof(whyd)));
	perfdb_table_release(&td);
	perfdb_table_release(&t);
}

static struct perfdb_engine_opts timing_opts(void)
{
	/* no_sched: these test the adaptive stop and the probe's retries, which must not depend on
	 * the machine's load; the scheduler's judgement is tested live (tests/replay/contention_busy.sh) */
	return (struct perfdb_engine_opts){ .backend = &fake_backend, .repeat = 5, .rsd = 0.01, .budget_s = 0.001,
					    .timeout_s = 10, .contention_retries = 2, .no_sched = 1 };
}

static struct perfdb_op_case empty_case(void)
{
	struct perfdb_op_case c;
	memset(&c, 0, sizeof(c));
	c.op = "Add";
	c.def = perfdb_opdef_get("Add");
	return c;
}

/* At least 2 warm-up calls and `repeat` samples; a row that cannot have them by the timeout fails
 * after its second call, or its first when that alone is over the timeout. */
static void test_timing_samples_and_timeout(void **state)
{
	(void)state;
	struct perfdb_engine_opts o = timing_opts();
	struct perfdb_op_case c = empty_case();
	struct perfdb_engine_row row;
	memset(&row, 0, sizeof(row));
	struct perfdb_err err;
	perfdb_err_clear(&err);
	nrun = 0;
	assert_int_equal(timing_measure(&o, &add_impl, &c, NULL, 0, NULL, &row, &err), 0);
	/* repeat clean samples were taken; the robust statistics may leave out outliers
	 * (perfdb_stats_robust), which a loaded machine's scheduler makes of a no-op's timings */
	assert_true(row.samples + row.outliers >= 5);
	assert_true(row.samples >= 1);
	assert_true(nrun >= (int)(row.samples + row.outliers) + 2);
	assert_true(row.min <= row.median && row.min <= row.mean && row.mean > 0);
	assert_int_equal(row.retries, 0);

	struct perfdb_op_impl slow = add_impl;
	slow.run = slow_run;
	o.repeat = 1000;
	o.timeout_s = 0.01;
	perfdb_err_clear(&err);
	nrun = 0;
	/* a row that cannot fit stops after its second call (docs/replay.md "Timeouts"), not at the
	 * timeout: 2 ms a call, 1000 samples = 2 s against 0.01 s */
	assert_int_equal(timing_measure(&o, &slow, &c, NULL, 0, NULL, &row, &err), -PERFDB_EINVAL);
	assert_non_null(strstr(err.msg, "timed out: a call took"));
	assert_non_null(strstr(err.msg, "and 1000 samples would take at least"));
	assert_int_equal(nrun, 2);
	/* a first call alone over the timeout stops at once */
	o.timeout_s = 0.001;
	nrun = 0;
	perfdb_err_clear(&err);
	assert_int_equal(timing_measure(&o, &slow, &c, NULL, 0, NULL, &row, &err), -PERFDB_EINVAL);
	assert_int_equal(nrun, 1);
}

/*
 * Which rows are flushed between samples: ops whose inputs and outputs are
 * below 64 MiB, worked by hand on three tensors; a 36 MiB working set is
 * flushed too (it kept a third of itself in the L3 back to back), and a
 * compute-bound op as well, unless it keeps its operands cold itself (the
 * GEMMs' rotation) (docs/measuring.md "Working sets between one and two
 * L3s").
 */
static void test_timing_flushes(void **state)
{
	(void)state;
	struct perfdb_engine_opts o = timing_opts();
	o.flush = 1;
	struct perfdb_op_case c = empty_case();
	c.nin = 2;
	c.nout = 1;
	size_t *bytes[3] = { &c.in[0].bytes, &c.in[1].bytes, &c.out[0].bytes };
	const size_t mib = (size_t)1 << 20;
	const struct {
		size_t each;   /* bytes of each of the three tensors */
		int want;
	} cases[] = {
		{ 8 * mib, 1 },                   /* 24 MiB: below one L3 */
		{ 12 * mib, 1 },                  /* 36 MiB: between one and two */
		{ 20 * mib, 1 },                  /* 60 MiB */
		{ (64 * mib - 1) / 3, 1 },        /* just below 64 MiB */
		{ 64 * mib / 3 + 1, 0 },          /* 64 MiB and a few bytes: streams itself out */
		{ 32 * mib, 0 },                  /* 96 MiB */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int k = 0; k < 3; k++)
			*bytes[k] = cases[i].each;
		assert_int_equal(timing_flushes(&o, &add_impl, &c), cases[i].want);
	}
	for (int k = 0; k < 3; k++)
		*bytes[k] = 12 * mib;
	o.flush = 0;                              /* the run does not flush */
	assert_false(timing_flushes(&o, &add_impl, &c));
	o.flush = 1;
	c.def = perfdb_opdef_get("QuantBatchMatmulV3");   /* compute-bound: flushed all the same */
	assert_true(timing_flushes(&o, &add_impl, &c));
	struct perfdb_op_impl rotating = add_impl;
	rotating.cold_itself = 1;                 /* ops_matmul.c: its weights rotate instead */
	assert_false(timing_flushes(&o, &rotating, &c));
	struct perfdb_backend_i device = fake_backend;
	device.time_run = fake_time_run;          /* a device's own timing flushes its own caches */
	o.backend = &device;
	assert_false(timing_flushes(&o, &add_impl, &c));
}

/* Scripted probe readings against a reference of 50 GB/s: which measurement a retried row keeps. */
static void retried(const double *script, size_t n, double *gbs, int *retries)
{
	struct perfdb_engine_opts o = timing_opts();
	struct perfdb_op_case c = empty_case();
	struct perfdb_probe p;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_probe_init(&p, 0, &err), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(perfdb_probe_note(&p, 50), 0);
	p.script = script;
	p.nscript = n;
	struct perfdb_engine_row row;
	memset(&row, 0, sizeof(row));
	assert_int_equal(timing_measure(&o, &add_impl, &c, NULL, 0, &p, &row, &err), 0);
	*gbs = row.probe_gbs;
	*retries = row.retries;
	assert_int_equal(p.nrows, 4);   /* the kept reading joined the reference */
	assert_true(p.rows[3] == row.probe_gbs);
	perfdb_probe_release(&p);
}

static void test_timing_contention_retries(void **state)
{
	(void)state;
	double gbs;
	int retries;
	/* uncontended: measured once */
	retried((const double[]){ 48, 47 }, 2, &gbs, &retries);
	assert_true(gbs == 47);
	assert_int_equal(retries, 0);
	/* contended (30 < 40), then a better measurement that is not: kept, one retry */
	retried((const double[]){ 30, 31, 45, 46 }, 4, &gbs, &retries);
	assert_true(gbs == 45);
	assert_int_equal(retries, 1);
	/* contended every time: both retries spent, the best measurement kept */
	retried((const double[]){ 30, 30, 20, 20, 25, 25 }, 6, &gbs, &retries);
	assert_true(gbs == 30);
	assert_int_equal(retries, 2);
}

/* Rank 1 of 3: ordinary rows round-robin over every table's rows, collective tables whole. */
static void test_scaleout_share(void **state)
{
	(void)state;
	int fake_comm = 0;
	struct perfdb_engine_opts o = { .backend = &fake_backend, .comm = &fake_comm, .rank = 1, .nranks = 3 };
	struct perfdb_table tabs[2];
	load(&tabs[0], "Add.csv", "Input Shapes\n1\n2\n3\n4\n5\n");
	load(&tabs[1], "DispatchFFNCombine.csv", "Input Shapes\n1\n2\n");
	const char *names[2] = { "Add", "DispatchFFNCombine" };
	assert_false(scaleout_row_mine(&o, 0));
	assert_true(scaleout_row_mine(&o, 1));
	assert_true(scaleout_row_mine(&o, 4));
	assert_false(scaleout_table_collective(&o, "Add"));
	assert_true(scaleout_table_collective(&o, "DispatchFFNCombine"));
	assert_false(scaleout_table_collective(&o, "Mul"));
	assert_int_equal(scaleout_rank_share(&o, tabs, names, 2), 2 + 2);
	o.comm = NULL;   /* one process: every row */
	assert_true(scaleout_row_mine(&o, 0));
	perfdb_table_release(&tabs[0]);
	perfdb_table_release(&tabs[1]);
}

/* A row survives its record (what rank 0 gathers); separators in the reason become spaces. */
static void test_scaleout_row_record(void **state)
{
	(void)state;
	struct perfdb_engine_row w;
	memset(&w, 0, sizeof(w));
	w.op = "Add";
	w.line = 7;
	w.status = PERFDB_ENGINE_FAILED;
	w.resumed = 1;
	w.rank = 2;
	w.samples = 30;
	w.mean = 1.0 / 3;
	w.median = 2.5;
	w.min = 0.125;
	w.std = 1e-9;
	w.cpu_ratio = 0.75;
	w.probe_gbs = 41.5;
	w.retries = 2;
	w.threads = 5;
	snprintf(w.kernel, sizeof(w.kernel), "onednn:gemm:jit+f32");
	w.reason = "bad\x1fshape\x1e";
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	scaleout_pack_row(&b, &w);
	scaleout_pack_row(&b, &w);
	assert_int_equal(b.buf[b.len - 1], '\x1e');
	char *end = strchr(b.buf, '\x1e');
	assert_true(end && end - b.buf < (ptrdiff_t)b.len - 1);   /* one record each */
	*end = '\0';
	char *f = strchr(b.buf, '\x1f');
	assert_non_null(f);
	*f = '\0';
	assert_string_equal(b.buf, "Add");
	struct perfdb_engine_row r;
	memset(&r, 0, sizeof(r));
	assert_int_equal(scaleout_unpack_row(f + 1, &r), 0);
	assert_int_equal(r.status, PERFDB_ENGINE_FAILED);
	assert_int_equal(r.resumed, 1);
	assert_int_equal(r.rank, 2);
	assert_int_equal(r.samples, 30);
	assert_true(r.mean == w.mean && r.median == w.median && r.min == w.min && r.std == w.std);
	assert_true(r.cpu_ratio == w.cpu_ratio && r.probe_gbs == w.probe_gbs);
	assert_int_equal(r.retries, 2);
	assert_int_equal(r.threads, 5);
	assert_string_equal(r.kernel, "onednn:gemm:jit+f32");
	assert_string_equal(r.reason, "bad shape ");
	free(r.reason);
	perfdb_strbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_case_from_row_cap),
		cmocka_unit_test(test_case_skipped),
		cmocka_unit_test(test_timing_samples_and_timeout),
		cmocka_unit_test(test_timing_flushes),
		cmocka_unit_test(test_timing_contention_retries),
		cmocka_unit_test(test_scaleout_share),
		cmocka_unit_test(test_scaleout_row_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
