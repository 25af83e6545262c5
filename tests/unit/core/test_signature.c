/*
 * Unit tests for src/core/signature.c: row signatures.
 * Spec: docs/spec/replay.md §1b (get_sig rules), §5 (get_sig acceptance cases),
 * Decision 5 (dtype spellings normalised); docs/spec/parse.md §2 and §6
 * (get_sig acceptance cases).
 *
 * Expected strings are the five fields (in shapes | in dtypes | in formats
 * | out shapes | out dtypes), plus EP Size for DispatchFFNCombine, worked
 * out by hand from the rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfdb/signature.h"
#include "perfdb/strbuf.h"

/* Signature of a row as a malloc'd string. */
static char *sig(const char *op, const char *in, const char *idt,
		 const char *ifmt, const char *out, const char *odt)
{
	struct perfdb_sig_row row = { in, idt, ifmt, out, odt, NULL };
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_sig_compute(op, &row, &sb), 0);
	return perfdb_strbuf_detach(&sb, NULL);
}

static void check(const char *op, const char *in, const char *idt,
		  const char *ifmt, const char *out, const char *odt,
		  const char *want)
{
	char *got = sig(op, in, idt, ifmt, out, odt);
	assert_string_equal(got, want);
	free(got);
}

/* replay.md §1b: a plain op takes the generic rule. */
static void test_generic_basic(void **state)
{
	(void)state;
	check("Add", "\"4,8;4,8\"", "DT_BF16;DT_BF16", "ND;ND", "\"4,8\"",
	      "DT_BF16", "4,8;4,8|DT_BF16;DT_BF16|ND;ND|4,8|DT_BF16");
	/* on-disk over-quoting and spacing do not matter */
	check("Add", "\"\"\"4, 8; (4 8)\"\"\"", " DT_BF16 ; DT_BF16 ", "ND; ND",
	      "4,8", "DT_BF16", "4,8;4,8|DT_BF16;DT_BF16|ND;ND|4,8|DT_BF16");
	/* all columns absent */
	check("Add", NULL, NULL, NULL, NULL, NULL, "||||");
	check("Add", "", "", "", "", "", "||||");
}

/* replay.md §5 and parse.md §6: `();()` + DT_UNDEFINED / NULL ≡ `;;` with
 * empty dtypes and formats. */
static void test_null_slots_acceptance(void **state)
{
	(void)state;
	char *a = sig("Add", "();()", "DT_UNDEFINED;DT_UNDEFINED", "NULL;NULL",
		      "4,8", "DT_FLOAT");
	char *b = sig("Add", ";;", "", "", "4,8", "DT_FLOAT");
	assert_string_equal(a, "|||4,8|DT_FLOAT");
	assert_string_equal(b, "|||4,8|DT_FLOAT");
	free(a);
	free(b);
}

/* replay.md §1b: null spellings become "", a dtype/format is kept only
 * where its shape slot is non-empty, trailing empties are trimmed. */
static void test_null_spellings_and_trim(void **state)
{
	(void)state;
	check("Add", "4,8;();N/A;NA;NULL;None;none", "DT_BF16;A;B;C;D;E;F",
	      "ND;a;b;c;d;e;f", "4,8", "DT_BF16", "4,8|DT_BF16|ND|4,8|DT_BF16");
	/* an inner empty slot stays, blanking its dtype and format */
	check("Add", "4,8;;8", "DT_BF16;DT_UNDEFINED;DT_INT32", "ND;NULL;ND", "8",
	      "DT_INT32", "4,8;;8|DT_BF16;;DT_INT32|ND;;ND|8|DT_INT32");
	/* the lists are trimmed independently: fewer dtypes than shapes */
	check("Add", "4,8;8", "DT_BF16", "", "8", "", "4,8;8|DT_BF16||8|");
	/* more dtypes than shapes: the extra ones have no tensor */
	check("Add", "4,8", "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND", "4,8", "DT_BF16",
	      "4,8|DT_BF16|ND|4,8|DT_BF16");
	/* a real slot with an empty dtype keeps the empty place */
	check("Add", "4,8;8", ";DT_INT32", "ND;ND", "", "", "4,8;8|;DT_INT32|ND;ND||");
	/* the null set is exact: `n/a` is a (strange) shape, kept */
	check("Add", "n/a", "DT_BF16", "", "", "", "n/a|DT_BF16|||");
	/* non-integer dims are not checked by the generic rule */
	check("Add", "4,x", "DT_BF16", "", "", "", "4,x|DT_BF16|||");
}

/* parse.md §6: MatMul `2,3;4,3` ≡ `2,3;3,4` (out `2,4`): both are
 * M=2, N=4, K=3 -> `M,K;N,K`. */
static void test_matmul_transposed_rhs(void **state)
{
	(void)state;
	const char *want = "2,3;4,3|DT_BF16;DT_BF16|ND;ND|2,4|DT_BF16";
	check("MatMulV2", "2,3;4,3", "DT_BF16;DT_BF16", "ND;ND", "2,4", "DT_BF16", want);
	check("MatMulV2", "2,3;3,4", "DT_BF16;DT_BF16", "ND;ND", "2,4", "DT_BF16", want);
}

/* replay.md §5: `512,4096` (MatMulCommon) = `4096,512` (MatMulV2): the
 * family aliases each other, and a transposed weight gives the same
 * signature (M=16, N=4096, K=512). */
static void test_matmul_family_alias(void **state)
{
	(void)state;
	const char *want = "16,512;4096,512|DT_BF16;DT_BF16|ND;ND|16,4096|DT_BF16";
	check("MatMulCommon", "16,512;512,4096", "DT_BF16;DT_BF16", "ND;ND",
	      "16,4096", "DT_BF16", want);
	check("MatMulV2", "16,512;4096,512", "DT_BF16;DT_BF16", "ND;ND", "16,4096",
	      "DT_BF16", want);
	check("MatMulV3", "16,512;4096,512", "DT_BF16;DT_BF16", "ND;ND", "16,4096",
	      "DT_BF16", want);
	/* Decision 5 applies to the matmul fields too (op_summary spelling) */
	check("MatMulV3", "16,512;4096,512", "BFLOAT16;BFLOAT16", "ND;ND", "16,4096",
	      "BFLOAT16", want);
}

/* replay.md §1b: only the first two dtypes/formats count (a bias slot is
 * dropped), and `_run.py`-style op names resolve to the family. */
static void test_matmul_first_two_slots(void **state)
{
	(void)state;
	check("MatMulV2_run.py", "2,3;4,3;4", "bf16;DT_BF16;DT_FLOAT",
	      "ND;FRACTAL_NZ;ND", "2,4", "DT_BF16",
	      "2,3;4,3|DT_BF16;DT_BF16|ND;FRACTAL_NZ|2,4|DT_BF16");
	/* one dtype only: one dtype in the field */
	check("MatMulV2", "2,3;4,3", "DT_BF16", "", "2,4", "", "2,3;4,3|DT_BF16||2,4|");
}

/* replay.md §1b: K from the common dims when A is not (M, K). */
static void test_matmul_common_dims(void **state)
{
	(void)state;
	/* out (9,5): M=9, N=5; A=(5,7) so A[0] != M; common {7}, outside
	 * {M,N} -> K=7 */
	check("MatMulV2", "5,7;7,9", "", "", "9,5", "", "9,7;5,7|||9,5|");
	/* out (8,8): A=(2,8), B=(8,2): A[0] != M; common {2,8}; outside
	 * {8} only 2 -> K=2 */
	check("MatMulV2", "2,8;8,2", "", "", "8,8", "", "8,2;8,2|||8,8|");
	/* out (2,5): A=(3,5), B=(5,7): common {5} lies in {M,N} but is the
	 * only common dim -> K=5 */
	check("MatMulV2", "3,5;5,7", "", "", "2,5", "", "2,5;5,5|||2,5|");
	/* repeated dims count once: A=(4,4), B=(4,6), out (3,6): A[0] != M;
	 * common {4} outside {3,6} -> K=4 */
	check("MatMulV2", "4,4;4,6", "", "", "3,6", "", "3,4;6,4|||3,6|");
}

/* replay.md §1b: no K, or not 2-D -> the generic rule. */
static void test_matmul_falls_through(void **state)
{
	(void)state;
	/* A=(2,3), B=(4,5), out (2,4): no K, no common dim */
	check("MatMulV2", "2,3;4,5", "FLOAT16;FLOAT16", "ND;ND", "2,4", "FLOAT16",
	      "2,3;4,5|DT_FLOAT16;DT_FLOAT16|ND;ND|2,4|DT_FLOAT16");
	/* A=(2,3), B=(3,2), out (5,6): common {2,3}, both outside {5,6}:
	 * two candidates and more than one common dim -> no K */
	check("MatMulV2", "2,3;3,2", "", "", "5,6", "", "2,3;3,2|||5,6|");
	/* 3-D input */
	check("MatMulV2", "2,2,3;4,3", "", "", "2,4", "", "2,2,3;4,3|||2,4|");
	/* one input only */
	check("MatMulV2", "2,3", "", "", "2,4", "", "2,3|||2,4|");
	/* unparsable dim */
	check("MatMulV2", "2,x;4,x", "", "", "2,4", "", "2,x;4,x|||2,4|");
	/* 3-D output */
	check("MatMulV2", "2,3;4,3", "", "", "1,2,4", "", "2,3;4,3|||1,2,4|");
	/* BatchMatMulV2 is not in the family */
	check("BatchMatMulV2", "2,3;3,4", "", "", "2,4", "", "2,3;3,4|||2,4|");
}

/* replay.md §5: Index `64,1728;1;2;16` = `64,1728;16` (out `16,1728`):
 * inputs become [in0, out0[0]], dtypes/formats (first, last). */
static void test_index_acceptance(void **state)
{
	(void)state;
	const char *want = "64,1728;16|DT_BF16;DT_INT64|ND;ND|16,1728|DT_BF16";
	check("Index", "64,1728;1;2;16", "DT_BF16;DT_INT32;DT_INT32;DT_INT64",
	      "ND;ND;ND;ND", "16,1728", "DT_BF16", want);
	check("Index", "64,1728;16", "DT_BF16;DT_INT64", "ND;ND", "16,1728",
	      "DT_BF16", want);
}

/* parse.md §6: Index -> `8,16;4`. */
static void test_index_parse_acceptance(void **state)
{
	(void)state;
	check("Index", "8,16;2;4", "DT_FLOAT;DT_INT64;DT_INT64", "ND;ND;ND", "4,16",
	      "DT_FLOAT", "8,16;4|DT_FLOAT;DT_INT64|ND;ND|4,16|DT_FLOAT");
	/* a single input slot: dtypes (first, last) = the same one twice */
	check("Index", "8,16", "DT_FLOAT", "ND", "4,16", "", "8,16;4|DT_FLOAT;DT_FLOAT|ND;ND|4,16|");
	/* no parsable output: the slots are kept as they are */
	check("Index", "8,16;2", "DT_FLOAT;DT_INT64", "ND;ND", "N/A", "DT_FLOAT",
	      "8,16;2|DT_FLOAT;DT_INT64|ND;ND||");
	/* no dtypes: stay empty */
	check("Index", "8,16;2;4", "", "", "4,16", "", "8,16;4|||4,16|");
}

/* replay.md §5: Slice `4,768;2;2` = `4,768`; §1b: slot 0 only, its
 * format set to ND, for Slice/SliceAiCore/Transpose/TransposeAiCore. */
static void test_slice_family(void **state)
{
	(void)state;
	const char *want = "4,768|DT_BF16|ND|2,768|DT_BF16";
	check("Slice", "4,768;2;2", "DT_BF16;DT_INT64;DT_INT64", "ND;ND;ND",
	      "2,768", "DT_BF16", want);
	check("Slice", "4,768", "DT_BF16", "ND", "2,768", "DT_BF16", want);
	check("SliceAiCore", "4,768;2;2", "DT_BF16;DT_INT64;DT_INT64",
	      "FRACTAL_NZ;ND;ND", "2,768", "DT_BF16", want);
	check("Transpose", "4,768;2", "DT_BF16;DT_INT64", "NCHW;ND", "2,768",
	      "DT_BF16", want);
	check("TransposeAiCore", "4,768", "DT_BF16", "ND", "2,768", "DT_BF16", want);
	/* no formats recorded: none is invented */
	check("Slice", "4,768;2;2", "DT_BF16", "", "2,768", "DT_BF16",
	      "4,768|DT_BF16||2,768|DT_BF16");
	/* other ops keep every slot and format */
	check("Gather", "4,768;2;2", "", "FRACTAL_NZ;ND;ND", "", "",
	      "4,768;2;2||FRACTAL_NZ;ND;ND||");
}

/* parse.md §2 / replay.md §1b: DispatchFFNCombine adds EP Size, so
 * different EP sizes give different signatures. */
static void test_dispatch_ffn_ep_size(void **state)
{
	(void)state;
	struct perfdb_sig_row row = { "16,7168", "DT_BF16", "ND", "16,7168",
				      "DT_BF16", " 16 " };
	struct perfdb_strbuf a = PERFDB_STRBUF_INIT, b = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_sig_compute("DispatchFFNCombine", &row, &a), 0);
	assert_string_equal(a.buf, "16,7168|DT_BF16|ND|16,7168|DT_BF16|16");
	row.ep_size = "32";
	assert_int_equal(perfdb_sig_compute("DispatchFFNCombine", &row, &b), 0);
	assert_string_equal(b.buf, "16,7168|DT_BF16|ND|16,7168|DT_BF16|32");
	/* absent column: empty sixth field */
	row.ep_size = NULL;
	assert_int_equal(perfdb_sig_compute("DispatchFFNCombine.csv", &row, &b), 0);
	assert_string_equal(b.buf, "16,7168|DT_BF16|ND|16,7168|DT_BF16|");
	/* other ops ignore it */
	row.ep_size = "16";
	assert_int_equal(perfdb_sig_compute("Add", &row, &b), 0);
	assert_string_equal(b.buf, "16,7168|DT_BF16|ND|16,7168|DT_BF16");
	perfdb_strbuf_release(&a);
	perfdb_strbuf_release(&b);
}

/* Decision 5: `FLOAT16` ≡ `DT_FLOAT16` (and BF16 ≡ DT_BF16) in every dtype
 * field; unknown tokens are kept verbatim; formats are not touched. */
static void test_dtype_spelling(void **state)
{
	(void)state;
	char *a = sig("Add", "4,8;4,8", "FLOAT16;BF16", "ND;ND", "4,8", "FLOAT16");
	char *b = sig("Add", "4,8;4,8", "DT_FLOAT16;DT_BF16", "ND;ND", "4,8",
		      "DT_FLOAT16");
	assert_string_equal(a, "4,8;4,8|DT_FLOAT16;DT_BF16|ND;ND|4,8|DT_FLOAT16");
	assert_string_equal(a, b);
	free(a);
	free(b);
	check("Add", "4,8", "triton_7", "nd", "4,8", "opaque x",
	      "4,8|triton_7|nd|4,8|opaque x");
}

/* replay.md §1b: op = the argument, trimmed and unquoted, suffix-free. */
static void test_op_resolution(void **state)
{
	(void)state;
	check(" \"Index\" ", "8,16;2;4", "", "", "4,16", "", "8,16;4|||4,16|");
	check("Slice_run", "4,768;2", "", "", "", "", "4,768||||");
	check(NULL, "4,768;2", "", "", "", "", "4,768;2||||");
}

/* signature.h: out is reset first. */
static void test_output_reset(void **state)
{
	(void)state;
	struct perfdb_sig_row row = { "4", "", "", "4", "", NULL };
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_strbuf_addstr(&sb, "junk"), 0);
	assert_int_equal(perfdb_sig_compute("Add", &row, &sb), 0);
	assert_string_equal(sb.buf, "4|||4|");
	perfdb_strbuf_release(&sb);
}

/* replay.md §1b routing: the three matmul names alias each other. */
static void test_is_matmul_family(void **state)
{
	(void)state;
	assert_true(perfdb_sig_is_matmul_family("MatMulV2"));
	assert_true(perfdb_sig_is_matmul_family("MatMulV3"));
	assert_true(perfdb_sig_is_matmul_family("MatMulCommon"));
	assert_true(perfdb_sig_is_matmul_family(" MatMulV3.csv "));
	assert_true(perfdb_sig_is_matmul_family("MatMulCommon_run.py"));
	assert_false(perfdb_sig_is_matmul_family("MatMul"));
	assert_false(perfdb_sig_is_matmul_family("BatchMatMulV2"));
	assert_false(perfdb_sig_is_matmul_family("matmulv2"));
	assert_false(perfdb_sig_is_matmul_family(""));
}

/* replay.md §1 step 1: strip `_run.py`, `_run` or `.csv` (one of them). */
static void test_normalize_op(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{ "Add_run.py", "Add" }, { "Add_run", "Add" },
		{ "Add.csv", "Add" },    { " Add ", "Add" },
		{ "Add_run.csv", "Add_run" }, { "Add", "Add" },
		{ "_run", "" },          { "", "" },
	};
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(perfdb_strbuf_addstr(&sb, "junk"), 0);
		assert_int_equal(perfdb_sig_normalize_op(cases[i][0], &sb), 0);
		assert_string_equal(sb.buf, cases[i][1]);
	}
	perfdb_strbuf_release(&sb);
}

/* replay.md §1b: report form `<raw in|N/A> -> <raw out|N/A>`. */
static void test_report_form(void **state)
{
	(void)state;
	struct perfdb_sig_row row = { "\"4,8;8\"", "DT_BF16", "ND", "\"4,8\"", "", NULL };
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_sig_report_form(&row, &sb), 0);
	assert_string_equal(sb.buf, "\"4,8;8\" -> \"4,8\"");
	row.in_shapes = "";
	row.out_shapes = NULL;
	assert_int_equal(perfdb_sig_report_form(&row, &sb), 0);
	assert_string_equal(sb.buf, "N/A -> N/A");
	perfdb_strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generic_basic),
		cmocka_unit_test(test_null_slots_acceptance),
		cmocka_unit_test(test_null_spellings_and_trim),
		cmocka_unit_test(test_matmul_transposed_rhs),
		cmocka_unit_test(test_matmul_family_alias),
		cmocka_unit_test(test_matmul_first_two_slots),
		cmocka_unit_test(test_matmul_common_dims),
		cmocka_unit_test(test_matmul_falls_through),
		cmocka_unit_test(test_index_acceptance),
		cmocka_unit_test(test_index_parse_acceptance),
		cmocka_unit_test(test_slice_family),
		cmocka_unit_test(test_dispatch_ffn_ep_size),
		cmocka_unit_test(test_dtype_spelling),
		cmocka_unit_test(test_op_resolution),
		cmocka_unit_test(test_output_reset),
		cmocka_unit_test(test_is_matmul_family),
		cmocka_unit_test(test_normalize_op),
		cmocka_unit_test(test_report_form),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
