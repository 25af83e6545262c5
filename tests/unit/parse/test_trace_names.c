/*
 * Unit tests: file names of the tables a trace names (src/parse/trace_names.c,
 * docs/chrome_trace.md "Table names").  The expected names are worked out by
 * hand from the documented rule; the collision cases use a scratch database.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/hash.h"
#include "parse/parse.h"

static void expect(const char *name, const char *want)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_trace_readable_name(name, strlen(name), &sb), 0);
	if (strcmp(sb.buf, want) != 0)
		fail_msg("'%s' -> '%s', want '%s'", name, sb.buf, want);
	perfdb_strbuf_release(&sb);
}

static void test_readable(void **state)
{
	(void)state;
	expect("aten::mm", "aten.mm");
	expect("aten::add_", "aten.add_");               /* an op's own '_' stays */
	expect("aten::add.Tensor", "aten.add.Tensor");
	expect("aten::_softmax", "aten._softmax");
	expect("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::"
	       "(anonymous namespace)::TensorListMetadata<4>, float>(at::native::TensorListMetadata<4>, int)",
	       "at.native.multi_tensor_apply_kernel");
	expect("torch::autograd::CppNode<SplitLookupFunction_rowwise_adagrad_Op>", "torch.autograd.CppNode");
	expect("autograd::engine::evaluate_function: MmBackward0",
	       "autograd.engine.evaluate_function_MmBackward0");
	expect("Memcpy HtoD (Pageable -> Device)", "Memcpy_HtoD");
	expect("ProfilerStep#3", "ProfilerStep_3");
	expect("a & b's (x)", "a_b_s");
	expect("-rf --no-preserve-root", "rf_--no-preserve-root");
	expect(".hidden", "hidden");
	expect("x_ y", "x_y");                           /* no '_' beside another */
	expect("  sm90_xmma_gemm  ", "sm90_xmma_gemm");
	expect("", "UNKNOWN_OP");
	expect("<>", "UNKNOWN_OP");
	expect("\xe7\xae\x97\xe5\xad\x90_op", "_op");   /* a run of non-ASCII bytes at the start: dropped */

	/* past 120 bytes: the head, '~' and 8 hex digits of FNV-1a of the whole name */
	char longname[301];
	memset(longname, 'a', 300);
	longname[300] = '\0';
	char want[140];
	snprintf(want, sizeof(want), "%.120s~%08llx", longname,
		 (unsigned long long)(perfdb_fnv1a64(longname, 300) & 0xffffffffu));
	expect(longname, want);
}

/* Whatever the bytes, a name a shell and a directory walk take as it is. */
static void test_shell_safe(void **state)
{
	(void)state;
	srand(7);
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	for (int n = 0; n < 2000; n++) {
		char name[64];
		size_t len = (size_t)(rand() % 63);
		for (size_t i = 0; i < len; i++)
			name[i] = (char)(1 + rand() % 255);
		name[len] = '\0';
		assert_int_equal(perfdb_trace_readable_name(name, len, &sb), 0);
		assert_true(sb.len > 0 && sb.len <= PERFDB_TRACE_NAME_MAX + 9);
		assert_true(sb.buf[0] != '.' && sb.buf[0] != '-');
		for (size_t i = 0; i < sb.len; i++)
			assert_non_null(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-~",
					       sb.buf[i]));
	}
	perfdb_strbuf_release(&sb);
}

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/perfdb-test-names-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void put(const char *stem, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s.csv", dir, stem);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
}

static char *hashed(const char *readable, const char *name)
{
	static char b[200];
	snprintf(b, sizeof(b), "%s~%08llx", readable,
		 (unsigned long long)(perfdb_fnv1a64(name, strlen(name)) & 0xffffffffu));
	return b;
}

static void stem(const char *name, const char *legacy, struct perfdb_trace_claims *c, const char *want)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_trace_table_stem(dir, name, legacy, c, &sb), 0);
	if (strcmp(sb.buf, want) != 0)
		fail_msg("'%s' -> '%s', want '%s'", name, sb.buf, want);
	perfdb_strbuf_release(&sb);
}

static void test_collisions(void **state)
{
	(void)state;
	const char *a = "torch::autograd::CppNode<A>", *b = "torch::autograd::CppNode<B>";
	char hb[200];
	snprintf(hb, sizeof(hb), "%s", hashed("torch.autograd.CppNode", b));
	/* one run: the first name takes the readable file, the second the hash; asked again, each keeps its own */
	struct perfdb_trace_claims c = { 0 };
	stem(a, NULL, &c, "torch.autograd.CppNode");
	stem(b, NULL, &c, hb);
	stem(a, NULL, &c, "torch.autograd.CppNode");
	stem(b, NULL, &c, hb);
	perfdb_trace_claims_release(&c);

	/* a later run: the files say whose they are (Trace Name), whatever the order */
	put("torch.autograd.CppNode", "OP State,Trace Name\r\n,torch::autograd::CppNode<A>\r\n");
	put(hb, "OP State,Trace Name\r\n,torch::autograd::CppNode<B>\r\n");
	stem(b, NULL, &c, hb);
	stem(a, NULL, &c, "torch.autograd.CppNode");
	perfdb_trace_claims_release(&c);
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_trace_table_find(dir, b, &sb), 1);
	assert_string_equal(sb.buf, hb);
	assert_int_equal(perfdb_trace_table_find(dir, a, &sb), 1);
	assert_string_equal(sb.buf, "torch.autograd.CppNode");
	assert_int_equal(perfdb_trace_table_find(dir, "torch::autograd::CppNode<C>", &sb), 0);

	/* a table an older perfdb wrote under the one-to-one rule keeps its rows */
	put("aten.add%2ETensor", "OP State\r\n");
	stem("aten::add.Tensor", "aten.add%2ETensor", &c, "aten.add%2ETensor");
	stem("aten::add.Tensor", "aten.add%2ETensor", &c, "aten.add%2ETensor");
	/* and a readable table from before the column is taken as this name's */
	put("aten.mm", "OP State\r\n,x\r\n");
	stem("aten::mm", "aten.mm", &c, "aten.mm");
	perfdb_trace_claims_release(&c);
	perfdb_strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readable),
		cmocka_unit_test(test_shell_safe),
		cmocka_unit_test_setup_teardown(test_collisions, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
