/*
 * Topology tiers and groups (docs/spec/comm.md §2): rank -> mixed-radix
 * coordinates on the comm grid, the tier of a group, the group of n ranks
 * at a tier, and the run plan (op -> num_devices -> tier) with the
 * reference's skip warnings.
 */
#include <stdio.h>
#include <stdlib.h>

#include "comm/comm.h"

void perfdb_comm_rank_coords(const struct perfdb_comm_grid *g, long rank, long *coords)
{
	long rem = rank;
	for (size_t k = g->ndim; k-- > 0;) {
		coords[k] = rem % g->dim[k];
		rem /= g->dim[k];
	}
	/* what is left past the outermost dimension is dropped: ranks wrap */
}

long perfdb_comm_tier_of(const struct perfdb_comm_grid *g, const long *ranks, size_t n)
{
	long c0[PERFDB_COMM_MAX_DIMS], c[PERFDB_COMM_MAX_DIMS];
	long tier = (long)g->ndim - 1;
	if (n == 0)
		return tier;
	perfdb_comm_rank_coords(g, ranks[0], c0);
	for (size_t i = 1; i < n && tier > 0; i++) {
		perfdb_comm_rank_coords(g, ranks[i], c);
		for (long k = 0; k < tier; k++)
			if (c[k] != c0[k]) {
				tier = k;
				break;
			}
	}
	return tier;
}

long perfdb_comm_tier_of_first(const struct perfdb_comm_grid *g, long n)
{
	long c0[PERFDB_COMM_MAX_DIMS], c[PERFDB_COMM_MAX_DIMS];
	long tier = (long)g->ndim - 1;
	perfdb_comm_rank_coords(g, 0, c0);
	for (long r = 1; r < n && tier > 0; r++) {
		perfdb_comm_rank_coords(g, r, c);
		for (long k = 0; k < tier; k++)
			if (c[k] != c0[k]) {
				tier = k;
				break;
			}
	}
	return tier;
}

long perfdb_comm_span(const struct perfdb_comm_grid *g, long tier)
{
	long span = 1;
	for (size_t k = (size_t)tier; k < g->ndim; k++)
		span *= g->dim[k];
	return span;
}

void perfdb_comm_grid_repr(const struct perfdb_comm_grid *g, char *buf, size_t cap)
{
	size_t w = 0;
	w += (size_t)snprintf(buf, cap, "[");
	for (size_t k = 0; k < g->ndim && w < cap; k++)
		w += (size_t)snprintf(buf + w, cap - w, "%s%ld", k ? ", " : "", g->dim[k]);
	if (w < cap)
		snprintf(buf + w, cap - w, "]");
}

int perfdb_comm_build_group(const struct perfdb_comm_grid *g, long anchor, long n,
			    long tier, long *out, struct perfdb_err *err)
{
	long span = perfdb_comm_span(g, tier);
	if (n > span) {
		char repr[256];
		perfdb_comm_grid_repr(g, repr, sizeof(repr));
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "num_devices=%ld exceeds span size %ld for tier=%ld, grid_shape=%s",
				      n, span, tier, repr);
	}
	/* base: the anchor's coordinates in the dimensions outside the span */
	long coords[PERFDB_COMM_MAX_DIMS], base = 0, stride = 1;
	perfdb_comm_rank_coords(g, anchor, coords);
	for (size_t k = g->ndim; k-- > 0;) {
		if ((long)k < tier)
			base += coords[k] * stride;
		stride *= g->dim[k];
	}
	for (long i = 0; i < n; i++)
		out[i] = base + i;
	return 0;
}

/* ---- the plan ------------------------------------------------------- */

void perfdb_comm_plan_init(struct perfdb_comm_plan *p)
{
	p->v = NULL;
	p->n = p->cap = 0;
}

void perfdb_comm_plan_release(struct perfdb_comm_plan *p)
{
	free(p->v);
	perfdb_comm_plan_init(p);
}

static int plan_add(struct perfdb_comm_plan *p, enum perfdb_comm_op op, long n, long tier,
		    struct perfdb_err *err)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct perfdb_comm_batch *nv = realloc(p->v, cap * sizeof(*nv));
		if (!nv)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
		p->v = nv;
		p->cap = cap;
	}
	p->v[p->n++] = (struct perfdb_comm_batch){ .op = op, .num_devices = n, .tier = tier };
	return 0;
}

int perfdb_comm_plan_build(struct perfdb_comm_plan *p, const enum perfdb_comm_op *ops,
			   size_t nops, const long *nd, size_t nnd, const long *tiers,
			   size_t ntiers, const struct perfdb_comm_grid *g,
			   perfdb_comm_warn_fn warn, void *ctx, struct perfdb_err *err)
{
	for (size_t i = 0; i < nops; i++) {
		for (size_t j = 0; j < nnd; j++) {
			long n = nd[j];
			long auto_tier = tiers ? 0 : perfdb_comm_tier_of_first(g, n);
			const long *tv = tiers ? tiers : &auto_tier;
			size_t nt = tiers ? ntiers : 1;
			for (size_t k = 0; k < nt; k++) {
				long tier = tv[k];
				if (n > perfdb_comm_span(g, tier)) {
					/* only the check of build_group matters here: the
					 * group anchored at rank 0 is always [0..n-1] */
					struct perfdb_err e;
					char msg[PERFDB_ERR_MSG_MAX + 64];
					long dummy;
					perfdb_comm_build_group(g, 0, n, tier, &dummy, &e);
					snprintf(msg, sizeof(msg), "skipping tier=%ld, num_devices=%ld: %s",
						 tier, n, e.msg);
					if (warn)
						warn(ctx, msg);
					continue;
				}
				PERFDB_TRY(plan_add(p, ops[i], n, tier, err));
			}
		}
	}
	return 0;
}
