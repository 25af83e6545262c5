/*
 * Output cells of PyTorch op calls (src/parse/aten_shapes.c).  Every
 * expected cell is aten's rule worked by hand on the inputs: a GEMM's
 * (…, M, N), numpy broadcasting, bool comparisons, embedding's (…, D);
 * ops whose output a dropped scalar decides stay unknown.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "parse/aten_shapes.h"

/* 1 and the cells, or 0 ("" in out) */
static int out(const char *table, const char *shapes, const char *dtypes, char *buf, size_t cap)
{
	struct perfdb_strbuf s = PERFDB_STRBUF_INIT, t = PERFDB_STRBUF_INIT, f = PERFDB_STRBUF_INIT;
	int rc = perfdb_aten_output(table, strlen(table), shapes, strlen(shapes), dtypes, strlen(dtypes),
				    &s, &t, &f);
	buf[0] = '\0';
	if (rc == 1)
		snprintf(buf, cap, "%s|%s|%s", s.buf, t.buf, f.buf);
	perfdb_strbuf_release(&s);
	perfdb_strbuf_release(&t);
	perfdb_strbuf_release(&f);
	return rc;
}

#define EXPECT(table, shapes, dtypes, want)                                   \
	do {                                                                  \
		char b[256];                                                  \
		assert_int_equal(out(table, shapes, dtypes, b, sizeof(b)), 1); \
		assert_string_equal(b, want);                                 \
	} while (0)
#define UNKNOWN(table, shapes, dtypes)                                        \
	do {                                                                  \
		char b[256];                                                  \
		assert_int_equal(out(table, shapes, dtypes, b, sizeof(b)), 0); \
	} while (0)

static void test_gemms(void **state)
{
	(void)state;
	EXPECT("aten.mm", "\"4096,5120;5120,1024\"", "DT_BF16;DT_BF16", "\"4096,1024\"|DT_BF16|ND");
	/* addmm(bias, a, b, beta, alpha) as the trace writes it */
	EXPECT("aten.addmm", "\"256;2048,6948;6948,256;;\"", "FLOAT;FLOAT;FLOAT;;", "\"2048,256\"|FLOAT|ND");
	EXPECT("aten.bmm", "\"8,16,32;8,32,4\"", "FLOAT;FLOAT", "\"8,16,4\"|FLOAT|ND");
	EXPECT("aten.baddbmm", "\"8,16,4;8,16,32;8,32,4;;\"", "FLOAT;FLOAT;FLOAT;;", "\"8,16,4\"|FLOAT|ND");
	/* linear: weight (N, K); 3-D input keeps its leading dims */
	EXPECT("aten.linear", "\"2,8,64;128,64;128\"", "DT_BF16;DT_BF16;DT_BF16", "\"2,8,128\"|DT_BF16|ND");
	/* matmul: batch dims broadcast (4,1) with (3) -> (4,3); a 1-D right operand is a column, dropped */
	EXPECT("aten.matmul", "\"4,1,8,16;3,16,2\"", "FLOAT;FLOAT", "\"4,3,8,2\"|FLOAT|ND");
	EXPECT("aten.matmul", "\"8,16;16\"", "FLOAT;FLOAT", "\"8\"|FLOAT|ND");
	/* K mismatch, wrong ranks, bmm batch mismatch: no output */
	UNKNOWN("aten.mm", "\"4,5;6,7\"", "FLOAT;FLOAT");
	UNKNOWN("aten.mm", "\"4,5,6;6,7\"", "FLOAT;FLOAT");
	UNKNOWN("aten.bmm", "\"2,4,5;3,5,6\"", "FLOAT;FLOAT");
	UNKNOWN("aten.linear", "\"8,64;128,32\"", "FLOAT;FLOAT");
}

static void test_elementwise(void **state)
{
	(void)state;
	/* (2048,1) x (1,7) -> (2048,7); a 0-d tensor or a scalar slot broadcasts away */
	EXPECT("aten.mul", "\"2048,1;1,7\"", "FLOAT;FLOAT", "\"2048,7\"|FLOAT|ND");
	EXPECT("aten.add", "\"8,1;;\"", "FLOAT;DOUBLE;", "\"8,1\"|FLOAT|ND");
	EXPECT("aten.ge", "\"4,8;8\"", "INT64;INT64", "\"4,8\"|BOOL|ND");
	EXPECT("aten.add_", "\"2048,128;2048,128;\"", "FLOAT;FLOAT;", "\"2048,128\"|FLOAT|ND");
	EXPECT("aten._softmax", "\"4,8,8;;\"", "DT_BF16;;", "\"4,8,8\"|DT_BF16|ND");
	EXPECT("aten.native_layer_norm", "\"2048,125;;125;125;\"", "FLOAT;;FLOAT;FLOAT;", "\"2048,125\"|FLOAT|ND");
	UNKNOWN("aten.mul", "\"3,4;5\"", "FLOAT;FLOAT");        /* 4 and 5 do not broadcast */
	UNKNOWN("aten.eq", "\";;;\"", ";;INT32;");              /* input 0 is a scalar */
}

static void test_embedding_and_unknown(void **state)
{
	(void)state;
	EXPECT("aten.embedding", "\"151936,5120;4,128;;;\"", "DT_BF16;INT64;;;", "\"4,128,5120\"|DT_BF16|ND");
	/* the output depends on a dropped scalar (dim, dtype) or the op is not aten's */
	UNKNOWN("aten.sum", "\"8,64;;;;8,1\"", "FLOAT;;;;FLOAT");
	UNKNOWN("aten.cat", "\"8,64;8,64;\"", "TensorList;TensorList;");
	UNKNOWN("aten.to", "\"8,64;;;;\"", "FLOAT;;;;");
	UNKNOWN("aten.add%2ETensor", "\"8,64;8,64\"", "FLOAT;FLOAT");   /* an overload: not taken */
	UNKNOWN("fbgemm.permute_2D_sparse_data", "\"8;8\"", "INT32;INT32");
	UNKNOWN("aten.mm", "\"4,x;5,6\"", "FLOAT;FLOAT");       /* not a shape */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemms),
		cmocka_unit_test(test_elementwise),
		cmocka_unit_test(test_embedding_and_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
