/*
 * Int8 quantisation helpers shared by ops_quant.c and ops_moe.c: symmetric
 * per-row (dynamic) quantisation and storing integer values into a tensor
 * of any dtype (int8 normally; a float-typed slot of a synthetic table row
 * holds the same integers as floats).
 */
#ifndef PERFDB_CPU_QUANT_H
#define PERFDB_CPU_QUANT_H

#include <math.h>
#include <stdint.h>

#include "cpu_internal.h"

/* round half to even, saturated to int8 */
static inline float cpu_q8(float v)
{
	v = nearbyintf(v);
	return v < -128.0f ? -128.0f : v > 127.0f ? 127.0f : v;
}

/*
 * Dynamic per-row quantisation of x[0..n) in place to integer values:
 * scale = max|x| / 127, x <- round(x / scale); returns the scale (0 for an
 * all-zero row, whose values stay 0).
 */
float cpu_quant_row(float *x, size_t n);
/* Store n integer-valued floats into t at element off, converted to t's dtype. */
void cpu_store_q(struct perfdb_tensor *t, size_t off, size_t n, const float *q);
/* Whether t holds int8 (or can hold the integer values as another dtype we write). */
int cpu_is_q_target(enum perfdb_dtype d);
/* A float tensor's values as int8 (round(v * 127), for float-typed weights of int8 kernels). */
void cpu_to_s8(const struct perfdb_tensor *t, int8_t *dst);

#endif
