/*
 * One CPU backend context (src/backend/backend.h open) for a test program,
 * opened on first use and kept to the end (the engine hands a run's
 * context to every case; tests that call an op directly do the same).
 */
#ifndef PERFDB_TEST_CPU_CTX_H
#define PERFDB_TEST_CPU_CTX_H

#include <dnnl.h>

#include "backend/backend.h"

static inline struct perfdb_op_case *with_ctx(struct perfdb_op_case *c)
{
	static void *ctx;
	if (!ctx) {
		struct perfdb_err e;
		perfdb_err_clear(&e);
		if (perfdb_backend_cpu.open(1, 0, &ctx, &e) < 0)
			ctx = NULL;
	}
	c->backend_ctx = ctx;
	return c;
}

/*
 * Whether oneDNN's int8 GEMMs have VNNI here (as ONEDNN_MAX_CPU_ISA leaves
 * them).  Below VNNI (AVX2, AVX-512 without VNNI) they add pairs of u8 x s8
 * products in int16 with saturation (vpmaddubsw; oneDNN's "Nuances of int8
 * computations"), so full-range operands can overflow there: the tests keep
 * int8 weights within [-64, 63], where no pair can (255 * 64 * 2 < 32768)
 * and the result is exact on every ISA, and widen them only where this holds.
 */
static inline int cpu_test_int8_vnni(void)
{
	unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
	return (isa & (unsigned)dnnl_cpu_isa_avx512_core_vnni) == (unsigned)dnnl_cpu_isa_avx512_core_vnni ||
	       (isa & (unsigned)dnnl_cpu_isa_avx2_vnni) == (unsigned)dnnl_cpu_isa_avx2_vnni;
}

#endif
