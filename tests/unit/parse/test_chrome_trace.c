/*
 * Unit tests for src/parse/chrome_trace.c: PyTorch profiler Chrome traces
 * to kernel rows (docs/spec/parse.md Decision 6; cell conventions of §2 and
 * src/parse/chrome_trace.h).
 *
 * Fixtures (tests/data/torch_trace/, found through $PERFDB_TEST_DATA):
 *   cpu_block.pt.trace.json  recorded with torch.profiler (record_trace.py)
 *   cpu_block.legacy.json    the same run's legacy (non-Kineto) export
 *   gpu_minimal.json         a hand-made CUDA trace in Kineto's layout
 * Every expected value below was read from the JSON by hand (python's json
 * module in a shell), not produced by this reader.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "parse/chrome_trace.h"

/* ---- a sink that keeps copies of the rows ------------------------------ */

enum { F_TYPE, F_NAME, F_STATE, F_CORE, F_INS, F_INT, F_INF, F_OUTS, F_OUTT, F_OUTF,
       F_DUR, NF };

struct rec {
	char *f[NF];
	const char *file;
	size_t line;
};

struct rows {
	struct rec *v;
	size_t n, cap;
	size_t fail_at;  /* 1-based row at which the sink fails; 0 = never */
};

static char *dup_span(struct perfdb_span s)
{
	char *p = malloc(s.len + 1);
	assert_non_null(p);
	if (s.len)
		memcpy(p, s.p, s.len);
	p[s.len] = '\0';
	return p;
}

static int keep_row(void *ctx, const struct perfdb_kernel_row *row, struct perfdb_err *err)
{
	struct rows *r = ctx;
	if (r->fail_at && r->n + 1 == r->fail_at)
		return perfdb_err_set(err, PERFDB_EIO, "sink refused row %zu", r->n + 1);
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
		assert_non_null(r->v);
	}
	for (size_t k = 0; k < PERFDB_NCOUNTERS; k++)
		assert_int_equal(row->counters[k].len, 0);
	struct rec *x = &r->v[r->n++];
	const struct perfdb_span s[NF] = {
		row->type, row->name, row->op_state, row->accel_core, row->in_shapes,
		row->in_dtypes, row->in_formats, row->out_shapes, row->out_dtypes,
		row->out_formats, row->duration,
	};
	for (int k = 0; k < NF; k++)
		x->f[k] = dup_span(s[k]);
	x->file = row->file;
	x->line = row->line;
	return 0;
}

static void rows_free(struct rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		for (int k = 0; k < NF; k++)
			free(r->v[i].f[k]);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static struct perfdb_row_sink sink_of(struct rows *r)
{
	return (struct perfdb_row_sink){ .row = keep_row, .ctx = r };
}

static const char *fixture(const char *name)
{
	static char path[4096];
	const char *dir = getenv("PERFDB_TEST_DATA");
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/torch_trace/%s", dir, name);
	return path;
}

/*
 * Check one row's cells; OP State and counters are always empty.  The
 * output cells are what aten's rules give for the inputs (aten_shapes.h),
 * derived by hand at each call; check_row: an op with no such rule, whose
 * output shapes are the quoted empty list.
 */
static void check_row_out(const struct rec *x, const char *type, const char *core,
			  const char *shapes, const char *dtypes, const char *formats,
			  const char *dur, const char *oshapes, const char *odtypes)
{
	assert_string_equal(x->f[F_TYPE], type);
	assert_string_equal(x->f[F_NAME], type);
	assert_string_equal(x->f[F_CORE], core);
	assert_string_equal(x->f[F_INS], shapes);
	assert_string_equal(x->f[F_INT], dtypes);
	assert_string_equal(x->f[F_INF], formats);
	assert_string_equal(x->f[F_DUR], dur);
	assert_string_equal(x->f[F_STATE], "");
	assert_string_equal(x->f[F_OUTS], oshapes);
	assert_string_equal(x->f[F_OUTT], odtypes);
	assert_string_equal(x->f[F_OUTF], odtypes[0] ? "ND" : "");
	assert_int_equal(x->line, 0);
}

static void check_row(const struct rec *x, const char *type, const char *core,
		      const char *shapes, const char *dtypes, const char *formats,
		      const char *dur)
{
	check_row_out(x, type, core, shapes, dtypes, formats, dur, "\"\"", "");
}

/* ---- the recorded CPU trace -------------------------------------------- */

/* Decision 6: cpu_op events with Input Dims become CPU rows, every op kept
 * (475 events: 470 cpu_ops, 3 metadata, the span, the window end). */
static void test_cpu_trace_counts(void **state)
{
	(void)state;
	struct rows cpu = { 0 }, gpu = { 0 };
	struct perfdb_row_sink cs = sink_of(&cpu), gs = sink_of(&gpu);
	struct perfdb_chrome_trace_info info;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	const char *path = fixture("cpu_block.pt.trace.json");
	assert_int_equal(perfdb_chrome_trace_read(path, NULL, &cs, &gs, &info, &err), 0);
	assert_int_equal(info.events, 475);
	assert_int_equal(info.cpu_ops, 470);
	assert_int_equal(info.cpu_rows, 470);
	assert_int_equal(info.cpu_ops_no_shapes, 0);
	assert_int_equal(info.kernels, 0);
	assert_int_equal(info.kernels_unmatched, 0);
	assert_int_equal(info.legacy_events, 0);
	assert_int_equal(info.bad_events, 0);
	assert_string_equal(info.gpu_name, "");
	assert_int_equal(cpu.n, 470);
	assert_int_equal(gpu.n, 0);
	assert_string_equal(cpu.v[0].file, path);

	/* Sum of every "dur" (all integers in this torch 1.13 recording). */
	long long sum = 0;
	size_t mm = 0, addmm = 0;
	for (size_t i = 0; i < cpu.n; i++) {
		sum += atoll(cpu.v[i].f[F_DUR]);
		assert_string_equal(cpu.v[i].f[F_CORE], "CPU");
		mm += strcmp(cpu.v[i].f[F_TYPE], "aten.mm") == 0;
		addmm += strcmp(cpu.v[i].f[F_TYPE], "aten.addmm") == 0;
	}
	assert_int_equal(sum, 1211);
	assert_int_equal(mm, 12);
	assert_int_equal(addmm, 2);
	rows_free(&cpu);
	rows_free(&gpu);
}

/* chrome_trace.h "Input cells": slot per input, empty slots kept, literal
 * quotes on the shape cell, torch dtype spellings, ND per tensor slot.
 * Row numbers are the ordinals of the cpu_op events in the file, but for a
 * conversion (to, _to_copy), whose row comes once its thread moved past it
 * (docs/chrome_trace.md "Conversions"): the trace opens with to and
 * _to_copy around empty_strided, so that is row 0, not 2. */
static void test_cpu_trace_rows(void **state)
{
	(void)state;
	struct rows cpu = { 0 };
	struct perfdb_row_sink cs = sink_of(&cpu);
	struct perfdb_err err;
	assert_int_equal(perfdb_chrome_trace_read(fixture("cpu_block.pt.trace.json"), NULL, &cs,
						  NULL, NULL, &err), 0);
	assert_int_equal(cpu.n, 470);
	/* [[], [], [], [], [], []] / ["", "", "Scalar", "Scalar", "", "Scalar"] */
	check_row(&cpu.v[0], "aten.empty_strided", "CPU", "\";;;;;\"", ";;;;;", ";;;;;", "2");
	/* the first to (bf16 (8,64)) after its copy_, whose dst is float: its output */
	check_row_out(&cpu.v[2], "aten.to", "CPU", "\"8,64;;;;\"", "DT_BF16;;;;", "ND;;;;", "35",
		      "\"8,64\"", "FLOAT");
	check_row_out(&cpu.v[3], "aten._to_copy", "CPU", "\"8,64;;;;;;\"", "DT_BF16;;;;;;", "ND;;;;;;",
		      "28", "\"8,64\"", "FLOAT");
	/* [[8, 64], [], [], [], [8, 1]] / ["float", "", "Scalar", "Scalar", "float"] */
	check_row(&cpu.v[8], "aten.sum", "CPU", "\"8,64;;;;8,1\"", "FLOAT;;;;FLOAT",
		  "ND;;;;ND", "10");
	/* [[8, 1], [], []] / ["float", "double", "Scalar"]: slot 2 is a 0-d double */
	check_row_out(&cpu.v[20], "aten.add", "CPU", "\"8,1;;\"", "FLOAT;DOUBLE;",
		      "ND;ND;", "5", "\"8,1\"", "FLOAT");   /* (8,1) + a 0-d: (8,1), input 0's dtype */
	/* [[8, 64], [64, 64], []] / ["c10::BFloat16", "c10::BFloat16", ""] */
	check_row_out(&cpu.v[32], "aten.linear", "CPU", "\"8,64;64,64;\"", "DT_BF16;DT_BF16;",
		      "ND;ND;", "30", "\"8,64\"", "DT_BF16");   /* x (8,64), weight (N=64,K=64) */
	/* [[], [], [], [], []] / ["", "Scalar", "", "", "Scalar"] */
	check_row(&cpu.v[117], "aten.ones", "CPU", "\";;;;\"", ";;;;", ";;;;", "8");
	/* [[8, 8], []] / ["bool", "Scalar"] */
	check_row_out(&cpu.v[120], "aten.triu", "CPU", "\"8,8;\"", "BOOL;", "ND;", "2", "\"8,8\"", "BOOL");
	/* [[4, 8, 8], [8, 8], []] / ["c10::BFloat16", "bool", "Scalar"] */
	check_row_out(&cpu.v[121], "aten.masked_fill", "CPU", "\"4,8,8;8,8;\"", "DT_BF16;BOOL;",
		      "ND;ND;", "16", "\"4,8,8\"", "DT_BF16");
	/* [[64], [8, 64], [64, 64], [], []] / 3 x "c10::BFloat16", 2 x "Scalar" */
	check_row_out(&cpu.v[194], "aten.addmm", "CPU", "\"64;8,64;64,64;;\"",
		      "DT_BF16;DT_BF16;DT_BF16;;", "ND;ND;ND;;", "39", "\"8,64\"", "DT_BF16");
	rows_free(&cpu);
}

/* Debian's torch (no Kineto) exports a bare array of uncategorised "X"
 * events without args: read, counted as legacy, no rows. */
static void test_legacy_export(void **state)
{
	(void)state;
	struct rows cpu = { 0 };
	struct perfdb_row_sink cs = sink_of(&cpu);
	struct perfdb_chrome_trace_info info;
	struct perfdb_err err;
	assert_int_equal(perfdb_chrome_trace_read(fixture("cpu_block.legacy.json"), NULL, &cs, NULL,
						  &info, &err), 0);
	assert_int_equal(info.events, 468);
	assert_int_equal(info.legacy_events, 468);
	assert_int_equal(info.cpu_ops, 0);
	assert_int_equal(cpu.n, 0);
	rows_free(&cpu);
}

/* ---- the GPU fixture ---------------------------------------------------- */

#define GEMM "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_" \
	     "execute_segment_k_off_kernel__5x_cublas"

/* Kernels joined correlation -> launch -> External id -> cpu_op; 37 events:
 * 11 cpu_ops, 7 kernels (triton under a user_annotation and NCCL without a
 * launch stay unmatched), the memcpy is not a kernel. */
static void test_gpu_trace(void **state)
{
	(void)state;
	struct rows cpu = { 0 }, gpu = { 0 };
	struct perfdb_row_sink cs = sink_of(&cpu), gs = sink_of(&gpu);
	struct perfdb_chrome_trace_info info;
	struct perfdb_err err;
	struct perfdb_chrome_trace_opts per_kernel = { .per_kernel = 1 };
	assert_int_equal(perfdb_chrome_trace_read(fixture("gpu_minimal.json"), &per_kernel, &cs, &gs,
						  &info, &err), 0);
	assert_int_equal(info.events, 37);
	assert_int_equal(info.cpu_ops, 11);
	assert_int_equal(info.cpu_rows, 11);
	assert_int_equal(info.kernels, 7);
	assert_int_equal(info.activities, 8);   /* and one gpu_memcpy */
	assert_int_equal(info.kernels_unmatched, 2);
	assert_int_equal(info.bad_events, 0);
	assert_string_equal(info.gpu_name, "NVIDIA H200");
	assert_int_equal(cpu.n, 11);
	assert_int_equal(gpu.n, 7);

	check_row(&gpu.v[0], GEMM, "GPU", "\"64;8,64;64,64;;\"", "DT_BF16;DT_BF16;DT_BF16;;",
		  "ND;ND;ND;;", "6.144");
	/* aten::cat's tensor list [[8, 64], [8, 64]] is flattened, its type kept */
	check_row(&gpu.v[1],
		  "void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig"
		  "<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 2, 128, 1>"
		  "(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous "
		  "namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::"
		  "OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::"
		  "TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
		  "GPU", "\"8,64;8,64;\"", "TensorList;TensorList;", "ND;ND;", "2.368");
	/* launched inside aten::_softmax (External id 31), not aten::softmax */
	check_row(&gpu.v[2],
		  "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, "
		  "float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>"
		  "(c10::BFloat16*, c10::BFloat16 const*, int)",
		  "GPU", "\"4,8,8;;\"", "DT_BF16;;", "ND;;", "3.2");
	assert_string_equal(gpu.v[3].f[F_INS], "\"8,128\"");
	assert_string_equal(gpu.v[3].f[F_DUR], "1.856");
	/* op calls first, in op order; kernels that reach no op after them */
	check_row(&gpu.v[4], GEMM, "GPU", "\"64;8,64;64,64;;\"", "DT_BF16;DT_BF16;DT_BF16;;",
		  "ND;ND;ND;;", "6.08");
	check_row(&gpu.v[5], "triton_poi_fused_mul_silu_0", "GPU", "\"\"", "", "", "1.5");
	check_row(&gpu.v[6], "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage"
		  "<4096ul>)", "GPU", "\"\"", "", "", "18.432");

	/* CPU rows keep real-valued durations too: aten::linear 40.512 */
	check_row_out(&cpu.v[0], "aten.linear", "CPU", "\"8,64;64,64;64\"",
		      "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND", "40.512", "\"8,64\"", "DT_BF16");
	/* ["c10::BFloat16", "ScalarList", "ScalarList", ""] with dims [[64,64],[],[],[]] */
	check_row(&cpu.v[3], "aten.as_strided", "CPU", "\"64,64;;;\"", "DT_BF16;;;", "ND;;;",
		  "0.921");
	rows_free(&cpu);
	rows_free(&gpu);
}

static int read_str(const char *json, struct rows *cpu, struct perfdb_chrome_trace_info *info,
		    struct perfdb_err *err)
{
	struct perfdb_row_sink cs = sink_of(cpu);
	perfdb_err_clear(err);
	return perfdb_chrome_trace_read_mem("t.json", json, strlen(json), NULL, &cs, NULL, info, err);
}

/* A top-level array of events is a Chrome trace too. */
static void test_array_of_events(void **state)
{
	(void)state;
	struct rows cpu = { 0 };
	struct perfdb_chrome_trace_info info;
	struct perfdb_err err;
	assert_int_equal(read_str("[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\","
				  "\"ts\":\"100.5\",\"dur\":11,\"args\":{\"Input Dims\":[[4,16]],"
				  "\"Input type\":[\"float\"]}}]", &cpu, &info, &err), 0);
	assert_int_equal(cpu.n, 1);
	check_row_out(&cpu.v[0], "aten.relu", "CPU", "\"4,16\"", "FLOAT", "ND", "11", "\"4,16\"", "FLOAT");
	rows_free(&cpu);
}

/*
 * Conversions (docs/chrome_trace.md "Conversions"): to and _to_copy take the
 * dtype of the copy_ inside them, whether the file lists it after them or,
 * out of time order, before; a to without a copy_ (already the dtype) and a
 * copy_ on another thread give nothing.  Held rows come once their thread
 * moves past them, in arrival order.
 */
#define CONV(name, tid, ts, dur, dims, types) \
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":" #tid \
	",\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"Input Dims\":" dims ",\"Input type\":" types "}}"
static void test_conversions(void **state)
{
	(void)state;
	struct rows cpu = { 0 };
	struct perfdb_chrome_trace_info info;
	struct perfdb_err err;
	assert_int_equal(read_str("[" CONV("aten::to", 1, 10, 30, "[[2,3],[],[],[],[]]",
					      "[\"c10::BFloat16\",\"Scalar\",\"Scalar\",\"Scalar\",\"\"]") ","
				  CONV("aten::copy_", 1, 15, 5, "[[2,3],[2,3],[]]",
				       "[\"float\",\"c10::BFloat16\",\"Scalar\"]") ","
				  CONV("aten::copy_", 2, 50, 5, "[[2,3],[2,3],[]]",
				       "[\"c10::Half\",\"float\",\"Scalar\"]") ","
				  CONV("aten::copy_", 1, 61, 2, "[[4],[4],[]]",
				       "[\"long int\",\"float\",\"Scalar\"]") ","
				  CONV("aten::_to_copy", 1, 60, 5, "[[4],[],[],[],[],[],[]]",
				       "[\"float\",\"Scalar\",\"\",\"\",\"\",\"Scalar\",\"\"]") ","
				  CONV("aten::to", 2, 49, 10, "[[2,3],[],[],[],[]]",
				       "[\"float\",\"Scalar\",\"Scalar\",\"Scalar\",\"\"]") ","
				  CONV("aten::to", 1, 70, 1, "[[4],[],[],[],[]]",
				       "[\"float\",\"Scalar\",\"Scalar\",\"Scalar\",\"\"]") ","
				  CONV("aten::relu", 1, 80, 1, "[[4]]", "[\"float\"]") "]", &cpu, &info, &err), 0);
	assert_int_equal(cpu.n, 8);
	/* file order: copy_ (t1), copy_ (t2), copy_ (t1); the first to waits for t1's copy_ at
	 * 61; _to_copy (60..65), listed after its copy_, takes it from the copies seen */
	/* copy_'s output is its self (aten's rule) */
	check_row_out(&cpu.v[0], "aten.copy_", "CPU", "\"2,3;2,3;\"", "FLOAT;DT_BF16;", "ND;ND;", "5",
		      "\"2,3\"", "FLOAT");
	check_row_out(&cpu.v[1], "aten.copy_", "CPU", "\"2,3;2,3;\"", "FLOAT16;FLOAT;", "ND;ND;", "5",
		      "\"2,3\"", "FLOAT16");
	check_row_out(&cpu.v[2], "aten.to", "CPU", "\"2,3;;;;\"", "DT_BF16;;;;", "ND;;;;", "30",
		      "\"2,3\"", "FLOAT");
	check_row_out(&cpu.v[3], "aten.copy_", "CPU", "\"4;4;\"", "INT64;FLOAT;", "ND;ND;", "2",
		      "\"4\"", "INT64");
	/* _to_copy (60..65), listed after its copy_ (61..63), leaves when t1's to at 70 comes */
	check_row_out(&cpu.v[4], "aten._to_copy", "CPU", "\"4;;;;;;\"", "FLOAT;;;;;;", "ND;;;;;;", "5",
		      "\"4\"", "INT64");
	/* to without a copy_ (70..71): no output; it leaves when relu at 80 comes */
	check_row(&cpu.v[5], "aten.to", "CPU", "\"4;;;;\"", "FLOAT;;;;", "ND;;;;", "1");
	check_row_out(&cpu.v[6], "aten.relu", "CPU", "\"4\"", "FLOAT", "ND", "1", "\"4\"", "FLOAT");
	/* t2's to (49..59) contains t2's copy_ (50..55) listed before it; nothing of t2
	 * comes after it, so it leaves at the trace's end */
	check_row_out(&cpu.v[7], "aten.to", "CPU", "\"2,3;;;;\"", "FLOAT;;;;", "ND;;;;", "10",
		      "\"2,3\"", "FLOAT16");
	rows_free(&cpu);
}

/* Events we do not use may lack anything; cpu_ops without shapes count. */
static void test_odd_events(void **state)
{
	(void)state;
	struct rows cpu = { 0 };
	struct perfdb_chrome_trace_info info;
	struct perfdb_err err;
	assert_int_equal(read_str(
		"{\"traceEvents\": ["
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"args\":null},"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"ts\":1,\"dur\":1},"
		"{\"ph\":\"M\",\"name\":\"process_name\"},"
		"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"u\"},"
		"{\"ph\":\"s\",\"cat\":\"ac2g\",\"id\":\"x\"},"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c\",\"ts\":2,\"dur\":3,\"args\":{\"Input Dims\":[]}},"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"f\",\"ts\":2,\"dur\":\"7\","
		" \"args\":{\"Input Dims\":[[3],[]],\"Input type\":[\"my;stery\",\"c10::Half\"]}},"
		"{\"ph\":\"B\",\"cat\":\"cpu_op\",\"name\":\"g\",\"args\":{\"Input Dims\":[[1]]}}"
		"]}", &cpu, &info, &err), 0);
	assert_int_equal(info.events, 8);
	assert_int_equal(info.cpu_ops, 4);
	assert_int_equal(info.cpu_ops_no_shapes, 2);
	assert_int_equal(info.bad_events, 1);   /* the flow without an integer id */
	assert_int_equal(info.activities, 0);
	assert_int_equal(cpu.n, 2);
	check_row(&cpu.v[0], "c", "CPU", "\"\"", "", "", "3");
	/* unknown dtype of a tensor kept verbatim but for ";"; a 0-d c10::Half;
	 * a string dur is read as its text */
	check_row(&cpu.v[1], "f", "CPU", "\"3;\"", "my_stery;FLOAT16", "ND;ND", "7");
	rows_free(&cpu);
}

/* Missing or mistyped fields of the events used: event index and offset. */
static void test_bad_events(void **state)
{
	(void)state;
	static const struct {
		const char *events, *msg;
	} cases[] = {
		{ "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"dur\":1}",
		  "t.json: event #0 (ending at byte 60): cpu_op event: \"ts\" is missing" },
		{ "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":true}",
		  "t.json: event #0 (ending at byte 70): kernel event: \"dur\" is not a non-negative number" },
		{ "17", "t.json: event #0 (ending at byte 18): not an object" },
		{ "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":1,\"dur\":1},[1]",
		  "t.json: event #1 (ending at byte 71): not an object" },
		{ "{\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":1,\"dur\":1}",
		  "t.json: event #0 (ending at byte 56): kernel event: \"name\" is missing" },
		{ "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"ts\":1,\"args\":{\"correlation\":\"x\"}}",
		  "t.json: event #0 (ending at byte 81): cuda_runtime event: \"correlation\" is not an integer" },
		{ "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"d\",\"ts\":1,\"dur\":1,"
		  "\"args\":{\"Input Dims\":[[1.5]]}}",
		  "t.json: event #0 (ending at byte 97): cpu_op \"d\": \"Input Dims\" is not a list of "
		  "integer lists" },
		{ "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"e\",\"ts\":1,\"dur\":1,"
		  "\"args\":{\"Input Dims\":[[[2],3]]}}",
		  "t.json: event #0 (ending at byte 99): cpu_op \"e\": \"Input Dims\" is not a list of "
		  "integer lists" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char doc[512];
		snprintf(doc, sizeof(doc), "{\"traceEvents\":[%s]}", cases[i].events);
		struct rows cpu = { 0 };
		struct perfdb_err err;
		assert_int_equal(read_str(doc, &cpu, NULL, &err), -PERFDB_EPARSE);
		assert_string_equal(err.msg, cases[i].msg);
		rows_free(&cpu);
	}
}

static void test_not_a_trace(void **state)
{
	(void)state;
	struct rows cpu = { 0 };
	struct perfdb_err err;
	assert_int_equal(read_str("\"hello\"", &cpu, NULL, &err), -PERFDB_EPARSE);
	assert_string_equal(err.msg, "t.json: not a Chrome trace: the top level is not an object "
			    "with \"traceEvents\" or an array of events");
	assert_int_equal(read_str("{\"events\": []}", &cpu, NULL, &err), -PERFDB_EPARSE);
	assert_string_equal(err.msg, "t.json: not a Chrome trace: no \"traceEvents\" array");
	assert_int_equal(read_str("{\"traceEvents\": {}}", &cpu, NULL, &err), -PERFDB_EPARSE);
	assert_string_equal(err.msg,
			    "t.json: not a Chrome trace: \"traceEvents\" is an object, not an array");
	assert_int_equal(read_str("", &cpu, NULL, &err), -PERFDB_EPARSE);
	assert_string_equal(err.msg, "t.json: empty file");
	assert_int_equal(cpu.n, 0);
}

/* yajl's reason with the byte offset where the JSON went wrong. */
static void test_invalid_json(void **state)
{
	(void)state;
	struct rows cpu = { 0 };
	struct perfdb_err err;
	assert_int_equal(read_str("{\"traceEvents\": [}", &cpu, NULL, &err), -PERFDB_EPARSE);
	assert_non_null(strstr(err.msg, "t.json: invalid JSON at byte 18: "));
	/* truncated: the offset is the end of the data */
	assert_int_equal(read_str("{\n  \"traceEvents\": [\n", &cpu, NULL, &err), -PERFDB_EPARSE);
	assert_non_null(strstr(err.msg, "t.json: invalid JSON at byte 21: "));
	assert_non_null(strstr(err.msg, "premature EOF"));
	assert_int_equal(cpu.n, 0);
}

/* gzip is told by its magic bytes; a cut gzip stream is an error. */
static void test_gzip(void **state)
{
	(void)state;
	/* gzip -9n of {"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::relu",
	 * "ts":1,"dur":11,"args":{"Input Dims":[[4,16]],"Input type":["float"]}}]} */
	static const char json[] =
		"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\","
		"\"ts\":1,\"dur\":11,\"args\":{\"Input Dims\":[[4,16]],\"Input type\":[\"float\"]}}]}";
	unsigned char gz[512];
	size_t gzlen = 0;
	{
		/* compress with zlib here rather than trust a pasted blob */
		z_stream z;
		memset(&z, 0, sizeof(z));
		assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
		z.next_in = (unsigned char *)(uintptr_t)json;
		z.avail_in = (uInt)strlen(json);
		z.next_out = gz;
		z.avail_out = sizeof(gz);
		assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
		gzlen = sizeof(gz) - z.avail_out;
		deflateEnd(&z);
	}
	assert_int_equal(gz[0], 0x1f);
	struct rows cpu = { 0 };
	struct perfdb_row_sink cs = sink_of(&cpu);
	struct perfdb_chrome_trace_info info;
	struct perfdb_err err;
	assert_int_equal(perfdb_chrome_trace_read_mem("t.json.gz", gz, gzlen, NULL, &cs, NULL, &info,
						      &err), 0);
	assert_int_equal(info.gzip, 1);
	assert_int_equal(info.bytes, strlen(json));
	assert_int_equal(cpu.n, 1);
	check_row_out(&cpu.v[0], "aten.relu", "CPU", "\"4,16\"", "FLOAT", "ND", "11", "\"4,16\"", "FLOAT");
	rows_free(&cpu);
	assert_int_equal(perfdb_chrome_trace_read_mem("t.json.gz", gz, gzlen - 12, NULL, &cs, NULL,
						      &info, &err), -PERFDB_EPARSE);
	char want[128];
	snprintf(want, sizeof(want), "t.json.gz: truncated gzip stream (ends at compressed byte %zu)",
		 gzlen - 12);
	assert_string_equal(err.msg, want);
	rows_free(&cpu);
	gz[20] ^= 0xff;
	int rc = perfdb_chrome_trace_read_mem("t.json.gz", gz, gzlen, NULL, &cs, NULL, &info, &err);
	assert_int_equal(rc, -PERFDB_EPARSE);
	rows_free(&cpu);
}

/* Kineto's rules (docs/chrome_trace.md "Linking"), both layouts in one
 * trace, read with a sort memory small enough to spill to disk:
 *   aten::linear [10,110] ext 1 holds aten::mm [20,50] ext 2 (shapes);
 *   launch ts 30 names ext 1: linear, not the innermost mm;
 *   launch ts 40 names ext 999, no op: the innermost open op, mm;
 *   launch ts 60 has no correlation: the `s` flow inside it gives 102;
 *   its kernel has none either: the `f` flow inside it gives 102; mm has
 *   ended by ts 60, so linear.
 * So linear's call launched 1 + 4 us (k1, k3), mm's 2 us (k2). */
static void test_link_rules(void **state)
{
	(void)state;
	struct perfdb_strbuf t = PERFDB_STRBUF_INIT;
	perfdb_strbuf_addstr(&t,
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,"
		" \"ts\":10,\"dur\":100,\"args\":{\"External id\":1}},"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
		" \"ts\":20,\"dur\":30,\"args\":{\"External id\":2,\"Input Dims\":[[2,2],[2,2]],"
		" \"Input type\":[\"float\",\"float\"]}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k3\",\"pid\":0,\"tid\":7,\"ts\":300,\"dur\":4},"
		"{\"ph\":\"f\",\"cat\":\"ac2g\",\"id\":102,\"pid\":0,\"tid\":7,\"ts\":301,\"bp\":\"e\"},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":200,\"dur\":1,"
		" \"args\":{\"correlation\":100}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":250,\"dur\":2,"
		" \"args\":{\"correlation\":101}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
		" \"ts\":30,\"dur\":1,\"args\":{\"External id\":1,\"correlation\":100}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
		" \"ts\":\"40.0\",\"dur\":1,\"args\":{\"External id\":999,\"correlation\":101}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
		" \"ts\":60,\"dur\":2},"
		"{\"ph\":\"s\",\"cat\":\"ac2g\",\"id\":102,\"pid\":1,\"tid\":1,\"ts\":61}");
	/* unrelated ops on another thread: enough records to spill every run */
	for (int i = 0; i < 60; i++)
		perfdb_strbuf_addf(&t, ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"x\",\"pid\":1,"
				   "\"tid\":2,\"ts\":%d,\"dur\":1}", i * 3);
	perfdb_strbuf_addstr(&t, "]}");
	struct rows gpu = { 0 };
	struct perfdb_row_sink gs = sink_of(&gpu);
	struct perfdb_chrome_trace_info info;
	struct perfdb_err err;
	struct perfdb_chrome_trace_opts small = { .mem_limit = 5 * 16 * 48 };
	assert_int_equal(perfdb_chrome_trace_read_mem("t.json", t.buf, t.len, &small, NULL, &gs,
						      &info, &err), 0);
	assert_true(info.spilled);
	assert_int_equal(info.activities, 3);
	assert_int_equal(info.activities_linked, 3);
	assert_int_equal(info.flows, 2);
	assert_int_equal(gpu.n, 2);
	/* calls in op order; ops without shapes keep empty cells */
	check_row(&gpu.v[0], "aten.linear", "GPU", "\"\"", "", "", "5");
	check_row_out(&gpu.v[1], "aten.mm", "GPU", "\"2,2;2,2\"", "FLOAT;FLOAT", "ND;ND", "2", "\"2,2\"",
		      "FLOAT");
	rows_free(&gpu);
	/* the same in memory */
	assert_int_equal(perfdb_chrome_trace_read_mem("t.json", t.buf, t.len, NULL, NULL, &gs,
						      &info, &err), 0);
	assert_false(info.spilled);
	assert_int_equal(gpu.n, 2);
	check_row(&gpu.v[0], "aten.linear", "GPU", "\"\"", "", "", "5");
	rows_free(&gpu);
	perfdb_strbuf_release(&t);
}

/* Epoch timestamps (16 digits of us) keep their nanoseconds: a double
 * would round 1682725898082228.002 us in ns to a multiple of 256. */
static void test_epoch_timestamps(void **state)
{
	(void)state;
	static const char trace[] =
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"outer\",\"pid\":1,\"tid\":1,"
		" \"ts\":1682725898082228.000,\"dur\":1},"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"inner\",\"pid\":1,\"tid\":1,"
		" \"ts\":\"1682725898082228.001\",\"dur\":0.001},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"l\",\"pid\":1,\"tid\":1,"
		" \"ts\":1682725898082228.002,\"args\":{\"correlation\":1}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"l\",\"pid\":1,\"tid\":1,"
		" \"ts\":1682725898082228.003,\"args\":{\"correlation\":2}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
		" \"ts\":1682725898082300,\"dur\":1,\"args\":{\"correlation\":1}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
		" \"ts\":1682725898082400,\"dur\":3,\"args\":{\"correlation\":2}}]}";
	struct rows gpu = { 0 };
	struct perfdb_row_sink gs = sink_of(&gpu);
	struct perfdb_err err;
	assert_int_equal(perfdb_chrome_trace_read_mem("t.json", trace, strlen(trace), NULL, NULL, &gs,
						      NULL, &err), 0);
	assert_int_equal(gpu.n, 2);
	/* .002 is inside inner's [.001, .002]; .003 only inside outer */
	check_row(&gpu.v[0], "outer", "GPU", "\"\"", "", "", "3");
	check_row(&gpu.v[1], "inner", "GPU", "\"\"", "", "", "1");
	rows_free(&gpu);
}

/* Op table names are one-to-one and readable. */
static void test_op_table_name(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{ "aten::mm", "aten.mm" },
		{ "aten::add.Tensor", "aten.add%2ETensor" },
		{ "aten__mm", "aten__mm" },
		{ "::f", "%3A%3Af" },
		{ "a:b/c%", "a%3Ab%2Fc%25" },
		{ " x ", "%20x%20" },
		{ "autograd::engine::evaluate_function: MmBackward0",
		  "autograd.engine.evaluate_function%3A MmBackward0" },
	};
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(perfdb_parse_op_table_name(cases[i][0], strlen(cases[i][0]), &out), 0);
		assert_string_equal(out.buf, cases[i][1]);
	}
	perfdb_strbuf_release(&out);
}

static void test_missing_file(void **state)
{
	(void)state;
	struct perfdb_err err;
	assert_int_equal(perfdb_chrome_trace_read(fixture("no_such_trace.json"), NULL, NULL, NULL,
						  NULL, &err), -PERFDB_ENOENT);
}

/* A sink's failure stops the read and its message passes through, with
 * the event it happened at. */
static void test_sink_error(void **state)
{
	(void)state;
	struct rows cpu = { .fail_at = 3 };
	struct perfdb_row_sink cs = sink_of(&cpu);
	struct perfdb_err err;
	assert_int_equal(perfdb_chrome_trace_read(fixture("gpu_minimal.json"), NULL, &cs, NULL, NULL,
						  &err), -PERFDB_EIO);
	assert_non_null(strstr(err.msg, ": event #2 (ending at byte "));
	assert_non_null(strstr(err.msg, "): sink refused row 3"));
	assert_int_equal(cpu.n, 2);
	rows_free(&cpu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_trace_counts),
		cmocka_unit_test(test_cpu_trace_rows),
		cmocka_unit_test(test_legacy_export),
		cmocka_unit_test(test_gpu_trace),
		cmocka_unit_test(test_array_of_events),
		cmocka_unit_test(test_conversions),
		cmocka_unit_test(test_odd_events),
		cmocka_unit_test(test_bad_events),
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_link_rules),
		cmocka_unit_test(test_op_table_name),
		cmocka_unit_test(test_epoch_timestamps),
		cmocka_unit_test(test_not_a_trace),
		cmocka_unit_test(test_invalid_json),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_sink_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
