/*
 * One CPU backend context (src/backend/backend.h open) for a test program,
 * opened on first use and kept to the end (the engine hands a run's
 * context to every case; tests that call an op directly do the same).
 */
#ifndef PERFDB_TEST_CPU_CTX_H
#define PERFDB_TEST_CPU_CTX_H

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

#endif
