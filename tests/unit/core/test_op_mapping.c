/*
 * Unit tests for src/core/op_mapping_gen.c: the op_mapping.yaml generator
 * (docs/database.md "op_mapping.yaml").  The fixture upstream text below is
 * written by hand in upstream's style; the expected pieces are its own
 * lines, so "verbatim" is checked against the input, not the output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "grid/grid_internal.h"
#include "perfdb/fsio.h"
#include "perfdb/op_mapping.h"

/* Pieces of the fixture, joined below, so a test can look for one verbatim. */
#define MM_ENTRY                                                                   \
	"  \"aten.mm.default\":\n"                                                 \
	"    kernel_type: MatMulV2\n"                                              \
	"    alternate_kernel_types: [MatMulV3]\n"                                 \
	"    notes: >\n"                                                           \
	"      [HIGH] mm note line one.\n"                                         \
	"      # not a comment: text of the folded note\n"                         \
	"\n"
#define BMM_ENTRY                                                                  \
	"  \"aten.bmm.default\":\n"                                                \
	"    kernel_type: BatchMatMulV2\n"                                         \
	"    alternate_kernel_types: [BatchMatMulNd]\n"                            \
	"    degenerate_bmm_kernel_type: Mul\n"                                    \
	"    tc_input_count: 2\n"                                                  \
	"    notes: \"bmm\"\n"                                                     \
	"\n"
#define ADD_ENTRY                                                                  \
	"  \"aten.add.Tensor\":\n"                                                 \
	"    kernel_type: Add\n"                                                   \
	"    query_mode: elementwise\n"                                            \
	"    notes: \"add\"\n"                                                     \
	"\n"
#define COMP_ENTRY                                                                 \
	"  \"tensor_cast.norm_quant.default\":\n"                                  \
	"    composite: true\n"                                                    \
	"    sub_kernels: [RmsNorm, DynamicQuant]\n"                               \
	"    notes: \"composite\"\n"                                               \
	"\n"
#define DECOMP_ENTRY                                                               \
	"  \"tensor_cast.mla.default\":\n"                                         \
	"    composite: true\n"                                                    \
	"    decomposer: true\n"                                                   \
	"    notes: \"decomposer\"\n"                                              \
	"\n"
#define VIEW_ENTRY                                                                 \
	"  \"aten.view.default\":\n"                                               \
	"    zero_cost: true\n"                                                    \
	"    notes: \"view\"\n"                                                    \
	"\n"
#define RMS_ENTRY                                                                  \
	"  \"tensor_cast.rms_norm.default\":\n"                                    \
	"    kernel_type: RmsNorm\n"                                               \
	"    notes: \"rms\"\n"
#define POLICY                                                                     \
	"interpolation_policy:\n"                                                  \
	"  kernel_overrides:\n"                                                    \
	"    MatMulV2:\n"                                                          \
	"      # kept: a comment inside the section\n"                             \
	"      max_interpolation_dim: 1\n"

static const char upstream[] =
	"# header comment\n"
	"version: \"0.18.0\"\n"
	"communication_data_ref: \"../../hccl/v8.5/\"\n"
	"\n"
	POLICY
	"\n"
	"# ==== section comment, not part of any entry ====\n"
	"operator_mappings:\n"
	"\n"
	MM_ENTRY
	BMM_ENTRY
	"  # ========== 2. a section header between entries ==========\n"
	"\n"
	ADD_ENTRY
	COMP_ENTRY
	DECOMP_ENTRY
	VIEW_ENTRY
	"  \"aten.dup.default\":\n"
	"    kernel_type: First\n"
	"\n"
	"  \"aten.dup.default\":\n"
	"    kernel_type: Second\n"
	"\n"
	RMS_ENTRY
	"\n"
	"# trailing section\n"
	"torch_npu_reference:\n"
	"  MatMulV2:\n"
	"    microbench_api: \"torch.mm\"\n";

static char *gen(const char *const *stems, size_t n)
{
	struct perfdb_strbuf out = PERFDB_STRBUF_INIT;
	struct perfdb_err err;
	int rc = perfdb_opmap_generate("fixture.yaml", upstream, sizeof(upstream) - 1, stems, n, &out,
				       &err);
	if (rc != 0)
		fail_msg("generate: %s", err.msg);
	return perfdb_strbuf_detach(&out, NULL);
}

/* The entry value of key in text, parsed (NULL if absent); frees nothing the caller keeps. */
static int has_key(const char *text, const char *key)
{
	struct perfdb_ydoc d;
	struct perfdb_err err;
	assert_int_equal(perfdb_ydoc_load(&d, "out", text, strlen(text), &err), 0);
	const struct perfdb_ynode_s *m = perfdb_ymap_get(d.root, "operator_mappings");
	assert_non_null(m);
	int n = 0;
	for (size_t i = 0; m->type == PERFDB_Y_MAP && i < m->n; i++)
		n += strcmp(m->items[2 * i]->text, key) == 0;
	perfdb_ydoc_release(&d);
	return n;
}

static char *field(const char *text, const char *key, const char *f)
{
	struct perfdb_ydoc d;
	struct perfdb_err err;
	assert_int_equal(perfdb_ydoc_load(&d, "out", text, strlen(text), &err), 0);
	const struct perfdb_ynode_s *m = perfdb_ymap_get(d.root, "operator_mappings");
	const struct perfdb_ynode_s *e = m ? perfdb_ymap_get(m, key) : NULL;
	const struct perfdb_ynode_s *v = e ? perfdb_ymap_get(e, f) : NULL;
	char *r = NULL;
	if (v && v->type == PERFDB_Y_SCALAR) {
		r = strdup(v->text);
	} else if (v && v->type == PERFDB_Y_SEQ) {
		struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
		for (size_t i = 0; i < v->n; i++)
			perfdb_strbuf_addf(&sb, "%s%s", i ? "," : "", v->items[i]->text);
		r = perfdb_strbuf_detach(&sb, NULL);
		if (!r)
			r = strdup("");
	}
	perfdb_ydoc_release(&d);
	return r;
}

static void check_field(const char *text, const char *key, const char *f, const char *want)
{
	char *got = field(text, key, f);
	if (!want) {
		if (got)
			fail_msg("%s.%s: want absent, got '%s'", key, f, got);
		return;
	}
	if (!got)
		fail_msg("%s.%s: absent, want '%s'", key, f, want);
	assert_string_equal(got, want);
	free(got);
}

/* Ascend tables: the entries naming them, copied line for line. */
static void test_ascend_verbatim(void **state)
{
	(void)state;
	const char *stems[] = { "MatMulV3", "Add" };
	char *t = gen(stems, 2);
	assert_non_null(strstr(t, MM_ENTRY));       /* via its alternate, notes and all */
	assert_non_null(strstr(t, ADD_ENTRY));
	assert_non_null(strstr(t, POLICY));          /* the policy section, comment kept */
	assert_null(strstr(t, "aten.bmm"));          /* BatchMatMulV2/BatchMatMulNd absent */
	assert_null(strstr(t, "tensor_cast.rms_norm"));
	assert_null(strstr(t, "section header between"));   /* not part of an entry */
	assert_null(strstr(t, "communication_data_ref"));
	assert_null(strstr(t, "version:"));
	assert_null(strstr(t, "torch_npu_reference"));
	/* upstream's zero-cost statement applies to an Ascend database */
	assert_int_equal(has_key(t, "aten.view.default"), 1);
	assert_null(strstr(t, "tensor_cast.mla.default"));  /* a decomposer: never */
	free(t);
}

/* A composite entry only with all its sub-kernels. */
static void test_composite_rule(void **state)
{
	(void)state;
	const char *one[] = { "RmsNorm" };
	char *t = gen(one, 1);
	assert_int_equal(has_key(t, "tensor_cast.norm_quant.default"), 0);
	assert_non_null(strstr(t, RMS_ENTRY));  /* the last entry: ends before the next section */
	assert_null(strstr(t, "trailing section"));
	free(t);
	const char *both[] = { "DynamicQuant", "RmsNorm" };
	t = gen(both, 2);
	assert_non_null(strstr(t, COMP_ENTRY));
	free(t);
}

/* PyTorch op tables: keyed by the simulator's op, upstream's query fields. */
static void test_torch_tables(void **state)
{
	(void)state;
	const char *stems[] = { "aten.bmm", "aten.add%2ETensor", "aten.softmax", "MatMulV2" };
	char *t = gen(stems, 4);
	check_field(t, "aten.bmm.default", "kernel_type", "aten.bmm");
	check_field(t, "aten.bmm.default", "tc_input_count", "2");
	check_field(t, "aten.bmm.default", "alternate_kernel_types", NULL);  /* none present */
	check_field(t, "aten.bmm.default", "degenerate_bmm_kernel_type", NULL);  /* Mul absent */
	assert_non_null(strstr(t, "    tc_input_count: 2\n"));   /* copied as upstream wrote it */
	check_field(t, "aten.add.Tensor", "kernel_type", "aten.add%2ETensor");
	check_field(t, "aten.add.Tensor", "query_mode", "elementwise");
	check_field(t, "aten.add.Tensor", "alternate_kernel_types", NULL);
	/* upstream does not map softmax: the default overload */
	check_field(t, "aten.softmax.default", "kernel_type", "aten.softmax");
	/* no PyTorch aten.mm table: the upstream entry itself, for MatMulV2 */
	check_field(t, "aten.mm.default", "kernel_type", "MatMulV2");
	assert_non_null(strstr(t, MM_ENTRY));
	free(t);
}

/* Alternates: upstream's kernels that the database also holds, in upstream's order. */
static void test_torch_alternates(void **state)
{
	(void)state;
	const char *stems[] = { "aten.mm", "MatMulV3", "MatMulV2", "aten.bmm", "Mul" };
	char *t = gen(stems, 5);
	check_field(t, "aten.mm.default", "kernel_type", "aten.mm");
	check_field(t, "aten.mm.default", "alternate_kernel_types", "MatMulV2,MatMulV3");
	assert_int_equal(has_key(t, "aten.mm.default"), 1);   /* one key, the PyTorch form */
	assert_null(strstr(t, "mm note line one"));           /* upstream's notes not copied */
	check_field(t, "aten.bmm.default", "degenerate_bmm_kernel_type", "Mul");  /* Mul present */
	free(t);
}

static void check_stem(const char *stem, int want, const char *base, const char *ovl)
{
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT, o = PERFDB_STRBUF_INIT;
	int got = perfdb_opmap_torch_stem(stem, &b, &o);
	if (got != want)
		fail_msg("%s: %d, want %d", stem, got, want);
	if (want) {
		assert_string_equal(b.buf, base);
		assert_string_equal(o.len ? o.buf : "", ovl);
	}
	perfdb_strbuf_release(&b);
	perfdb_strbuf_release(&o);
}

/* Table names back to ops (docs/chrome_trace.md "Table names", inverted). */
static void test_stem_decoding(void **state)
{
	(void)state;
	check_stem("aten.mm", 1, "aten.mm", "");
	check_stem("aten.add%2ETensor", 1, "aten.add", "Tensor");
	check_stem("aten.add%2eTensor", 1, "aten.add", "Tensor");
	check_stem("aten._scaled_dot_product_flash_attention", 1,
		   "aten._scaled_dot_product_flash_attention", "");
	check_stem("aten__mm", 1, "aten.mm", "");              /* CPU-only traces */
	check_stem("aten___softmax", 1, "aten._softmax", "");
	check_stem("c10d__allreduce_", 1, "c10d.allreduce_", "");
	check_stem("MatMulV2", 0, NULL, NULL);
	check_stem("hcom_allReduce_", 0, NULL, NULL);
	check_stem("aten.add.Tensor", 1, "aten.add", "Tensor"); /* the readable rule's overload */
	check_stem("aten.a.b.c", 0, NULL, NULL);               /* four components */
	check_stem("aten.add%2E", 0, NULL, NULL);              /* empty overload */
	check_stem("aten.x%2Fy", 0, NULL, NULL);               /* not an identifier */
	check_stem("torch.autograd.CppNode%3CX%3E", 0, NULL, NULL);
	check_stem("Memcpy HtoD (Pageable __ Device)", 0, NULL, NULL);
	check_stem("void at__native__kernel", 0, NULL, NULL);
	check_stem("triton__0d1d", 0, NULL, NULL);             /* op starts with a digit */
}

/* Same tables in any order, with duplicates: the same bytes; the marker proves them perfdb's. */
static void test_deterministic_and_marker(void **state)
{
	(void)state;
	const char *a[] = { "aten.mm", "MatMulV2", "Add", "aten.mm", "zz_unknown" };
	const char *b[] = { "zz_unknown", "Add", "MatMulV2", "aten.mm" };
	char *ta = gen(a, 5), *tb = gen(b, 4);
	assert_string_equal(ta, tb);
	assert_true(perfdb_opmap_is_own(ta, strlen(ta)));
	assert_non_null(strstr(ta, "perfdb"));
	assert_non_null(strstr(ta, "fixture.yaml"));
	/* one byte changed anywhere after the marker: the user's file now */
	char *e = strstr(ta, "elementwise");
	assert_non_null(e);
	e[0] = 'E';
	assert_false(perfdb_opmap_is_own(ta, strlen(ta)));
	assert_false(perfdb_opmap_is_own(upstream, sizeof(upstream) - 1));
	/* a table nothing maps: upstream's placeholder form */
	check_field(tb, "profiling.zz_unknown", "kernel_type", "zz_unknown");
	/* repeated upstream key: once, with PyYAML's last value */
	const char *d[] = { "Second", "First" };
	char *td = gen(d, 2);
	assert_int_equal(has_key(td, "aten.dup.default"), 1);
	check_field(td, "aten.dup.default", "kernel_type", "Second");
	check_field(td, "profiling.First", "kernel_type", "First");
	free(ta);
	free(tb);
	free(td);
}

/* No tables upstream maps, no torch names: an empty mapping that is still a mapping. */
static void test_empty(void **state)
{
	(void)state;
	char *t = gen(NULL, 0);
	assert_non_null(strstr(t, "operator_mappings: {}\n"));
	assert_int_equal(has_key(t, "x"), 0);
	free(t);
}

/* The shipped upstream file: every table of a PyTorch GPU database gets an entry. */
static void test_shipped_file(void **state)
{
	(void)state;
	const char *td = getenv("PERFDB_TEST_DATA");
	assert_non_null(td);
	char p[4096];
	snprintf(p, sizeof(p), "%s/../../data/op_mapping/vllm0.18.0_torch2.9.0_cann8.5.yaml", td);
	struct perfdb_strbuf up = PERFDB_STRBUF_INIT, out = PERFDB_STRBUF_INIT;
	struct perfdb_err err;
	assert_int_equal(perfdb_file_read_all(p, &up, &err), 0);
	const char *stems[] = { "aten.mm", "aten.addmm", "MatMulV2", "FusedInferAttentionScore",
				"aten.embedding", "record_param_comms" };
	assert_int_equal(perfdb_opmap_generate("up", up.buf, up.len, stems, 6, &out, &err), 0);
	struct perfdb_opmap *m = NULL;
	assert_int_equal(perfdb_opmap_load_mem(&m, "out", out.buf, out.len, &err), 0);
	for (size_t i = 0; i < 6; i++)
		if (!perfdb_opmap_find(m, stems[i]))
			fail_msg("no entry names %s", stems[i]);
	perfdb_opmap_free(m);
	check_field(out.buf, "aten.embedding.default", "tc_input_count", "2");
	check_field(out.buf, "aten.addmm.default", "alternate_kernel_types", "MatMulV2");
	check_field(out.buf, "tensor_cast.attention.default", "query_mode", "attention_special");
	perfdb_strbuf_release(&up);
	perfdb_strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ascend_verbatim),
		cmocka_unit_test(test_composite_rule),
		cmocka_unit_test(test_torch_tables),
		cmocka_unit_test(test_torch_alternates),
		cmocka_unit_test(test_stem_decoding),
		cmocka_unit_test(test_deterministic_and_marker),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_shipped_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
