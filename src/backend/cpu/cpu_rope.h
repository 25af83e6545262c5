/*
 * Helpers shared by the rotary-embedding and KV-cache op files
 * (ops_rope.c, ops_cache.c): the two rotation layouts, the cos/sin table
 * the row does not carry, and the slot mapping written in prepare.
 */
#ifndef PERFDB_CPU_ROPE_H
#define PERFDB_CPU_ROPE_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_internal.h"

/* Widest rotated row (head dim) the kernels take: rows are stack scratch. */
#define CPU_ROPE_MAX_D 1024

/*
 * InterleaveRope's rotation (torch_npu.npu_interleave_rope): the pairs
 * (x[2j], x[2j+1]) are de-interleaved to q = (x[0::2], x[1::2]), then
 * y = q·cos + rotate_half(q)·sin, i.e. for j < d/2
 *   y[j]       = x[2j]·cos[j]         − x[2j+1]·sin[j]
 *   y[j + d/2] = x[2j+1]·cos[j + d/2] + x[2j]·sin[j + d/2].
 * d even; cos, sin hold d values.
 */
void cpu_rope_interleave(const float *restrict x, const float *restrict cos, const float *restrict sin,
			 float *restrict y, size_t d);

/*
 * The NeoX rotation (rotate_half, vLLM's is_neox_style): for j < d/2
 *   y[j]       = x[j]·cos[j]             − x[j + d/2]·sin[j]
 *   y[j + d/2] = x[j + d/2]·cos[j + d/2] + x[j]·sin[j + d/2].
 */
void cpu_rope_neox(const float *restrict x, const float *restrict cos, const float *restrict sin,
		   float *restrict y, size_t d);

/*
 * A (rows, 2·d) fp32 table (d <= CPU_ROPE_MAX_D): row p holds cos(p·f_k) then sin(p·f_k) for
 * k < d, with f_k = base^(−2(k mod d/2)/d) (each angle twice, as vLLM's
 * cos_sin_cache expands it).  NULL when out of memory.
 */
float *cpu_rope_table(size_t rows, size_t d, double base);

/*
 * n distinct slots in [0, nslots) (n <= nslots), deterministic: tokens
 * fill blocks of block_size slots in order, the blocks taken in a
 * scattered order (an affine permutation of the block ids), as a paged
 * KV-cache allocator hands them out.
 */
void cpu_slots_distinct(int64_t *slots, size_t n, int64_t nslots, int64_t block_size);

/* Write v[0..n) into an index tensor of any integer or float dtype. */
void cpu_store_index(struct perfdb_tensor *t, const int64_t *v, size_t n);

#endif
