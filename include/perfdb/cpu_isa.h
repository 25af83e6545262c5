/*
 * x86-64 instruction-set levels for perfdb's own SIMD kernels.
 *
 * Every hand-vectorised path (the CPU backend's kernels, the comm stage's
 * 16-bit reductions) dispatches on one of these levels instead of asking
 * cpuid itself, so that one variable, PERFDB_MAX_CPU_ISA, can hold them all
 * down at once -- the way ONEDNN_MAX_CPU_ISA holds down oneDNN.  That is how
 * the test suite proves the AVX2 and baseline paths on an AVX-512 machine
 * (docs/guide.md "Environment variables").
 *
 * The levels are cumulative; each names what a kernel of that level may use:
 *   sse2         the x86-64 baseline (the scalar/compiler-vectorised paths)
 *   avx2         AVX2 + FMA + F16C (Haswell, Zen 1 and later)
 *   avx512       AVX-512 F, BW, VL, DQ (Skylake-SP, Zen 4 and later)
 *   avx512_bf16  avx512 + AVX512_BF16 + AVX512_VNNI (Cooper Lake, Sapphire
 *                Rapids, Zen 4)
 */
#ifndef PERFDB_CPU_ISA_H
#define PERFDB_CPU_ISA_H

#include "perfdb/err.h"

enum perfdb_cpu_isa {
	PERFDB_ISA_SSE2 = 0,
	PERFDB_ISA_AVX2 = 1,
	PERFDB_ISA_AVX512 = 2,
	PERFDB_ISA_AVX512_BF16 = 3,
};

/* The highest level this CPU supports (cpuid only; ignores the ceiling). */
enum perfdb_cpu_isa perfdb_cpu_isa_detect(void);

/*
 * Parse a ceiling name ("sse2", "avx2", "avx512", "avx512_bf16"; case does
 * not matter).  Fills *out and returns 0, or returns -PERFDB_EINVAL with a
 * message naming PERFDB_MAX_CPU_ISA and the accepted values.
 */
int perfdb_cpu_isa_parse(const char *name, enum perfdb_cpu_isa *out, struct perfdb_err *err);

/*
 * The level kernels may use: the detected level, held down to
 * PERFDB_MAX_CPU_ISA when that is set.  An unparsable value counts as no
 * ceiling here; the CLI rejects it before any command runs (env_check.c).
 * Reads the environment on each call: call it when a plan is made, not per
 * element.
 */
enum perfdb_cpu_isa perfdb_cpu_isa(void);

/* Lower-case name of a level, as PERFDB_MAX_CPU_ISA spells it. */
const char *perfdb_cpu_isa_name(enum perfdb_cpu_isa isa);

#endif
