/*
 * bf16 and fp16 storage for the reductions of perfdb comm (docs/spec/comm.md §1
 * dtypes).  MPI has no 16-bit float types, so the harness sends them as
 * MPI_UINT16_T and sums them with a user-defined MPI_Op built on
 * perfdb_bf16_sum / perfdb_fp16_sum: each pair is widened to float, added,
 * and rounded once back to 16 bits (nearest, ties to even) — what a
 * device's bf16/fp16 add does.
 *
 * Formats: bf16 = the top 16 bits of an IEEE binary32 (1 sign, 8 exponent,
 * 7 fraction bits); fp16 = IEEE binary16 (1 sign, 5 exponent bias 15, 10
 * fraction bits, subnormals, max 65504).
 */
#include <string.h>

#include "perfdb/comm.h"

static uint32_t f2u(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float u2f(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

float perfdb_bf16_to_float(uint16_t h)
{
	return u2f((uint32_t)h << 16);
}

uint16_t perfdb_bf16_from_float(float f)
{
	uint32_t u = f2u(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)           /* NaN: keep it quiet */
		return (uint16_t)((u >> 16) | 0x0040u);
	u += 0x7fffu + ((u >> 16) & 1u);                /* round to nearest even */
	return (uint16_t)(u >> 16);
}

float perfdb_fp16_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu, frac = h & 0x3ffu;
	if (exp == 0x1f)                                /* inf / NaN */
		return u2f(sign | 0x7f800000u | (frac << 13));
	if (exp == 0) {
		if (frac == 0)
			return u2f(sign);
		/* subnormal: frac * 2^-24, exact in float */
		float v = (float)frac * 0x1p-24f;
		return sign ? -v : v;
	}
	return u2f(sign | ((exp + 112u) << 23) | (frac << 13));
}

uint16_t perfdb_fp16_from_float(float f)
{
	uint32_t u = f2u(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
	uint32_t a = u & 0x7fffffffu;
	if (a > 0x7f800000u)                            /* NaN */
		return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
	if (a >= 0x477ff000u)                           /* >= 65520: rounds to inf */
		return (uint16_t)(sign | 0x7c00u);
	if (a < 0x38800000u) {                          /* below 2^-14: subnormal or 0 */
		if (a < 0x33000000u)                    /* below 2^-25: rounds to 0 */
			return sign;
		uint32_t e = a >> 23;                   /* 102 .. 112 */
		uint32_t m = (a & 0x7fffffu) | 0x800000u;
		uint32_t shift = 126u - e;              /* value = m * 2^(e-150); want units of 2^-24 */
		uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
		if (rem > half || (rem == half && (q & 1u)))
			q++;
		return (uint16_t)(sign | q);
	}
	/* normal: rebias 127 -> 15 and round the 13 dropped bits to nearest even */
	uint32_t r = a - 0x38000000u;                   /* exponent - 112 */
	r += 0x0fffu + ((r >> 13) & 1u);
	return (uint16_t)(sign | (r >> 13));
}

void perfdb_bf16_sum(const uint16_t *in, uint16_t *inout, size_t n)
{
	for (size_t i = 0; i < n; i++)
		inout[i] = perfdb_bf16_from_float(perfdb_bf16_to_float(in[i]) +
						  perfdb_bf16_to_float(inout[i]));
}

void perfdb_fp16_sum(const uint16_t *in, uint16_t *inout, size_t n)
{
	for (size_t i = 0; i < n; i++)
		inout[i] = perfdb_fp16_from_float(perfdb_fp16_to_float(in[i]) +
						  perfdb_fp16_to_float(inout[i]));
}
