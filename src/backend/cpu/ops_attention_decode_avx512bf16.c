/*
 * Decode items in bf16 on CPUs with AVX512_BF16 (ops_attention_internal.h):
 * attn_run_decode's items (ops_attention_decode.c) when q, k and v are bf16,
 * the q·k dim a multiple of 32 up to 256 and the value dim a multiple of 32
 * up to 512.  AVX512_BF16 end to end (tile staging, both products, the
 * softmax's reductions), so one file: its inner loops are templates over
 * row and vector counts that must inline into the item loop.
 */
#include <math.h>
#include <string.h>

#include "ops_attention_internal.h"

#ifdef ATTN_BF16
/*
 * The decode kernel: attn_run_decode for bf16 on AVX512_BF16.  Both products
 * are small GEMMs on vdpbf16ps with a broadcast operand.  Scores: the key
 * tile transposed by dword pairs (kt_block), so a broadcast query pair times
 * one Kt row gives 16 keys' partial scores, with no horizontal sums.
 * p·v: value rows interleaved by key pairs with vpunpck{l,h}wd, which work
 * inside 128-bit lanes, so a 32-dim chunk's lanes hold its dims in
 * vlane_dim() order and each output row is put back in order once, when
 * stored.  Both run 4 query rows at a time: a vector loaded serves 4 rows,
 * and 16 independent accumulators cover the vdpbf16ps latency.  A fully
 * visible tile's softmax takes its row maxima from the score kernel and
 * needs no masks.  The next tile streams in through the prefetch queue.
 */

/* rows[t] = the row of key j0 + t, t < n. */
static void tile_rows(const struct attn_problem *p, int64_t b, int64_t g, int64_t s0, int64_t j0, int64_t n,
		      int64_t *rows)
{
	if (p->kv_rows) {
		p->kv_rows(p->ctx, b, g, s0, j0, n, rows);
		return;
	}
	for (int64_t t = 0; t < n; t++)
		rows[t] = p->kv_row(p->ctx, b, g, s0, j0 + t);
}

/*
 * The next tile's cache lines, prefetched while the core computes this one,
 * spread evenly over the steps of both products: each step earns `lines`
 * credits and a line is issued per `per` credits, where per is the number
 * of steps the last tile took (the first tile: two lines a step).  The lines
 * are held as runs of bytes (a tile of a paged cache is one run per tensor;
 * scattered rows one run per row and tensor), not as a list of addresses:
 * filling a list of 512 addresses a tile cost 13 % of the kernel.
 * Bursts stall: prefetching a tile at once (per tile, per 16 keys), or all
 * of it during the score product alone, filled the core's miss buffers, and
 * the load after the prefetch waited (a sixth of the kernel's time, hot).
 */
struct pfq_run {
	const char *s, *e;
};
#define PFQ_RUNS (ATTN_BK * 3)
struct pfq {
	struct pfq_run run[PFQ_RUNS];
	const char *p;            /* the run being issued: its next line */
	size_t left, r, nr;       /* its lines left, the next run, the runs */
	size_t lines, per, credit, steps;
};

static inline __attribute__((always_inline)) void pfq_one(struct pfq *q)
{
	if (!q->left) {
		if (q->r == q->nr)
			return;
		q->p = q->run[q->r].s;
		q->left = (size_t)(q->run[q->r].e - q->run[q->r].s) / 64;
		q->r++;
	}
	__builtin_prefetch(q->p);
	q->p += 64;
	q->left--;
}

static inline __attribute__((always_inline)) void pfq_step(struct pfq *q)
{
	q->steps++;
	for (q->credit += q->lines; q->credit >= q->per; q->credit -= q->per)
		pfq_one(q);
}

/* The rest of the queue at once; the steps this tile took set the next tile's pace. */
static void pfq_flush(struct pfq *q)
{
	while (q->left || q->r < q->nr)
		pfq_one(q);
	if (q->steps)
		q->per = q->steps;
	q->steps = q->credit = 0;
}

/* Queue [s, s + len) by whole lines (one more run when it does not merge with the last). */
static void pfq_add(struct pfq *q, const char *s, size_t len)
{
	if (!len)
		return;
	const char *a = (const char *)((uintptr_t)s & ~(uintptr_t)63);
	const char *e = (const char *)(((uintptr_t)s + len + 63) & ~(uintptr_t)63);
	if (q->nr && q->run[q->nr - 1].e == a)
		q->run[q->nr - 1].e = e;
	else
		q->run[q->nr++] = (struct pfq_run){ a, e };
	q->lines += (size_t)(e - a) / 64;
}

/* The lines of the K (K rope) and V rows rows[0..n): runs merge where the rows are consecutive. */
static void pfq_fill(struct pfq *q, const struct attn_problem *p, const int64_t *rows, int64_t n)
{
	size_t nk = (size_t)p->dq * 2, nr = (size_t)p->dr * 2, nvb = (size_t)p->dv * 2;
	const char *kb = (const char *)p->k->data, *vb = (const char *)p->v->data;
	const char *rb = nr ? (const char *)p->kr->data : NULL;
	q->p = NULL;
	q->left = q->r = q->nr = q->lines = 0;
	int64_t run = 1;
	while (run < n && rows[run] == rows[0] + run)
		run++;
	if (n > 0 && run == n) {
		pfq_add(q, kb + (size_t)rows[0] * nk, (size_t)n * nk);
		if (rb)
			pfq_add(q, rb + (size_t)rows[0] * nr, (size_t)n * nr);
		pfq_add(q, vb + (size_t)rows[0] * nvb, (size_t)n * nvb);
	} else {
		for (int64_t t = 0; t < n; t++) {
			pfq_add(q, kb + (size_t)rows[t] * nk, nk);
			if (rb)
				pfq_add(q, rb + (size_t)rows[t] * nr, nr);
			pfq_add(q, vb + (size_t)rows[t] * nvb, nvb);
		}
	}
	if (!q->per)
		q->per = q->lines / 2 ? q->lines / 2 : 1;
}

/*
 * The tile of both decode kernels at j0: its rows (fetched a tile before, in
 * rows[j0 / ATTN_BK % 2]), its nk keys padded to nk16; the next tile's rows
 * are fetched and its lines queued, to be prefetched during this tile.  The
 * first tile (k0, the item's first key) has nothing ahead of it to hide
 * behind: it is fetched and prefetched at once.  maxe: the item's key end.
 */
static inline __attribute__((always_inline)) const int64_t *
tile_next(const struct attn_problem *p, int64_t b, int64_t g, int64_t s0, int64_t j0, int64_t k0, int64_t maxe,
	  int64_t rows[2][ATTN_BK], struct pfq *pq, size_t *nk, size_t *nk16)
{
	if (j0 == k0) {
		int64_t n0 = maxe - k0 < ATTN_BK ? maxe - k0 : ATTN_BK;
		tile_rows(p, b, g, s0, k0, n0, rows[k0 / ATTN_BK % 2]);
		pfq_fill(pq, p, rows[k0 / ATTN_BK % 2], n0);
		pfq_flush(pq);
	}
	*nk = (size_t)(maxe - j0 < ATTN_BK ? maxe - j0 : ATTN_BK);
	*nk16 = (*nk + 15) & ~(size_t)15;
	int64_t *next = rows[(j0 / ATTN_BK + 1) % 2];
	int64_t nnext = j0 + 2 * ATTN_BK < maxe ? ATTN_BK : maxe - j0 - ATTN_BK;
	if (nnext > 0)
		tile_rows(p, b, g, s0, j0 + ATTN_BK, nnext, next);
	pfq_fill(pq, p, next, nnext > 0 ? nnext : 0);
	return rows[j0 / ATTN_BK % 2];
}

/* Vp[q] = bf16 rows 2q, 2q+1 interleaved per 32-dim chunk (r1 NULL: zeros). */
static TBF void pack_v_lanes(uint32_t *dst, const uint16_t *r0, const uint16_t *r1, size_t dv)
{
	for (size_t d = 0; d < dv; d += 32) {
		__m512i a = _mm512_loadu_si512(r0 + d);
		__m512i b = r1 ? _mm512_loadu_si512(r1 + d) : _mm512_setzero_si512();
		_mm512_storeu_si512(dst + d, _mm512_unpacklo_epi16(a, b));
		_mm512_storeu_si512(dst + d + 16, _mm512_unpackhi_epi16(a, b));
	}
}

/* The dim held by lane l (0..31) of a 32-dim chunk packed by pack_v_lanes. */
static inline size_t vlane_dim(size_t l)
{
	return l % 16 / 4 * 8 + l / 16 * 4 + l % 4;
}

/*
 * Both products of the decode kernel: acc[r][c] += Σ_k pair(a[r·as + k·ak])·B[k·bs + 16c ..] for R rows
 * and W vectors (constants), a broadcast dword pair of a against a row of B, two prefetches per step.
 */
static inline __attribute__((always_inline)) TBF void
bcast_gemm(__m512 acc[4][4], const uint32_t *a, size_t as, size_t ak, const uint32_t *bm, size_t bs, size_t nk,
	   struct pfq *pq, const int R, const int W)
{
	for (size_t k = 0; k < nk; k++) {
		pfq_step(pq);
		__m512bh bv[4];
		for (int c = 0; c < W; c++)
			bv[c] = (__m512bh)_mm512_loadu_si512(bm + k * bs + (size_t)c * 16);
		for (int r = 0; r < R; r++) {
			__m512bh ab = (__m512bh)_mm512_set1_epi32((int)a[(size_t)r * as + k * ak]);
			for (int c = 0; c < W; c++)
				acc[r][c] = _mm512_dpbf16_ps(acc[r][c], ab, bv[c]);
		}
	}
}

/* O rows [0, R), lanes [0, 16·W): o = o·alpha + Σ_q pair(p_2q, p_2q+1)·Vp[q] (R, W constants); the
 * pair of row r and key pair q is pw[r·pws + q·pwk]. */
static inline __attribute__((always_inline)) TBF void
rows_pv_bf16(float *O, size_t dv, const float *alpha, const uint32_t *pw, size_t pws, size_t pwk,
	     const uint32_t *vp, size_t npairs, struct pfq *pq, const int R, const int W)
{
	__m512 acc[4][4];
	for (int r = 0; r < R; r++)
		for (int c = 0; c < W; c++)
			acc[r][c] = _mm512_mul_ps(_mm512_loadu_ps(O + (size_t)r * dv + (size_t)c * 16),
						  _mm512_set1_ps(alpha[r]));
	bcast_gemm(acc, pw, pws, pwk, vp, dv, npairs, pq, R, W);
	for (int r = 0; r < R; r++)
		for (int c = 0; c < W; c++)
			_mm512_storeu_ps(O + (size_t)r * dv + (size_t)c * 16, acc[r][c]);
}

#define PV_ROWS(R, PWS, PWK)                                                                            \
	do {                                                                                            \
		size_t c0 = 0;                                                                          \
		for (; c0 + 4 <= nv; c0 += 4)                                                           \
			rows_pv_bf16(O + r0 * dv + c0 * 16, dv, s->alpha + r0, pw0 + r0 * PWS, PWS, PWK,   \
				     vp + c0 * 16, np, pq, R, 4);                                           \
		for (; c0 < nv; c0 += 2)                                                                \
			rows_pv_bf16(O + r0 * dv + c0 * 16, dv, s->alpha + r0, pw0 + r0 * PWS, PWS, PWK,   \
				     vp + c0 * 16, np, pq, R, 2);                                           \
	} while (0)

/*
 * The scores as a GEMM like p·v: the key tile transposed by dword pairs,
 * Kt[dp][j] = (K[j][2dp], K[j][2dp+1]), so a broadcast query pair times one
 * Kt row gives 16 keys' partial scores at once, with no horizontal sums.
 * One 16x16 dword block per call: rows r[k] = dwords d0..d0+15 of key k.
 */
static inline __attribute__((always_inline)) TBF void tr16x16(__m512i r[16])
{
	__m512i t[16];
	for (int i = 0; i < 8; i++) {
		t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
	}
	/* r[4i+m], 128-bit lane L: column 4L+m of rows 4i..4i+3 */
	for (int i = 0; i < 4; i++) {
		r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
		r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
		r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
		r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
	}
	for (int m = 0; m < 4; m++) {
		t[m] = _mm512_shuffle_i32x4(r[m], r[4 + m], 0x88);
		t[4 + m] = _mm512_shuffle_i32x4(r[m], r[4 + m], 0xdd);
		t[8 + m] = _mm512_shuffle_i32x4(r[8 + m], r[12 + m], 0x88);
		t[12 + m] = _mm512_shuffle_i32x4(r[8 + m], r[12 + m], 0xdd);
	}
	for (int m = 0; m < 4; m++) {
		r[m] = _mm512_shuffle_i32x4(t[m], t[8 + m], 0x88);
		r[8 + m] = _mm512_shuffle_i32x4(t[m], t[8 + m], 0xdd);
		r[4 + m] = _mm512_shuffle_i32x4(t[4 + m], t[12 + m], 0x88);
		r[12 + m] = _mm512_shuffle_i32x4(t[4 + m], t[12 + m], 0xdd);
	}
}

/* Kt[dp][jb..jb+16) for dp in [0, dk/2) from 16 key rows (NULL: zeros). */
static TBF void kt_block(uint32_t *kt, size_t jb, const uint16_t *const *rows, size_t dk)
{
	for (size_t d0 = 0; d0 < dk / 2; d0 += 16) {
		__m512i r[16];
		for (int k = 0; k < 16; k++)
			r[k] = rows[k] ? _mm512_loadu_si512(rows[k] + 2 * d0) : _mm512_setzero_si512();
		tr16x16(r);
		for (int m = 0; m < 16; m++)
			_mm512_storeu_si512(kt + (d0 + (size_t)m) * ATTN_BK + jb, r[m]);
	}
}

/* S rows [0, R) (stride ATTN_BK), keys [0, 16·W): Σ_dp pair(q[2dp], q[2dp+1])·Kt[dp] (R, W constants). */
static inline __attribute__((always_inline)) TBF void
rows_qk_bf16(const uint32_t *q2, size_t qs, const uint32_t *kt, float *S, size_t ndp, struct pfq *pq, float *mx16,
	     const int R, const int W)
{
	__m512 acc[4][4];
	for (int r = 0; r < R; r++)
		for (int c = 0; c < W; c++)
			acc[r][c] = _mm512_setzero_ps();
	bcast_gemm(acc, q2, qs, 1, kt, ATTN_BK, ndp, pq, R, W);
	for (int r = 0; r < R; r++) {
		__m512 m = acc[r][0];
		for (int c = 0; c < W; c++) {
			_mm512_storeu_ps(S + (size_t)r * ATTN_BK + (size_t)c * 16, acc[r][c]);
			m = _mm512_max_ps(m, acc[r][c]);
		}
		/* the row's lane maxima: the softmax of a fully visible tile needs no pass of its own */
		_mm512_storeu_ps(mx16 + (size_t)r * 16, m);
	}
}

#define QK_ROWS(R)                                                                                  \
	do {                                                                                        \
		const uint32_t *q2 = (const uint32_t *)(Q + r0 * dk);                               \
		float *Sr = s->st + r0 * ATTN_BK;                                                   \
		switch (nk16 / 16) {                                                                \
		case 1: rows_qk_bf16(q2, dk / 2, kt, Sr, dk / 2, pq, mx16 + r0 * 16, R, 1); break;                      \
		case 2: rows_qk_bf16(q2, dk / 2, kt, Sr, dk / 2, pq, mx16 + r0 * 16, R, 2); break;                      \
		case 3: rows_qk_bf16(q2, dk / 2, kt, Sr, dk / 2, pq, mx16 + r0 * 16, R, 3); break;                      \
		default: rows_qk_bf16(q2, dk / 2, kt, Sr, dk / 2, pq, mx16 + r0 * 16, R, 4); break;                     \
		}                                                                                   \
	} while (0)

/* The item's M query rows, scaled, as bf16 rows of dk in s->qt; each row's visible keys in s->end,
 * s->m and s->l reset, O zeroed.  The largest end. */
static TBF int64_t load_rows(const struct attn_problem *p, const struct item *it, struct scr *s)
{
	int64_t G = p->hq / p->hkv, b = it->b, g = it->g;
	size_t M = (size_t)(it->ns * G), dq = (size_t)p->dq, dr = (size_t)p->dr, dk = dq + dr, dv = (size_t)p->dv;
	int64_t kvlen = p->kvlen[b], maxe = 0;
	uint16_t *Q = (uint16_t *)s->qt;
	for (size_t i = 0; i < M; i++) {
		int64_t si = it->s0 + (int64_t)i / G, h = g * G + (int64_t)i % G;
		int64_t qr = p->q_row(p->ctx, b, h, si);
		cpu_load_row(p->q, (size_t)qr * dq, dq, s->row);
		if (dr)
			cpu_load_row(p->qr, (size_t)qr * dr, dr, s->row + dq);
		for (size_t d = 0; d < dk; d++)
			Q[i * dk + d] = perfdb_bf16_from_float(s->row[d] * p->scale);
		int64_t e = p->kv_end(p->ctx, b, g, si);
		e = e < 0 ? 0 : e > kvlen ? kvlen : e;
		s->end[i] = (int32_t)e;
		maxe = e > maxe ? e : maxe;
		s->m[i] = NEG_BIG;
		s->l[i] = 0.0f;
	}
	memset(s->ot, 0, M * dv * sizeof(float));
	return maxe;
}

/* O (in vlane_dim order within each 32-dim chunk) back in dim order, each row to attn_decode_emit. */
static TBF void store_rows(const struct attn_problem *p, const struct item *it, struct scr *s)
{
	size_t M = (size_t)(it->ns * (p->hq / p->hkv)), dv = (size_t)p->dv;
	for (size_t i = 0; i < M; i++) {
		for (size_t d0 = 0; d0 < dv; d0 += 32)
			for (size_t l = 0; l < 32; l++)
				s->row[d0 + vlane_dim(l)] = s->ot[i * dv + d0 + l];
		attn_decode_emit(p, it, s, i, s->m[i], s->l[i], s->row);
	}
}

/*
 * Staging of one tile for both decode kernels: krow[j] = key j's [k | k_rope] row (staged in kb when
 * there is a rope part; past nk: NULL, or with pad the last key's row), V rows interleaved by pairs
 * into vp, and with kt the transposed key blocks.
 */
static inline __attribute__((always_inline)) TBF void
stage_tile(const struct attn_problem *p, const int64_t *cur, size_t nk, size_t nk16, uint16_t *kb,
	   const uint16_t **krow, uint32_t *vp, uint32_t *kt, int pad)
{
	size_t dq = (size_t)p->dq, dr = (size_t)p->dr, dk = dq + dr, dv = (size_t)p->dv;
	const uint16_t *vsrc[2] = { NULL, NULL };
	for (size_t j = 0; j < nk16; j++) {
		if (j >= nk) {
			krow[j] = pad ? krow[nk - 1] : NULL;
			vsrc[j & 1] = NULL;
		} else {
			int64_t kr = cur[j];
			krow[j] = (const uint16_t *)p->k->data + (size_t)kr * dq;
			/* with a rope part, [k | k_rope] is staged */
			if (dr) {
				memcpy(kb + j * dk, krow[j], dq * 2);
				memcpy(kb + j * dk + dq, (const uint16_t *)p->kr->data + (size_t)kr * dr, dr * 2);
				krow[j] = kb + j * dk;
			}
			vsrc[j & 1] = (const uint16_t *)p->v->data + (size_t)kr * dv;
		}
		if (j & 1) {
			if (vsrc[0])
				pack_v_lanes(vp + j / 2 * dv, vsrc[0], vsrc[1], dv);
			else
				memset(vp + j / 2 * dv, 0, dv * sizeof(uint32_t));
		}
		if (kt && j % 16 == 15)
			kt_block(kt, j - 15, krow + j - 15, dk);
	}
}

/* Round 16 fp32 lanes to bf16 (nearest even; exps are finite) in each dword's low half. */
static inline __attribute__((always_inline)) TBF __m512i bf16_lo(v16 pe)
{
	__m512i u = (__m512i)pe;
	return _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
			_mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1)))), 16);
}

static TBF void decode_rowpairs(const struct attn_problem *p, const struct item *it, struct scr *s);

TBF void attn_run_decode_bf16(const struct attn_problem *p, const struct item *it, struct scr *s)
{
	int64_t G = p->hq / p->hkv, b = it->b, g = it->g;
	size_t M = (size_t)(it->ns * G), dq = (size_t)p->dq, dr = (size_t)p->dr, dk = dq + dr, dv = (size_t)p->dv;
	size_t nv = dv / 16;
	if (M <= 8) {
		decode_rowpairs(p, it, s);
		return;
	}
	/* s->k: the staged [k | k_rope] rows (first half) and the transposed tile Kt (second half) */
	uint16_t *Q = (uint16_t *)s->qt, *kb = (uint16_t *)s->k;
	uint32_t *kt = (uint32_t *)(kb + ATTN_BK * dk);
	uint32_t *vp = (uint32_t *)s->v, *pw0 = (uint32_t *)s->st;
	float *O = s->ot;
	const uint16_t *krow[ATTN_BK];
	int64_t rows[2][ATTN_BK];
	float mx16[16 * ROWS_MAX];
	struct pfq pfq_mem = { .per = 0 }, *pq = &pfq_mem;
	int64_t maxe = load_rows(p, it, s);
	maxe = maxe < it->k1 ? maxe : it->k1;
	const v16i iota = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	for (int64_t j0 = it->k0; j0 < maxe; j0 += ATTN_BK) {
		size_t nk, nk16;
		const int64_t *cur = tile_next(p, b, g, it->s0, j0, it->k0, maxe, rows, pq, &nk, &nk16);
		size_t np = nk16 / 2;
		stage_tile(p, cur, nk, nk16, kb, krow, vp, kt, 0);
		size_t r0 = 0;
		for (; r0 + 4 <= M; r0 += 4)
			QK_ROWS(4);
		switch (M - r0) {
		case 3: QK_ROWS(3); break;
		case 2: QK_ROWS(2); break;
		case 1: QK_ROWS(1); break;
		default: break;
		}
		for (size_t i = 0; i < M; i++) {
			float *S = s->st + i * ATTN_BK;
			v16i e = (v16i){ 0 } + s->end[i];
			v16 mxv = bc(s->m[i]);
			/* every key of the tile visible to row i (the common case): no masks */
			int whole = j0 + (int64_t)nk16 <= (int64_t)s->end[i];
			if (whole) {
				v16 m16;
				memcpy(&m16, mx16 + i * 16, sizeof(v16));
				mxv = vmax(mxv, m16);
			} else {
				for (size_t jb = 0; jb < nk16; jb += 16) {
					v16 x;
					memcpy(&x, S + jb, sizeof(v16));
					x = vsel(iota + (int32_t)(j0 + (int64_t)jb) < e, x, bc(NEG_BIG));
					memcpy(S + jb, &x, sizeof(v16));
					mxv = vmax(mxv, x);
				}
			}
			float mx = _mm512_reduce_max_ps((__m512)mxv);
			v16 sum = bc(0.0f);
			/* the weights as bf16 pairs over S's own row: keys 2q and 2q+1 side by side are word q
			 * (word q lies at or before float 2q, which is read before it is overwritten) */
			uint32_t *pw = pw0 + i * ATTN_BK;
			for (size_t jb = 0; jb < nk16; jb += 16) {
				v16 x;
				memcpy(&x, S + jb, sizeof(v16));
				v16 pe = vexp(x - mx);
				if (!whole)
					pe = vsel(iota + (int32_t)(j0 + (int64_t)jb) < e, pe, bc(0.0f));
				sum += pe;
				_mm256_storeu_si256((__m256i *)(pw + jb / 2), _mm512_cvtepi32_epi16(bf16_lo(pe)));
			}
			float alpha = vexp(bc(s->m[i] - mx))[0];
			s->l[i] = s->l[i] * alpha + _mm512_reduce_add_ps((__m512)sum);
			s->m[i] = mx;
			s->alpha[i] = alpha;
		}
		for (r0 = 0; r0 + 4 <= M; r0 += 4)
			PV_ROWS(4, ATTN_BK, 1);
		switch (M - r0) {
		case 3: PV_ROWS(3, ATTN_BK, 1); break;
		case 2: PV_ROWS(2, ATTN_BK, 1); break;
		case 1: PV_ROWS(1, ATTN_BK, 1); break;
		default: break;
		}
		pfq_flush(pq);
	}
	store_rows(p, it, s);
}


/*
 * Decode items of at most 8 query rows (one token and GQA <= 8: the common
 * decode), with no key transpose in the score product.  Lane 2r + h holds
 * query row r and dword h of a 4-dim step t: a vpbroadcastq of key j's
 * dims [4t, 4t + 4) (a load, no shuffle) times Qp[t], which holds row r's
 * dims 4t + 2h and 4t + 2h + 1 in lane 2r + h, gives the 8 rows' partial
 * scores of key j in one vdpbf16ps: 32 MACs, as in the transposed layout.
 * Two keys' accumulators fold (two vshufps and an add) into
 * [s(2L, j), s(2L+1, j), s(2L, j+1), s(2L+1, j+1)] in 128-bit lane L, and
 * the softmax stays in that layout: the rows' maxima and sums take one
 * vpermilps each, and a vpermw writes each key pair's bf16 weights row by
 * row (pw[q][r]) for the p·v product's broadcasts.  About 6 shuffles a key
 * where the transpose took 20 (docs/measuring.md, decode attention).
 * Rows past M have zero queries, see every key and are not stored.
 */
static TBF void decode_rowpairs(const struct attn_problem *p, const struct item *it, struct scr *s)
{
	int64_t G = p->hq / p->hkv, b = it->b, g = it->g;
	size_t M = (size_t)(it->ns * G), dq = (size_t)p->dq, dr = (size_t)p->dr, dk = dq + dr, dv = (size_t)p->dv;
	size_t nv = dv / 16, nt = dk / 4;
	/* s->k: the staged [k | k_rope] rows, then the query steps Qp (dk / 4 vectors) */
	uint16_t *kb = (uint16_t *)s->k;
	uint32_t *Qp = (uint32_t *)(kb + ATTN_BK * dk);
	uint32_t *vp = (uint32_t *)s->v;
	/* s->st: the folded scores (16 floats a key pair), then the weights pw[q][8] */
	float *SP = s->st, *O = s->ot;
	uint32_t *pw0 = (uint32_t *)(s->st + ATTN_BK * 8);
	const uint16_t *krow[ATTN_BK];
	int64_t rows[2][ATTN_BK];
	struct pfq pfq_mem = { .per = 0 }, *pq = &pfq_mem;
	int64_t maxe = load_rows(p, it, s), mine = maxe;
	maxe = maxe < it->k1 ? maxe : it->k1;
	const uint32_t *Q32 = (const uint32_t *)s->qt;
	for (size_t t = 0; t < nt; t++)
		for (size_t l = 0; l < 16; l++)
			Qp[t * 16 + l] = l / 2 < M ? Q32[l / 2 * (dk / 2) + 2 * t + l % 2] : 0;
	/* per lane of the folded layout: its row's end (past M: all visible) and its key of the pair */
	v16i Ev, koff;
	for (int l = 0; l < 16; l++) {
		size_t r = (size_t)(2 * (l >> 2) + (l & 1));
		Ev[l] = r < M ? s->end[r] : INT32_MAX;
		koff[l] = (l >> 1) & 1;
		if (r < M && s->end[r] < mine)
			mine = s->end[r];
	}
	/* vpermw: key pair q's weights row by row, dword r = (p(r, 2q), p(r, 2q+1)) */
	uint16_t pidx_w[32] = { 0 };
	for (int k = 0; k < 16; k++)
		pidx_w[k] = (uint16_t)(8 * (k / 4) + (int[]){ 0, 4, 2, 6 }[k % 4]);
	const __m512i pidx = _mm512_loadu_si512(pidx_w);
	v16 mrun = bc(NEG_BIG), lrun = bc(0.0f);
	for (int64_t j0 = it->k0; j0 < maxe; j0 += ATTN_BK) {
		size_t nk, nk16;
		const int64_t *cur = tile_next(p, b, g, it->s0, j0, it->k0, maxe, rows, pq, &nk, &nk16);
		size_t np = nk16 / 2;
		stage_tile(p, cur, nk, nk16, kb, krow, vp, NULL, 1);
		/* scores, 8 keys at a time: 8 independent accumulators cover the vdpbf16ps latency */
		for (size_t jg = 0; jg < nk16; jg += 8) {
			__m512 acc[8];
			for (int u = 0; u < 8; u++)
				acc[u] = _mm512_setzero_ps();
			for (size_t t = 0; t < nt; t++) {
				pfq_step(pq);
				__m512bh qv = (__m512bh)_mm512_loadu_si512(Qp + t * 16);
				for (int u = 0; u < 8; u++) {
					long long kq;
					memcpy(&kq, krow[jg + (size_t)u] + 4 * t, sizeof(kq));
					acc[u] = _mm512_dpbf16_ps(acc[u], (__m512bh)_mm512_set1_epi64(kq), qv);
				}
			}
			for (int u = 0; u < 8; u += 2) {
				__m512 x = _mm512_shuffle_ps(acc[u], acc[u + 1], 0x88);
				__m512 y = _mm512_shuffle_ps(acc[u], acc[u + 1], 0xdd);
				_mm512_storeu_ps(SP + (jg + (size_t)u) / 2 * 16, _mm512_add_ps(x, y));
			}
		}
		/* every row sees the whole tile (the common case): no masks */
		int whole = j0 + (int64_t)nk16 <= mine;
		v16 mx = bc(NEG_BIG);
		for (size_t q = 0; q < np; q++) {
			v16 x;
			memcpy(&x, SP + q * 16, sizeof(v16));
			if (!whole) {
				x = vsel(koff + (int32_t)(j0 + 2 * (int64_t)q) < Ev, x, bc(NEG_BIG));
				memcpy(SP + q * 16, &x, sizeof(v16));
			}
			mx = vmax(mx, x);
		}
		/* each row's maximum: its lanes for the pair's other key sit 64 bits away */
		mx = vmax(mx, (v16)_mm512_permute_ps((__m512)mx, 0x4e));
		v16 mnew = vmax(mrun, mx), sum = bc(0.0f);
		v16 alpha = vexp(mrun - mnew);
		for (size_t q = 0; q < np; q++) {
			v16 x;
			memcpy(&x, SP + q * 16, sizeof(v16));
			v16 pe = vexp(x - mnew);
			if (!whole)
				pe = vsel(koff + (int32_t)(j0 + 2 * (int64_t)q) < Ev, pe, bc(0.0f));
			sum += pe;
			__m512i w = _mm512_permutexvar_epi16(pidx, bf16_lo(pe));
			_mm256_storeu_si256((__m256i *)(pw0 + q * 8), _mm512_castsi512_si256(w));
		}
		sum += (v16)_mm512_permute_ps((__m512)sum, 0x4e);
		lrun = lrun * alpha + sum;
		mrun = mnew;
		for (size_t r = 0; r < M; r++)
			s->alpha[r] = alpha[4 * (r / 2) + r % 2];
		size_t r0 = 0;
		for (; r0 + 4 <= M; r0 += 4)
			PV_ROWS(4, 1, 8);
		switch (M - r0) {
		case 3: PV_ROWS(3, 1, 8); break;
		case 2: PV_ROWS(2, 1, 8); break;
		case 1: PV_ROWS(1, 1, 8); break;
		default: break;
		}
		pfq_flush(pq);
	}
	for (size_t r = 0; r < M; r++) {
		s->m[r] = mrun[4 * (r / 2) + r % 2];
		s->l[r] = lrun[4 * (r / 2) + r % 2];
	}
	store_rows(p, it, s);
}
#undef PV_ROWS
#undef QK_ROWS
#endif
