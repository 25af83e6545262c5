/*
 * bf16 and fp16 storage, one definition for every layer (the replay
 * backends' kernels, the comm stage's reductions, the CUDA backend's host
 * side): conversions to and from float round to nearest, ties to even, and
 * keep NaN a quiet NaN.  Inline, so the kernels' row loops vectorise over them.
 *
 * Formats: bf16 = the top 16 bits of an IEEE binary32 (1 sign, 8 exponent,
 * 7 fraction bits); fp16 = IEEE binary16 (1 sign, 5 exponent bias 15, 10
 * fraction bits, subnormals, max 65504).
 */
#ifndef PERFDB_HALF_H
#define PERFDB_HALF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "perfdb/dtype.h"

static inline uint32_t perfdb_f2u_(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static inline float perfdb_u2f_(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static inline float perfdb_bf16_to_float(uint16_t h)
{
	return perfdb_u2f_((uint32_t)h << 16);
}

static inline uint16_t perfdb_bf16_from_float(float f)
{
	uint32_t u = perfdb_f2u_(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)           /* NaN: keep it quiet */
		return (uint16_t)((u >> 16) | 0x0040u);
	u += 0x7fffu + ((u >> 16) & 1u);                /* round to nearest even */
	return (uint16_t)(u >> 16);
}

static inline float perfdb_fp16_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu, frac = h & 0x3ffu;
	if (exp == 0x1f)                                /* inf / NaN */
		return perfdb_u2f_(sign | 0x7f800000u | (frac << 13));
	if (exp == 0) {
		if (frac == 0)
			return perfdb_u2f_(sign);
		/* subnormal: frac * 2^-24, exact in float */
		float v = (float)frac * 0x1p-24f;
		return sign ? -v : v;
	}
	return perfdb_u2f_(sign | ((exp + 112u) << 23) | (frac << 13));
}

static inline uint16_t perfdb_fp16_from_float(float f)
{
	uint32_t u = perfdb_f2u_(f);
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

/* Element i of a buffer of float dtype d (fp32, bf16 or fp16) as float. */
static inline float perfdb_float_elem(const void *data, enum perfdb_dtype d, size_t i)
{
	switch (d) {
	case PERFDB_DTYPE_BF16: return perfdb_bf16_to_float(((const uint16_t *)data)[i]);
	case PERFDB_DTYPE_FLOAT16: return perfdb_fp16_to_float(((const uint16_t *)data)[i]);
	default: return ((const float *)data)[i];
	}
}

/*
 * Element i of an integer buffer (int8..int64, uint8, bool), or of a float
 * one holding whole numbers (Index's fp32 indices, spec §4), as int64.
 */
static inline int64_t perfdb_int_elem(const void *data, enum perfdb_dtype d, size_t i)
{
	switch (d) {
	case PERFDB_DTYPE_INT8: return ((const int8_t *)data)[i];
	case PERFDB_DTYPE_UINT8:
	case PERFDB_DTYPE_BOOL: return ((const uint8_t *)data)[i];
	case PERFDB_DTYPE_INT16: return ((const int16_t *)data)[i];
	case PERFDB_DTYPE_INT32: return ((const int32_t *)data)[i];
	case PERFDB_DTYPE_INT64: return ((const int64_t *)data)[i];
	default: return (int64_t)perfdb_float_elem(data, d, i);
	}
}

#endif
