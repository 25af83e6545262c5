/*
 * The ISA levels and the PERFDB_MAX_CPU_ISA ceiling.  The detected level
 * depends on the CPU, so the tests assert the rules that hold on any CPU: a
 * ceiling never raises the level, it lowers it to exactly the ceiling when
 * the CPU is above it, and a bad value is no ceiling.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfdb/cpu_isa.h"

static void test_parse_names(void **state)
{
	(void)state;
	static const char *const names[] = { "sse2", "avx2", "avx512", "avx512_bf16" };
	for (int i = 0; i < 4; i++) {
		enum perfdb_cpu_isa isa = PERFDB_ISA_SSE2;
		struct perfdb_err err = { 0 };
		assert_int_equal(perfdb_cpu_isa_parse(names[i], &isa, &err), 0);
		assert_int_equal((int)isa, i);
		assert_string_equal(perfdb_cpu_isa_name(isa), names[i]);
	}
	enum perfdb_cpu_isa isa;
	assert_int_equal(perfdb_cpu_isa_parse("AVX2", &isa, NULL), 0);
	assert_int_equal(isa, PERFDB_ISA_AVX2);
	assert_string_equal(perfdb_cpu_isa_name((enum perfdb_cpu_isa)9), "unknown");
}

static void test_parse_rejects(void **state)
{
	(void)state;
	static const char *const bad[] = { "", "avx", "avx512bf16x", "avx2 ", "3" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum perfdb_cpu_isa isa = PERFDB_ISA_AVX2;
		struct perfdb_err err = { 0 };
		assert_int_equal(perfdb_cpu_isa_parse(bad[i], &isa, &err), -PERFDB_EINVAL);
		assert_non_null(strstr(err.msg, "PERFDB_MAX_CPU_ISA"));
		assert_int_equal(isa, PERFDB_ISA_AVX2); /* untouched */
	}
}

static void test_ceiling_rule(void **state)
{
	(void)state;
	enum perfdb_cpu_isa hw = perfdb_cpu_isa_detect();
	assert_true(hw >= PERFDB_ISA_SSE2 && hw <= PERFDB_ISA_AVX512_BF16);
	unsetenv("PERFDB_MAX_CPU_ISA");
	assert_int_equal(perfdb_cpu_isa(), hw);
	static const char *const names[] = { "sse2", "avx2", "avx512", "avx512_bf16" };
	for (int cap = 0; cap < 4; cap++) {
		setenv("PERFDB_MAX_CPU_ISA", names[cap], 1);
		enum perfdb_cpu_isa want = (enum perfdb_cpu_isa)cap < hw ? (enum perfdb_cpu_isa)cap : hw;
		assert_int_equal(perfdb_cpu_isa(), want);
	}
	setenv("PERFDB_MAX_CPU_ISA", "bogus", 1);
	assert_int_equal(perfdb_cpu_isa(), hw);
	unsetenv("PERFDB_MAX_CPU_ISA");
}

/* The level agrees with what the compiler's own cpuid query says of the
 * features each level promises. */
static void test_detect_matches_features(void **state)
{
	(void)state;
#if defined(__x86_64__)
	enum perfdb_cpu_isa hw = perfdb_cpu_isa_detect();
	if (hw >= PERFDB_ISA_AVX2)
		assert_true(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
	else
		assert_false(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
	int has512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		     __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
	if (hw >= PERFDB_ISA_AVX512)
		assert_true(has512);
	if (hw >= PERFDB_ISA_AVX512_BF16)
		assert_true(__builtin_cpu_supports("avx512bf16"));
#else
	assert_int_equal(perfdb_cpu_isa_detect(), PERFDB_ISA_SSE2);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_names),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_ceiling_rule),
		cmocka_unit_test(test_detect_matches_features),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
