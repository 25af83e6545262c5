/*
 * Binary element-wise ops on float tensors (Add, Sub, Mul, RealDiv): out =
 * in0 op in1, in1 broadcast by numpy's rule, at memory speed whatever the
 * broadcast (docs/ops.md "Binary element-wise ops").
 *
 * The broadcast is planned once per call, not per element: the output's
 * innermost dims over which in1 is either contiguous (its dims equal the
 * output's) or constant (its dims are 1) form one run of `run` elements
 * (dims of 1 in the output belong to either).  Within a run in1 is a
 * contiguous row, loaded and converted like in0, or one value; so the inner
 * loop is a plain vectorisable loop over fp32 blocks for every form: the
 * bias row (T,D)+(D), the per-row scale (T,D)·(T,1), the attention mask
 * (B,H,S,S)+(1,1,S,S).  Only a run's first element locates its in1
 * element with the index arithmetic (cpu_bcast_at).  Blocks go to the
 * threads in contiguous ranges (cpu_parallel).
 */
#include "cpu_internal.h"

#define BLK 1024

struct bin {
	const struct perfdb_tensor *a, *b;   /* b NULL: in0 op 1 */
	struct perfdb_tensor *o;
	enum cpu_binop op;
	size_t n, run;
	int b_row;                           /* b contiguous along a run (else one value) */
};

/* The innermost run of output dims over which b is contiguous or constant. */
static void plan(struct bin *p)
{
	const struct perfdb_tensor *b = p->b, *o = p->o;
	p->run = p->n ? p->n : 1;
	p->b_row = 1;
	if (!b || (size_t)b->numel == p->n)
		return;
	size_t run = 1;
	int pat = -1;
	for (size_t k = 0; k < o->ndims; k++) {
		size_t od = (size_t)o->dims[o->ndims - 1 - k];
		size_t bd = k < b->ndims ? (size_t)b->dims[b->ndims - 1 - k] : 1;
		if (od == 1)
			continue;
		int s = bd != 1;
		if (pat < 0)
			pat = s;
		else if (s != pat)
			break;
		run *= od;
	}
	p->run = run;
	p->b_row = pat == 1;
}

#define APPLY(OPR)                                                              \
	do {                                                                    \
		if (row)                                                        \
			for (size_t j = 0; j < m; j++)                          \
				x[j] = x[j] OPR y[j];                           \
		else                                                            \
			for (size_t j = 0; j < m; j++)                          \
				x[j] = x[j] OPR s;                              \
	} while (0)

CPU_CLONES static void bin_range(void *ctx, size_t lo, size_t hi, int tid)
{
	(void)tid;
	const struct bin *p = ctx;
	float x[BLK], y[BLK];
	size_t end = hi * BLK < p->n ? hi * BLK : p->n;
	for (size_t i = lo * BLK; i < end;) {
		size_t m = end - i < BLK ? end - i : BLK;
		size_t left = p->run - i % p->run;
		if (m > left)
			m = left;
		cpu_load_row(p->a, i, m, x);
		int row = p->b && p->b_row;
		float s = 1.0f;
		if (p->b) {
			size_t at = (size_t)p->b->numel == p->n ? i : cpu_bcast_at(p->b, p->o, i);
			if (row)
				cpu_load_row(p->b, at, m, y);
			else
				s = cpu_ld(p->b, at);
		}
		switch (p->op) {
		case CPU_BIN_ADD: APPLY(+); break;
		case CPU_BIN_SUB: APPLY(-); break;
		case CPU_BIN_MUL: APPLY(*); break;
		case CPU_BIN_DIV: APPLY(/); break;
		}
		cpu_store_row(p->o, i, m, x);
		i += m;
	}
}

void cpu_binary(struct perfdb_op_case *c, enum cpu_binop op)
{
	struct bin p = {
		.a = &c->in[0], .b = c->nin > 1 && c->in[1].present ? &c->in[1] : NULL,
		.o = &c->out[0], .op = op, .n = (size_t)c->out[0].numel,
	};
	plan(&p);
	cpu_parallel((p.n + BLK - 1) / BLK, p.n, c->threads, bin_range, &p);
}
