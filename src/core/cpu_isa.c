/*
 * x86-64 ISA levels and the PERFDB_MAX_CPU_ISA ceiling: see
 * include/perfdb/cpu_isa.h.  On other architectures every query answers the
 * baseline, so the portable paths run.
 */
#include "perfdb/cpu_isa.h"

#include <stdlib.h>
#include <strings.h>

static const char *const names[] = { "sse2", "avx2", "avx512", "avx512_bf16" };

enum perfdb_cpu_isa perfdb_cpu_isa_detect(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	__builtin_cpu_init();
	if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
		return PERFDB_ISA_SSE2;
	/* F16C has no __builtin_cpu_supports name in gcc 12; every CPU with
	 * AVX2 and FMA has it (Haswell, Piledriver and later). */
	if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")))
		return PERFDB_ISA_AVX2;
	if (!(__builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512vnni")))
		return PERFDB_ISA_AVX512;
	return PERFDB_ISA_AVX512_BF16;
#else
	return PERFDB_ISA_SSE2;
#endif
}

int perfdb_cpu_isa_parse(const char *name, enum perfdb_cpu_isa *out, struct perfdb_err *err)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcasecmp(name, names[i]) == 0) {
			*out = (enum perfdb_cpu_isa)i;
			return 0;
		}
	}
	return perfdb_err_set(err, PERFDB_EINVAL,
			      "PERFDB_MAX_CPU_ISA: invalid value '%s' (expected sse2, avx2, avx512 or avx512_bf16)",
			      name);
}

enum perfdb_cpu_isa perfdb_cpu_isa(void)
{
	enum perfdb_cpu_isa hw = perfdb_cpu_isa_detect();
	const char *v = getenv("PERFDB_MAX_CPU_ISA");
	enum perfdb_cpu_isa cap = hw;
	if (v && perfdb_cpu_isa_parse(v, &cap, NULL) == 0 && cap < hw)
		return cap;
	return hw;
}

const char *perfdb_cpu_isa_name(enum perfdb_cpu_isa isa)
{
	if ((unsigned)isa < sizeof(names) / sizeof(names[0]))
		return names[isa];
	return "unknown";
}
