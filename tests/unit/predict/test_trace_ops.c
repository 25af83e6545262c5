/*
 * Unit tests: a trace's op calls for perfdb predict (src/predict/trace_ops.c,
 * docs/predict.md "The op sequence"): nesting by containment on a thread,
 * the step thread, and a kernel_details table's start and wait cells.
 * Expectations are read off the small inputs by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "predict/predict_internal.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

#define OP(name, tid, ts, dur) \
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":" #tid \
	",\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"Input Dims\":[[4,8]],\"Input type\":[\"float\"]}}"

static const char *table_of(const struct pred_trace *t, size_t i)
{
	static char buf[64];
	const char *f[PK_N];
	size_t len[PK_N];
	pred_key_fields(t, t->v[i].key, f, len);
	snprintf(buf, sizeof(buf), "%.*s", (int)len[PK_TABLE], f[PK_TABLE]);
	return buf;
}

/* Write text to a temporary trace file and read it into t. */
static void read_trace(const char *text, struct pred_trace *t)
{
	char path[] = "/tmp/perfdb-test-trace-XXXXXX.pt.trace.json";
	int fd = mkstemps(path, 14);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, text);
	struct perfdb_err err;
	assert_int_equal(pred_trace_read(path, t, &err), 0);
	unlink(path);
}

static void test_nesting(void **state)
{
	(void)state;
	char path[] = "/tmp/perfdb-test-trace-XXXXXX.pt.trace.json";
	int fd = mkstemps(path, 14);
	assert_true(fd >= 0);
	close(fd);
	/* file order is not time order; to and _to_copy start together (the
	 * longer contains the shorter); copy_ nests two deep; thread 2's one
	 * call (50 us) is shorter than thread 1's top-level time (60 + 30) */
	write_file(path, "{\"traceEvents\":[" OP("aten::copy_", 1, 70, 10) ","
		   OP("aten::to", 1, 65, 30) "," OP("aten::_to_copy", 1, 65, 20) ","
		   OP("aten::linear", 1, 0, 60) "," OP("aten::addmm", 1, 5, 50) ","
		   OP("aten::mul", 2, 0, 50) "]}");
	struct pred_trace t;
	struct perfdb_err err;
	assert_int_equal(pred_trace_read(path, &t, &err), 0);
	unlink(path);
	assert_int_equal(t.kind, PERFDB_PREDICT_TORCH_CPU);
	assert_int_equal(t.n, 6);
	/* calls keep file order, but for the conversions (to, _to_copy), whose
	 * rows wait for their thread to move past them (src/parse/trace_defer.h):
	 * copy_, linear, addmm, mul, then to and _to_copy at the trace's end */
	assert_string_equal(table_of(&t, 0), "aten.copy_");
	assert_string_equal(table_of(&t, 4), "aten.to");
	assert_string_equal(table_of(&t, 5), "aten._to_copy");
	assert_int_equal(t.v[0].parent, 5);     /* _to_copy */
	assert_int_equal(t.v[0].depth, 2);
	assert_int_equal(t.v[5].parent, 4);     /* to */
	assert_int_equal(t.v[4].parent, PRED_NONE);
	assert_int_equal(t.v[2].parent, 1);     /* addmm in linear */
	assert_int_equal(t.v[1].parent, PRED_NONE);
	assert_int_equal(t.v[3].parent, PRED_NONE);
	/* children lists */
	assert_int_equal(t.v[4].first_child, 5);
	assert_int_equal(t.v[5].next_sibling, PRED_NONE);
	assert_int_equal(t.v[1].first_child, 2);
	/* times: us from dur, ns from ts */
	assert_true(t.v[4].us == 30.0);
	assert_int_equal(t.v[4].ts, 65000);
	assert_int_equal(t.v[4].end, 95000);
	assert_int_equal(t.step_thread, t.v[1].thread);
	assert_true(t.v[3].thread != t.step_thread);
	pred_trace_release(&t);
}

/* Whole-us traces: a child may end 1 us past its parent (addmm ends at 61
 * in a linear that ends at 60) and is still its child; a call that starts
 * when the one before ends (mul at 61, after addmm's 61) is not inside it. */
static void test_nesting_rounded(void **state)
{
	(void)state;
	struct pred_trace t;
	read_trace("{\"traceEvents\":[" OP("aten::linear", 1, 0, 60) "," OP("aten::t", 1, 1, 2) ","
		   OP("aten::addmm", 1, 5, 56) "," OP("aten::mul", 1, 61, 10) "]}", &t);
	assert_int_equal(t.n, 4);
	assert_int_equal(t.v[0].parent, PRED_NONE);
	assert_int_equal(t.v[1].parent, 0);
	assert_int_equal(t.v[2].parent, 0);     /* addmm: 5..61 in linear 0..60 */
	assert_int_equal(t.v[2].depth, 1);
	assert_int_equal(t.v[3].parent, PRED_NONE);
	pred_trace_release(&t);
}

static void test_kernel_details(void **state)
{
	(void)state;
	char path[] = "/tmp/perfdb-test-kd-XXXXXX.csv";
	int fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, "Name,Type,Start Time(us),Duration(us),Wait Time(us),Input Shapes,"
		   "Input Data Types,Input Formats,Output Shapes\n"
		   "mm,MatMulV2,\"100.5\t\",10,0,\"\"\"8,16;16,4\"\"\",FLOAT;FLOAT,ND;ND,\"\"\"8,4\"\"\"\n"
		   "add,Add,112.5,3.5,2,\"\"\"8,4;8,4\"\"\",FLOAT;FLOAT,ND;ND,\"\"\"8,4\"\"\"\n"
		   "hcom,hcom_allReduce_,120,5,4.5,N/A,N/A,N/A,N/A\n");
	struct pred_trace t;
	struct perfdb_err err;
	assert_int_equal(pred_trace_read(path, &t, &err), 0);
	unlink(path);
	assert_int_equal(t.kind, PERFDB_PREDICT_KERNEL_DETAILS);
	assert_int_equal(t.n, 3);
	assert_string_equal(table_of(&t, 0), "MatMulV2");
	assert_int_equal(t.v[0].ts, 100500);    /* the tab Ascend pads with is trimmed */
	assert_true(t.v[1].wait_us == 2.0);
	assert_true(t.v[1].us == 3.5);
	assert_int_equal(t.v[1].line, 3);
	assert_false(t.v[1].no_shapes);
	assert_true(t.v[2].no_shapes);
	pred_trace_release(&t);
}

static void test_refusals(void **state)
{
	(void)state;
	struct pred_trace t;
	struct perfdb_err err;
	assert_int_equal(pred_trace_read("/nonexistent/x.pt.trace.json", &t, &err), -PERFDB_ENOENT);
	assert_non_null(strstr(err.msg, "trace not found"));
	char path[] = "/tmp/perfdb-test-ns-XXXXXX.pt.trace.json";
	int fd = mkstemps(path, 14);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\","
		   "\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":5,\"args\":{}}]}");
	assert_true(pred_trace_read(path, &t, &err) < 0);
	unlink(path);
	assert_non_null(strstr(err.msg, "record_shapes=True"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_nesting_rounded),
		cmocka_unit_test(test_kernel_details),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
