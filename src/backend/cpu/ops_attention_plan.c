/*
 * The CPU attention kernel's plan (ops_attention_kernel.h): a problem's
 * work items and per-thread scratch, which item kernel runs each item
 * (ops_attention_internal.h lists them), and the threads that run them.
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_attention_internal.h"

#define MAX_ROWS 128          /* query rows per item (M) */
#define PART_MIN_TILES 4      /* keys of a part of a split decode row, in tiles of ATTN_BK */

struct attn_plan {
	const struct attn_problem *p;
	struct item *items;
	size_t nitems;
	size_t *groups;           /* split rows: items[groups[2k]] .. + groups[2k + 1] are one row's parts */
	size_t ngroups;
	float *parts;             /* the parts' partial results (struct item's part) */
	int threads;
	size_t mp, dk, scratch;   /* floats per thread */
	float *mem;
	atomic_size_t next;
	int64_t bq;
	int rows_path;            /* decode-shaped items take attn_run_decode(_bf16) */
	int bf16;                 /* bf16 tiles and vdpbf16ps (ATTN_BF16) */
};

static size_t scr_floats(size_t mp, size_t dk, size_t dv)
{
	size_t w = dk > dv ? dk : dv;
	return al16(dk * mp) + al16(ATTN_BK * dk) + al16(ATTN_BK * dv) + al16(ATTN_BK * mp) +
	       al16(dv * mp) + 5 * al16(mp) + al16(w);
}

static struct scr scr_at(float *base, size_t mp, size_t dk, size_t dv, float *parts)
{
	struct scr s;
	s.parts = parts;
	float *p = base;
	s.qt = p; p += al16(dk * mp);
	s.k = p; p += al16(ATTN_BK * dk);
	s.v = p; p += al16(ATTN_BK * dv);
	s.st = p; p += al16(ATTN_BK * mp);
	s.ot = p; p += al16(dv * mp);
	s.m = p; p += al16(mp);
	s.l = p; p += al16(mp);
	s.alpha = p; p += al16(mp);
	s.end = (int32_t *)p; p += al16(mp);
	p += al16(mp);
	s.row = p;
	return s;
}

int attn_plan_new(struct attn_plan **out, const struct attn_problem *p, struct perfdb_op_case *c,
		  struct perfdb_err *err)
{
	int threads = c->threads;
	*out = NULL;
	if (p->hkv < 1 || p->hq % p->hkv != 0 || p->dq < 1 || p->dv < 1 || p->dr < 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "attention: bad head counts or dims");
	int64_t G = p->hq / p->hkv;
	if (G > MAX_ROWS)
		return perfdb_err_set(err, PERFDB_EINVAL, "attention: %lld query heads per kv head (at most %d)",
				      (long long)G, MAX_ROWS);
	struct attn_plan *pl = calloc(1, sizeof(*pl));
	if (!pl)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	pl->p = p;
	pl->bq = p->per_query ? 1 : MAX_ROWS / G;
	size_t n = 0;
	for (int64_t b = 0; b < p->nb; b++)
		n += (size_t)(p->hkv * ((p->qlen[b] + pl->bq - 1) / pl->bq));
	pl->rows_path = (p->dq + p->dr) % 16 == 0 && p->dv % 16 == 0;
	/*
	 * A decode row with fewer items than eight times the threads, such as
	 * batch 1 with one item per kv head, is split along its keys
	 * (flash-decoding): each part of at least PART_MIN_TILES tiles is an
	 * item of its own, keeps its rows' max, sum and unnormalised outputs,
	 * and the parts are combined after all items ran.  Eight items a
	 * thread, where the keys allow, so the atomic counter can even out
	 * threads that stream at different rates: on 2 threads, 4 items each
	 * read 46-54 % of the triad and 8 items each 50-60 %
	 * (docs/measuring.md); at twice the threads the first split stopped.
	 */
	int64_t split = 1;
	if (threads > 1 && pl->rows_path && n > 0 && n < 8 * (size_t)threads)
		split = (int64_t)((8 * (size_t)threads + n - 1) / n);
	size_t nmax = n * (size_t)split;
	pl->items = malloc((nmax ? nmax : 1) * sizeof(*pl->items));
	pl->groups = split > 1 ? malloc(2 * n * sizeof(*pl->groups)) : NULL;
	if (!pl->items || (split > 1 && !pl->groups)) {
		attn_plan_free(pl);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	size_t nparts = 0;
	/* later query tiles first: under a causal mask they cost the most */
	for (int64_t b = 0; b < p->nb; b++)
		for (int64_t s0 = ((p->qlen[b] + pl->bq - 1) / pl->bq - 1) * pl->bq; s0 >= 0; s0 -= pl->bq)
			for (int64_t g = 0; g < p->hkv; g++) {
				int64_t ns = p->qlen[b] - s0 < pl->bq ? p->qlen[b] - s0 : pl->bq;
				int64_t tiles = (p->kvlen[b] + ATTN_BK - 1) / ATTN_BK;
				int64_t np = split < tiles / PART_MIN_TILES ? split : tiles / PART_MIN_TILES;
				if (np < 2 || ns * G > ROWS_MAX) {   /* prefill items take no parts */
					pl->items[pl->nitems++] = (struct item){ b, g, s0, ns, 0, INT64_MAX, -1 };
					continue;
				}
				int64_t per = (tiles + np - 1) / np * ATTN_BK;
				pl->groups[2 * pl->ngroups] = pl->nitems;
				pl->groups[2 * pl->ngroups++ + 1] = (size_t)np;
				for (int64_t q = 0; q < np; q++) {
					pl->items[pl->nitems++] = (struct item){ b, g, s0, ns, q * per, (q + 1) * per,
										 (int64_t)nparts };
					nparts += (size_t)(ns * G) * (size_t)(p->dv + 2);
				}
			}
	if (nparts) {
		pl->parts = malloc(nparts * sizeof(float));
		if (!pl->parts) {
			attn_plan_free(pl);
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory (attention parts)");
		}
	}
	pl->threads = threads < 1 ? 1 : threads;
	if ((size_t)pl->threads > pl->nitems)
		pl->threads = pl->nitems ? (int)pl->nitems : 1;
	pl->mp = al16((size_t)(pl->bq * G));
#ifdef ATTN_BF16
	pl->bf16 = cpu_isa_of(c) >= PERFDB_ISA_AVX512_BF16 && p->q->dtype == PERFDB_DTYPE_BF16 &&
		   p->k->dtype == PERFDB_DTYPE_BF16 && p->v->dtype == PERFDB_DTYPE_BF16 &&
		   (!p->dr || (p->qr->dtype == PERFDB_DTYPE_BF16 && p->kr->dtype == PERFDB_DTYPE_BF16)) &&
		   p->dq % 2 == 0 && p->dr % 2 == 0 && !getenv("PERFDB_ATTN_FP32");
#endif
	/* the tiles of the row's decode and prefill items (work() below) */
	snprintf(c->kernel, sizeof(c->kernel), "own:attention_%s", pl->bf16 ? "avx512_bf16" : "fp32");
	pl->dk = (size_t)(p->dq + p->dr);
	pl->scratch = scr_floats(pl->mp, pl->dk, (size_t)p->dv);
	pl->mem = aligned_alloc(64, pl->scratch * sizeof(float) * (size_t)pl->threads);
	if (!pl->mem) {
		attn_plan_free(pl);
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory (attention scratch)");
	}
	memset(pl->mem, 0, pl->scratch * sizeof(float) * (size_t)pl->threads);
	*out = pl;
	return 0;
}

/* Work items until none is left, with thread t's scratch. */
static void work(struct attn_plan *pl, int t)
{
	struct scr s = scr_at(pl->mem + pl->scratch * (size_t)t, pl->mp, pl->dk, (size_t)pl->p->dv, pl->parts);
	for (;;) {
		size_t i = atomic_fetch_add(&pl->next, 1);
		if (i >= pl->nitems)
			break;
		const struct item *it = &pl->items[i];
		int rows = pl->rows_path && it->ns * (pl->p->hq / pl->p->hkv) <= ROWS_MAX;
#ifdef ATTN_BF16
		if (rows && pl->bf16 && (pl->p->dq + pl->p->dr) % 32 == 0 && pl->p->dq + pl->p->dr <= 256 &&
		    pl->p->dv % 32 == 0 && pl->p->dv <= 512)
			attn_run_decode_bf16(pl->p, it, &s);
		else
#endif
		if (rows)
			attn_run_decode(pl->p, it, &s);
		else
			attn_run_prefill(pl->p, it, &s, pl->bf16);
	}
}

/* Split rows t, t + nt, ... combined and stored, with thread t's scratch row. */
static void merge(struct attn_plan *pl, int t, int nt)
{
	if (!pl->ngroups)
		return;
	struct scr s = scr_at(pl->mem + pl->scratch * (size_t)t, pl->mp, pl->dk, (size_t)pl->p->dv, pl->parts);
	for (size_t k = (size_t)t; k < pl->ngroups; k += (size_t)nt)
		attn_decode_merge(pl->p, &pl->items[pl->groups[2 * k]], pl->groups[2 * k + 1], pl->parts, s.row);
}

/*
 * The items are shared through an atomic counter by the OpenMP team the
 * other kernels of the backend use (cpu_parallel): threads created per call
 * cost tens of microseconds on a decode row, and a second pool would spin
 * against the first on the same cores.
 */
int attn_plan_run(struct attn_plan *pl, struct perfdb_err *err)
{
	(void)err;
	atomic_store(&pl->next, 0);
	if (pl->threads <= 1) {
		work(pl, 0);
		merge(pl, 0, 1);
		return 0;
	}
#pragma omp parallel num_threads(pl->threads)
	{
		work(pl, omp_get_thread_num());
#pragma omp barrier
		merge(pl, omp_get_thread_num(), omp_get_num_threads());
	}
	return 0;
}

void attn_plan_free(struct attn_plan *pl)
{
	if (!pl)
		return;
	free(pl->items);
	free(pl->groups);
	free(pl->parts);
	free(pl->mem);
	free(pl);
}
