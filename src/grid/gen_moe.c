/*
 * MoE generator functions (docs/spec/grid.md §3 "Generator functions",
 * reference generators/moe.py): GroupedMatmul and DispatchFFNCombine.
 *
 * grouped_matmul: per MoE model, ep, tp and token count t, with
 *   hid = h//tp, ei = expert_inter//tp, E = experts_per_card//ep (each >= 1):
 *   (t,hid);(E,hid,ei//16,16);();(E,ei);();();();(E,);(t,) -> (t,ei)
 * dispatch_ffn_combine: experts per rank E = (experts//cards)//ep over the
 *   deployment cards (cards <= experts) and ep <= experts//cards, kept when
 *   1 <= E <= max_experts_per_rank, ascending; n = 2*(ei//tp); tokens m
 *   with m*h*topk > max_token_elems skipped; a repeated (m,h,n,E,topk) of
 *   one model is dropped:
 *   (m,h);(E,h,n);(E,n//2,h);(m,k);(E*n,);(E*h,);(m,k) -> (m,h);(E,)
 *   and `EP Size` = experts//E.
 */
#include "grid_internal.h"
#include "perfdb/schema.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t max1(int64_t v)
{
	return v > 1 ? v : 1;
}

static void set(struct grid_shape *s, size_t nd, int64_t a, int64_t b, int64_t c, int64_t d)
{
	int64_t v[4] = { a, b, c, d };
	grid_shape_set(s, nd, v);
}

int grid_gen_grouped_matmul(const struct grid_gen_ctx *g, grid_emit_fn emit, void *arg,
			    struct perfdb_err *err)
{
	struct grid_cand *c = calloc(1, sizeof(*c));
	if (!c)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	int rc = 0;
	c->nin = 9;
	c->nout = 1;
	for (size_t i = 0; i < g->models->n && rc == 0; i++) {
		const struct perfdb_grid_model *m = &g->models->v[i];
		if (!grid_model_is_moe(m))
			continue;
		for (size_t e = 0; e < m->nep && rc == 0; e++)
			for (size_t t = 0; t < m->ntp && rc == 0; t++) {
				int64_t hid = max1(m->hidden / m->tp[t]);
				int64_t ei = max1(m->expert_inter / m->tp[t]);
				int64_t E = max1(m->experts_per_card / m->ep[e]);
				int64_t rows = max1(ei / 16);
				for (size_t k = 0; k < g->p->tokens.n && rc == 0; k++) {
					int64_t tok = g->p->tokens.v[k];
					memset(c->in, 0, sizeof(c->in[0]) * 9);
					set(&c->in[0], 2, tok, hid, 0, 0);
					set(&c->in[1], 4, E, hid, rows, 16);
					set(&c->in[3], 2, E, ei, 0, 0);
					set(&c->in[7], 1, E, 0, 0, 0);
					set(&c->in[8], 1, tok, 0, 0, 0);
					set(&c->out[0], 2, tok, ei, 0, 0);
					rc = emit(arg, c, err);
				}
			}
	}
	free(c);
	return rc;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int grid_gen_dfc(const struct grid_gen_ctx *g, grid_emit_fn emit, void *arg,
		 struct perfdb_err *err)
{
	const struct grid_pattern *p = g->p;
	struct grid_cand *c = calloc(1, sizeof(*c));
	size_t cap = p->cards.n * PERFDB_GRID_MAX_PAR + 1;
	int64_t *eset = malloc(cap * sizeof(*eset));
	if (!c || !eset) {
		free(c);
		free(eset);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	char ep_size[32];
	c->nin = 7;
	c->nout = 2;
	c->nextra = 1;
	c->extra_col[0] = PERFDB_COL_EP_SIZE;
	c->extra_val[0] = ep_size;
	int rc = 0;
	for (size_t i = 0; i < g->models->n && rc == 0; i++) {
		const struct perfdb_grid_model *m = &g->models->v[i];
		if (!grid_model_is_moe(m))
			continue;
		size_t ne = 0;
		for (size_t k = 0; k < p->cards.n; k++) {
			int64_t cards = p->cards.v[k];
			if (cards > m->experts)
				continue;
			int64_t epc = m->experts / cards;
			for (size_t e = 0; e < m->nep; e++) {
				if (m->ep[e] > epc)
					continue;
				int64_t E = max1(epc / m->ep[e]);
				if (E < 1 || E > p->max_experts_per_rank)
					continue;
				bool have = false;
				for (size_t j = 0; j < ne; j++)
					have |= eset[j] == E;
				if (!have)
					eset[ne++] = E;
			}
		}
		qsort(eset, ne, sizeof(*eset), cmp_i64);
		int64_t h = m->hidden, topk = m->topk;
		/* keys (m, n, E) seen for this model (h and topk are fixed per model) */
		size_t nseen = 0, capseen = 0;
		int64_t(*seen)[3] = NULL;
		for (size_t j = 0; j < ne && rc == 0; j++) {
			int64_t E = eset[j];
			snprintf(ep_size, sizeof(ep_size), "%" PRId64, m->experts / E);
			for (size_t t = 0; t < m->ntp && rc == 0; t++) {
				int64_t n = max1(m->expert_inter / m->tp[t]) * 2;
				for (size_t k = 0; k < p->tokens.n && rc == 0; k++) {
					int64_t tok = p->tokens.v[k];
					double elems = (double)tok * (double)h * (double)topk;
					if (elems > (double)p->max_token_elems)
						continue;
					bool dup = false;
					for (size_t s = 0; s < nseen && !dup; s++)
						dup = seen[s][0] == tok && seen[s][1] == n && seen[s][2] == E;
					if (dup)
						continue;
					if (nseen == capseen) {
						capseen = capseen ? capseen * 2 : 64;
						int64_t(*ns)[3] = realloc(seen, capseen * sizeof(*ns));
						if (!ns) {
							rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
							break;
						}
						seen = ns;
					}
					seen[nseen][0] = tok;
					seen[nseen][1] = n;
					seen[nseen][2] = E;
					nseen++;
					set(&c->in[0], 2, tok, h, 0, 0);
					set(&c->in[1], 3, E, h, n, 0);
					set(&c->in[2], 3, E, n / 2, h, 0);
					set(&c->in[3], 2, tok, topk, 0, 0);
					set(&c->in[4], 1, E * n, 0, 0, 0);
					set(&c->in[5], 1, E * h, 0, 0, 0);
					set(&c->in[6], 2, tok, topk, 0, 0);
					set(&c->out[0], 2, tok, h, 0, 0);
					set(&c->out[1], 1, E, 0, 0, 0);
					rc = emit(arg, c, err);
				}
			}
		}
		free(seen);
	}
	free(eset);
	free(c);
	return rc;
}
