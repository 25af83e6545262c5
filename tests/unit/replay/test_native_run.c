/*
 * Unit tests for src/replay/native_run.c, the native microbench stage
 * (docs/spec/replay.md §4, Decision 8; docs/replay.md "CPU backend"): the
 * stack-version lookup in describe() text, the status built from an engine
 * result, the rows refused for a low bandwidth reading and the per-row
 * records.  The whole run
 * is tested end to end in tests/cli/microbench/cpu_*.
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

#include "perfdb/fsio.h"
#include "replay/native_run.h"

static struct perfdb_engine_row row(const char *op, size_t line, enum perfdb_engine_status st,
				    const char *reason, double gbs)
{
	struct perfdb_engine_row r;
	memset(&r, 0, sizeof(r));
	r.op = (char *)op;
	r.table = (char *)op;
	r.line = line;
	r.status = st;
	r.reason = (char *)reason;
	r.samples = st == PERFDB_ENGINE_OK ? 3 : 0;
	r.mean = r.median = r.min = 1.5;
	r.cpu_ratio = 1.0;
	r.probe_gbs = gbs;
	return r;
}

/* Per op: success when no row failed and one ran, skipped when none ran, neither when one failed. */
static void test_status_build(void **state)
{
	(void)state;
	struct perfdb_engine_row rows[] = {
		row("Add", 2, PERFDB_ENGINE_OK, NULL, 0),
		row("Add", 3, PERFDB_ENGINE_SKIPPED, "kept", 0),
		row("MatMulV2", 2, PERFDB_ENGINE_FAILED, "bad shape", 0),
		row("MatMulV2", 3, PERFDB_ENGINE_OK, NULL, 0),
		row("RmsNorm", 2, PERFDB_ENGINE_SKIPPED, "unsupported", 0),
		row("Softmax", 2, PERFDB_ENGINE_OK, NULL, 0),
		row("Softmax", 5, PERFDB_ENGINE_CONTENDED, "contended: 9 of 10 timed blocks", 0),
	};
	struct perfdb_engine_result r;
	memset(&r, 0, sizeof(r));
	r.rows = rows;
	r.nrows = sizeof(rows) / sizeof(rows[0]);
	struct perfdb_status st;
	assert_int_equal(perfdb_native_status_build(&r, &st), 0);
	assert_int_equal(st.nsuccess, 1);
	assert_string_equal(st.success[0], "Add.csv");
	assert_int_equal(st.nskipped, 1);
	assert_string_equal(st.skipped[0], "RmsNorm.csv");
	assert_int_equal(st.nfailed, 1);
	assert_string_equal(st.failed[0].op, "MatMulV2.csv:2");
	assert_string_equal(st.failed[0].reason, "bad shape");
	/* a contended row: listed with its line and reason; its op is not a success */
	assert_int_equal(st.ncontended, 1);
	assert_string_equal(st.contended[0].op, "Softmax.csv:5");
	assert_string_equal(st.contended[0].reason, "contended: 9 of 10 timed blocks");
	perfdb_status_release(&st);
}

/* measures for rows[0..n), each row pointing at its own, as the engine leaves them */
static void give_measures(struct perfdb_engine_result *r)
{
	r->measures.v = calloc(r->nrows, sizeof(*r->measures.v));
	assert_non_null(r->measures.v);
	r->measures.cap = r->nrows;
	for (size_t i = 0; i < r->nrows; i++) {
		if (r->rows[i].status != PERFDB_ENGINE_OK)
			continue;
		struct perfdb_measure *m = &r->measures.v[r->measures.n++];
		char line[16];
		snprintf(line, sizeof(line), "%zu", r->rows[i].line);
		m->op = strdup(line);   /* the row's line, to tell the measures apart */
		m->mean = r->rows[i].mean;
		r->rows[i].measure = r->measures.n;
		r->nok++;
	}
}

static void take_rows(struct perfdb_engine_result *r)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].low_bandwidth)
			free(r->rows[i].reason);
	perfdb_measures_release(&r->measures);
}

/* The end-of-run judgement alone: --contention-retries 0 leaves no second pass. */
static int judge_no_retries(struct perfdb_engine_result *r)
{
	struct perfdb_engine_opts eo;
	memset(&eo, 0, sizeof(eo));
	struct perfdb_err err;
	perfdb_err_clear(&err);
	r->nagain = 9;
	int rc = perfdb_native_judge_bandwidth(&eo, r, &err);
	assert_int_equal(r->nagain, 0);
	return rc;
}

/*
 * No quiet figure: the reference is the median of the measured rows'
 * readings (40 of 40, 20, 44); 20 < 0.8 x 40 is refused, with its reason,
 * and its measure goes while the others' stay; a failed row is not judged.
 */
static void test_refuse_run_median(void **state)
{
	(void)state;
	struct perfdb_engine_row rows[] = {
		row("Add", 2, PERFDB_ENGINE_OK, NULL, 40.0),
		row("Add", 3, PERFDB_ENGINE_OK, NULL, 20.0),
		row("Add", 4, PERFDB_ENGINE_OK, NULL, 44.0),
		row("Add", 5, PERFDB_ENGINE_FAILED, "x", 1.0),
	};
	rows[1].retries = 2;
	struct perfdb_engine_result r;
	memset(&r, 0, sizeof(r));
	r.rows = rows;
	r.nrows = 4;
	r.nfailed = 1;
	give_measures(&r);
	assert_int_equal(judge_no_retries(&r), 0);
	assert_int_equal(rows[1].status, PERFDB_ENGINE_CONTENDED);
	assert_true(rows[1].low_bandwidth);
	assert_string_equal(rows[1].reason, "contended: measured with 20.0 GB/s of memory bandwidth against "
			    "the run's median 40.0 after 2 retries");
	assert_int_equal(rows[0].status, PERFDB_ENGINE_OK);
	assert_int_equal(rows[2].status, PERFDB_ENGINE_OK);
	assert_int_equal(rows[3].status, PERFDB_ENGINE_FAILED);
	assert_int_equal(r.nok, 2);
	assert_int_equal(r.ncontended, 1);
	assert_int_equal(r.measures.n, 2);
	assert_string_equal(r.measures.v[0].op, "2");
	assert_string_equal(r.measures.v[1].op, "4");
	assert_int_equal(rows[0].measure, 1);
	assert_int_equal(rows[1].measure, 0);
	assert_int_equal(rows[2].measure, 2);
	/* judged again (a second call): the refused row's reading still counts in the median */
	assert_int_equal(judge_no_retries(&r), 0);
	assert_int_equal(r.ncontended, 1);
	assert_int_equal(r.measures.n, 2);
	take_rows(&r);
}

/*
 * perfdb_native_judge_bandwidth measures a row again only in a one-process
 * run held to its own median, allowed retries, not stopped, and only a row
 * never retried: each case below breaks one of those, so the low row (20
 * against the median 40) is refused without a second pass.  The options
 * name no backend and no database: a second pass would fail the call.
 */
static void test_judge_no_second_pass(void **state)
{
	(void)state;
	int comm = 0;
	for (int k = 0; k < 5; k++) {
		struct perfdb_engine_row rows[] = {
			row("Add", 2, PERFDB_ENGINE_OK, NULL, 20.0),
			row("Add", 3, PERFDB_ENGINE_OK, NULL, 40.0),
			row("Add", 4, PERFDB_ENGINE_OK, NULL, 40.0),
		};
		struct perfdb_engine_result r;
		memset(&r, 0, sizeof(r));
		r.rows = rows;
		r.nrows = 3;
		struct perfdb_engine_opts eo;
		memset(&eo, 0, sizeof(eo));
		eo.contention_retries = 2;
		switch (k) {
		case 0: r.probe_quiet_gbs = 40.0; break;   /* held to the quiet figure from its start */
		case 1: eo.comm = &comm; break;            /* under mpirun */
		case 2: r.stopped = 1; break;              /* --fail-fast or a signal */
		case 3: eo.contention_retries = 0; break;
		case 4: rows[0].retries = 1; break;        /* retried already */
		}
		give_measures(&r);
		struct perfdb_err err;
		perfdb_err_clear(&err);
		r.nagain = r.nagain_written = 9;
		assert_int_equal(perfdb_native_judge_bandwidth(&eo, &r, &err), 0);
		assert_int_equal(r.nagain, 0);
		assert_int_equal(r.nagain_written, 0);
		assert_int_equal(rows[0].status, PERFDB_ENGINE_CONTENDED);
		assert_int_equal(rows[1].status, PERFDB_ENGINE_OK);
		assert_int_equal(r.measures.n, 2);
		take_rows(&r);
	}
}

/* This machine's quiet figure, 50, is the reference when there is one: 38 is refused, 45 is not. */
static void test_refuse_quiet(void **state)
{
	(void)state;
	struct perfdb_engine_row rows[] = {
		row("Add", 2, PERFDB_ENGINE_OK, NULL, 38.0),
		row("Add", 3, PERFDB_ENGINE_OK, NULL, 45.0),
		row("Add", 4, PERFDB_ENGINE_OK, NULL, 0.0),   /* not probed: never judged */
	};
	rows[0].retries = 1;
	struct perfdb_engine_result r;
	memset(&r, 0, sizeof(r));
	r.rows = rows;
	r.nrows = 3;
	r.probe_quiet_gbs = 50.0;
	give_measures(&r);
	assert_int_equal(judge_no_retries(&r), 0);
	assert_string_equal(rows[0].reason, "contended: measured with 38.0 GB/s of memory bandwidth against "
			    "this machine's quiet 50.0 after 1 retry");
	assert_int_equal(rows[1].status, PERFDB_ENGINE_OK);
	assert_int_equal(rows[2].status, PERFDB_ENGINE_OK);
	assert_int_equal(r.nok, 2);
	assert_int_equal(r.measures.n, 2);
	assert_string_equal(r.measures.v[0].op, "3");
	assert_int_equal(rows[1].measure, 1);
	assert_int_equal(rows[2].measure, 2);
	take_rows(&r);
}

/*
 * Under mpirun each rank is held to its own median: rank 0 reads 40, 40,
 * 30 (median 40: 30 < 32 refused), rank 1 reads 20, 20, 14 (median 20: 14
 * < 16 refused).  One median of all six (25) would have kept rank 0's 30
 * and refused only the 14.
 */
static void test_refuse_per_rank(void **state)
{
	(void)state;
	const double gbs[] = { 40, 40, 30, 20, 20, 14 };
	struct perfdb_engine_row rows[6];
	for (int i = 0; i < 6; i++) {
		rows[i] = row("Add", (size_t)i + 2, PERFDB_ENGINE_OK, NULL, gbs[i]);
		rows[i].rank = i / 3;
	}
	struct perfdb_engine_result r;
	memset(&r, 0, sizeof(r));
	r.rows = rows;
	r.nrows = 6;
	give_measures(&r);
	assert_int_equal(judge_no_retries(&r), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(rows[i].low_bandwidth, i == 2 || i == 5);
	assert_string_equal(rows[5].reason, "contended: measured with 14.0 GB/s of memory bandwidth against "
			    "its rank's median 20.0 after 0 retries");
	assert_int_equal(r.nok, 4);
	assert_int_equal(r.measures.n, 4);
	assert_string_equal(r.measures.v[2].op, "5");
	assert_string_equal(r.measures.v[3].op, "6");
	take_rows(&r);
}

/* The records CSV byte for byte: CRLF, Reason always quoted with inner quotes doubled. */
static void test_records_csv(void **state)
{
	(void)state;
	struct perfdb_engine_row rows[] = {
		row("Add", 2, PERFDB_ENGINE_OK, NULL, 40.0),
		row("MatMulV2", 7, PERFDB_ENGINE_FAILED, "dtype \"x\", unsupported", 0),
		row("Add", 3, PERFDB_ENGINE_CONTENDED, "contended: 4 of 5", 0),
	};
	/* the contended row kept 2 clean samples, mean 2, std 0.5: Noise 25.00% */
	rows[2].samples = 2;
	rows[2].mean = 2.0;
	rows[2].std = 0.5;
	rows[2].blocks = 5;
	rows[2].blocks_bad = 4;
	rows[2].discarded = 40;
	rows[2].outliers = 1;
	rows[1].retries = 2;
	rows[1].rank = 1;
	rows[0].threads = 4;
	snprintf(rows[0].kernel, sizeof(rows[0].kernel), "onednn:brg,x");   /* a comma: quoted */
	rows[1].threads = 4;
	struct perfdb_engine_result r;
	memset(&r, 0, sizeof(r));
	r.rows = rows;
	r.nrows = 3;
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_native_records_csv(&r, &b), 0);
	assert_string_equal(b.buf,
		"Operator,Line,Status,Samples,Mean(us),Median(us),Min(us),Std(us),Noise,CPU/Wall,"
		"Probe(GB/s),Retries,Blocks,Contended Blocks,Discarded,Outliers,Rank,Threads,Kernel Used,Reason\r\n"
		"Add,2,ok,3,1.500000,1.500000,1.500000,0.000000,0.00%,1.000,40.0,0,0,0,0,0,0,4,"
		"\"onednn:brg,x\",\"\"\r\n"
		"MatMulV2,7,failed,0,1.500000,1.500000,1.500000,0.000000,,1.000,0.0,2,0,0,0,0,1,4,,"
		"\"dtype \"\"x\"\", unsupported\"\r\n"
		"Add,3,contended,2,2.000000,1.500000,1.500000,0.500000,25.00%,1.000,0.0,0,5,4,40,1,0,0,,"
		"\"contended: 4 of 5\"\r\n");
	perfdb_strbuf_release(&b);
}

/* Both records land under <db>/reports/ with the run's counts; probe=off when it was off. */
static void test_write_records(void **state)
{
	(void)state;
	char db[] = "/tmp/perfdb-test-native-XXXXXX";
	assert_non_null(mkdtemp(db));
	char rep[64], p[128];
	snprintf(rep, sizeof(rep), "%s/reports", db);
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_mkdir_p(rep, &err), 0);
	struct perfdb_engine_row rows[] = { row("Add", 2, PERFDB_ENGINE_OK, NULL, 0) };
	struct perfdb_engine_result r;
	memset(&r, 0, sizeof(r));
	r.rows = rows;
	r.nrows = 1;
	r.nok = 1;
	assert_int_equal(perfdb_native_write_records(db, "t", "dev", "backend=cpu\n", &r, 1, &err), 0);
	snprintf(p, sizeof(p), "%s/microbench_env_t.txt", rep);
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_file_read_all(p, &b, &err), 0);
	assert_string_equal(b.buf, "backend=cpu\ndevice=dev\nrows_ok=1\nrows_failed=0\nrows_skipped=0\n"
				   "rows_contended=0\ninterrupted=0\nprobe=off\n");
	remove(p);
	snprintf(p, sizeof(p), "%s/microbench_rows_t.csv", rep);
	perfdb_strbuf_reset(&b);
	assert_int_equal(perfdb_file_read_all(p, &b, &err), 0);
	assert_non_null(strstr(b.buf, "\r\nAdd,2,ok,3,"));
	remove(p);
	perfdb_strbuf_release(&b);
	rmdir(rep);
	rmdir(db);
}

/* One thread count per database: only records with a thread count and measured rows count. */
static void put_record(const char *rep, const char *name, const char *text)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/%s", rep, name);
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_file_write_atomic(p, text, strlen(text), &err), 0);
}

static void test_check_threads(void **state)
{
	(void)state;
	char db[] = "/tmp/perfdb-test-threads-XXXXXX";
	assert_non_null(mkdtemp(db));
	char rep[64], p[128];
	snprintf(rep, sizeof(rep), "%s/reports", db);
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_native_check_threads(db, 4, &err), 0);   /* no reports yet */
	assert_int_equal(perfdb_mkdir_p(rep, &err), 0);
	put_record(rep, "microbench_env_a.txt", "backend=cpu\nthreads=2\nrows_ok=0\n");   /* measured nothing */
	put_record(rep, "microbench_env_b.txt", "backend=cuda\nrows_ok=5\n");              /* no thread count */
	put_record(rep, "microbench_env_c.txt", "backend=cpu\nthreads=4\nrows_ok=3\n");
	put_record(rep, "other_d.txt", "threads=8\nrows_ok=3\n");                          /* not a run record */
	assert_int_equal(perfdb_native_check_threads(db, 4, &err), 0);
	put_record(rep, "microbench_env_e.txt", "threads=8\nrows_ok=1\n");
	put_record(rep, "microbench_env_f.txt", "threads=6\nrows_ok=1\n");
	assert_int_equal(perfdb_native_check_threads(db, 4, &err), -PERFDB_EINVAL);
	assert_non_null(strstr(err.msg, "--threads 6 (reports/microbench_env_f.txt)"));   /* the latest */
	assert_non_null(strstr(err.msg, "this run measures with --threads 4"));
	const char *names[] = { "a", "b", "c", "e", "f" };
	for (size_t i = 0; i < 5; i++) {
		snprintf(p, sizeof(p), "%s/microbench_env_%s.txt", rep, names[i]);
		remove(p);
	}
	snprintf(p, sizeof(p), "%s/other_d.txt", rep);
	remove(p);
	rmdir(rep);
	rmdir(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_build),
		cmocka_unit_test(test_refuse_run_median),
		cmocka_unit_test(test_refuse_quiet),
		cmocka_unit_test(test_refuse_per_rank),
		cmocka_unit_test(test_judge_no_second_pass),
		cmocka_unit_test(test_records_csv),
		cmocka_unit_test(test_write_records),
		cmocka_unit_test(test_check_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
