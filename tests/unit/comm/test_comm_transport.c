/*
 * The comm transports (src/backend/transport.h, docs/comm.md "Transports"):
 * the MPI transport runs every collective of the tables on one rank, and
 * the harness's method (src/comm/harness.h: order of the slots, the check,
 * the iteration count from the budget, failures) holds over any transport,
 * here a fake one whose call takes a fixed time.  MPI runs as a singleton
 * (MPI_COMM_SELF); no launcher is needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/harness.h"
#include "backend/transport.h"

/* ---- the MPI transport ------------------------------------------------ */

static void mpi_runs_every_collective(void **state)
{
	(void)state;
	struct perfdb_err err = { 0 };
	struct perfdb_comm_transport t;
	assert_int_equal(perfdb_comm_transport_open(&t, &perfdb_comm_transport_mpi, &err), 0);
	assert_string_equal(t.i->name, "mpi");
	assert_null(t.i->describe);
	for (int op = 0; op < PERFDB_COMM_NOPS; op++) {
		const struct perfdb_coll *coll = perfdb_coll_get((enum perfdb_comm_op)op);
		struct perfdb_comm_layout l;
		coll->layout(12, 1, &l);
		float send[16], recv[16];
		assert_true(l.send_elems <= 16 && l.recv_elems <= 16);
		for (size_t i = 0; i < 16; i++) {
			bool in_place = l.send_elems == 0;
			send[i] = in_place ? 0 : (float)coll->send_value(0, 1, i, l.count);
			recv[i] = in_place ? (float)coll->send_value(0, 1, i, l.count) : 99;
		}
		void *s = l.send_elems ? send : NULL;
		assert_int_equal(t.i->begin(t.ctx, MPI_COMM_SELF, s, l.send_elems * sizeof(float), recv,
					    l.recv_elems * sizeof(float), &err), 0);
		assert_int_equal(t.i->upload(t.ctx, &err), 0);
		double sec = -1;
		assert_int_equal(t.i->call(t.ctx, coll, PERFDB_COMM_FP32, l.count, &sec, &err), 0);
		assert_int_equal(t.i->download(t.ctx, &err), 0);
		assert_true(sec >= 0);
		for (size_t i = 0; i < l.recv_elems; i++)
			assert_true(recv[i] == (float)coll->expected(0, 1, i, l.count));
	}
	perfdb_comm_transport_release(&t);
	assert_null(t.i);
	perfdb_comm_transport_release(&t);   /* a released one again: nothing */
}

/* ---- the harness over a fake transport ------------------------------- */

struct fake {
	char log[1024];
	int fail_begin;          /* begin fails */
	int fail_call;           /* this call (1-based) fails; 0: none */
	int wrong;               /* the call leaves the receive buffer alone */
	int calls;
	const struct perfdb_coll *coll;
	void *recv;
	size_t recv_bytes;
	long n;
};

static void note(struct fake *f, const char *what)
{
	size_t w = strlen(f->log);
	snprintf(f->log + w, sizeof(f->log) - w, "%s%s", w ? " " : "", what);
}

static int fk_open(void **ctx, struct perfdb_err *err)
{
	(void)err;
	note(*ctx, "open");
	return 0;
}

static int fk_begin(void *ctx, MPI_Comm comm, void *send, size_t send_bytes, void *recv,
		    size_t recv_bytes, struct perfdb_err *err)
{
	(void)send, (void)send_bytes;
	struct fake *f = ctx;
	int n;
	MPI_Comm_size(comm, &n);
	f->n = n;
	f->recv = recv;
	f->recv_bytes = recv_bytes;
	note(f, "begin");
	return f->fail_begin ? perfdb_err_set(err, PERFDB_EIO, "fake: no buffers") : 0;
}

static int fk_upload(void *ctx, struct perfdb_err *err)
{
	(void)err;
	note(ctx, "upload");
	return 0;
}

static int fk_download(void *ctx, struct perfdb_err *err)
{
	(void)err;
	note(ctx, "download");
	return 0;
}

/* fp32 only: writes what the collective would have left, takes 10 ms. */
static int fk_call(void *ctx, const struct perfdb_coll *coll, enum perfdb_comm_dtype dt,
		   size_t count, double *seconds, struct perfdb_err *err)
{
	struct fake *f = ctx;
	assert_int_equal(dt, PERFDB_COMM_FP32);
	assert_ptr_equal(coll, f->coll);
	if (++f->calls == f->fail_call)
		return perfdb_err_set(err, PERFDB_EIO, "fake: call %d failed", f->calls);
	if (!f->wrong)
		for (size_t i = 0; i < f->recv_bytes / sizeof(float); i++)
			((float *)f->recv)[i] = (float)coll->expected(0, f->n, i, count);
	*seconds = 1e-2;
	if (f->calls <= 3)
		note(f, "call");
	return 0;
}

static void fk_release(void *ctx)
{
	note(ctx, "release");
}

static const struct perfdb_comm_transport_i fake_i = {
	.name = "fake", .label = "FAKE", .open = fk_open, .begin = fk_begin,
	.upload = fk_upload, .download = fk_download, .call = fk_call, .release = fk_release,
};

static int measure(struct fake *f, enum perfdb_comm_op op, struct perfdb_harness_result *res,
		   struct perfdb_err *err)
{
	const struct perfdb_harness_cfg cfg = {
		.warmup = 5, .iters = 50, .min_iters = 3, .budget = 0.1, .no_sched = true,   /* counts must not depend on the load */
	};
	f->coll = perfdb_coll_get(op);
	struct perfdb_comm_transport t = { .i = &fake_i, .ctx = f };
	assert_int_equal(fake_i.open(&t.ctx, err), 0);
	const struct perfdb_harness_case hc = {
		.coll = f->coll, .dtype = PERFDB_COMM_FP32, .message_bytes = 64,
		.comm = MPI_COMM_SELF, .transport = &t,
	};
	int rc = perfdb_harness_measure(&cfg, &hc, res, err);
	perfdb_comm_transport_release(&t);
	return rc;
}

static void harness_method_over_a_transport(void **state)
{
	(void)state;
	struct fake f = { .log = "" };
	struct perfdb_harness_result res;
	struct perfdb_err err = { 0 };
	assert_int_equal(measure(&f, PERFDB_COMM_ALL_GATHER, &res, &err), 0);
	/* begin, the check's upload-call-download, the zeros' upload, then calls */
	assert_string_equal(f.log, "open begin upload call download upload call call release");
	assert_int_equal(res.check, 1);
	assert_int_equal(res.bad_rank, -1);
	assert_false(res.alloc_failed);
	/* all 5 warm-ups (a quarter of 100 ms is not spent: the fake takes no
	 * time), then (100 ms - what was spent) / 10 ms: 9 timed iterations */
	assert_int_equal(res.warmup, 5);
	assert_int_equal(res.nsamples, 9);
	assert_int_equal(f.calls, 1 + 5 + 9);
	for (size_t i = 0; i < res.nsamples; i++)
		assert_true(res.samples[i] == 10000.0);   /* the transport's seconds, in µs */
	free(res.samples);
}

static void harness_check_sees_a_wrong_result(void **state)
{
	(void)state;
	struct fake f = { .log = "", .wrong = 1 };
	struct perfdb_harness_result res;
	struct perfdb_err err = { 0 };
	assert_int_equal(measure(&f, PERFDB_COMM_ALL_GATHER, &res, &err), 0);
	/* the receive buffer kept its sentinel: all 16 fp32 elements wrong */
	assert_int_equal(res.check, -1);
	assert_int_equal(res.bad, 16);
	assert_int_equal(res.bad_rank, 0);
	free(res.samples);
}

static void harness_begin_failure(void **state)
{
	(void)state;
	struct fake f = { .log = "", .fail_begin = 1 };
	struct perfdb_harness_result res;
	struct perfdb_err err = { 0 };
	/* a transport's failure is the group's, agreed, not an MPI failure */
	assert_int_equal(measure(&f, PERFDB_COMM_ALL_REDUCE, &res, &err), 0);
	assert_true(res.transport_failed);
	assert_string_equal(err.msg, "fake: no buffers");
	assert_string_equal(f.log, "open begin release");
	assert_null(res.samples);
}

static void harness_call_failure(void **state)
{
	(void)state;
	struct fake f = { .log = "", .fail_call = 4 };   /* a warm-up call */
	struct perfdb_harness_result res;
	struct perfdb_err err = { 0 };
	assert_int_equal(measure(&f, PERFDB_COMM_REDUCE_SCATTER, &res, &err), 0);
	assert_true(res.transport_failed);
	assert_string_equal(err.msg, "fake: call 4 failed");
	assert_null(res.samples);
	assert_int_equal(res.nsamples, 0);
}

static int mpi_up(void **state)
{
	(void)state;
	if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
		return -1;
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	return 0;
}

static int mpi_down(void **state)
{
	(void)state;
	return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mpi_runs_every_collective),
		cmocka_unit_test(harness_method_over_a_transport),
		cmocka_unit_test(harness_check_sees_a_wrong_result),
		cmocka_unit_test(harness_begin_failure),
		cmocka_unit_test(harness_call_failure),
	};
	return cmocka_run_group_tests(tests, mpi_up, mpi_down);
}
