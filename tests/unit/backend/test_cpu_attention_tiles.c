/*
 * The CPU attention kernel's products one by one (src/backend/cpu/
 * ops_attention_internal.h; docs/ops.md "Attention"), against plain loops
 * in double precision: the fp32 tiles of the lane-per-query layout
 * (ops_attention_fp32.c), the decode layout's row products, and on
 * AVX512_BF16 CPUs the bf16 packing and tiles (ops_attention_avx512bf16.c).
 * test_cpu_attention.c checks whole ops; here each product's edges
 * (lane chunks past a multiple of 4, dims past a multiple of 8 or 128,
 * the 64/128 head dims that keep the query in registers) are driven alone.
 *
 * Tolerances: sums of at most a few hundred fp32 products, 1e-4 relative
 * to the sum of the terms' magnitudes; bf16 products of bf16 values are
 * exact in fp32, so the bf16 tiles take the same bound.  Packing is exact.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/cpu/ops_attention_internal.h"

static uint64_t rng = 0x2545f4914f6cdd1du;

static float rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float)((rng >> 11) % 2000001u) / 1e6f - 1.0f;
}

/* 64-byte aligned floats, random in [-1, 1]. */
static float *rnd_floats(size_t n)
{
	float *p = aligned_alloc(64, (n * sizeof(float) + 63) & ~(size_t)63);
	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = rnd();
	return p;
}

static void near(double got, double want, double mag)
{
	if (fabs(got - want) > 1e-4 * (mag + 1e-6))
		fail_msg("got %.9g, want %.9g (terms %.3g)", got, want, mag);
}

/* St = K·Qt and Ot = Ot·alpha + Vᵀ·P for lane counts mp of 1..5 chunks, key counts of 1 and 8 blocks of 8. */
static void test_fp32_tiles(void **state)
{
	(void)state;
	const size_t mps[] = { 16, 32, 48, 64, 80 }, nks[] = { 8, 64 }, dvs[] = { 20, 64 }, dk = 72;
	for (size_t a = 0; a < sizeof(mps) / sizeof(mps[0]); a++)
		for (size_t b = 0; b < sizeof(nks) / sizeof(nks[0]); b++) {
			size_t mp = mps[a], nk = nks[b];
			float *K = rnd_floats(nk * dk), *Qt = rnd_floats(dk * mp), *St = rnd_floats(nk * mp);
			attn_qk_tile(K, dk, Qt, mp, St, nk);
			for (size_t j = 0; j < nk; j++)
				for (size_t i = 0; i < mp; i++) {
					double s = 0, m = 0;
					for (size_t d = 0; d < dk; d++) {
						s += (double)K[j * dk + d] * Qt[d * mp + i];
						m += fabs((double)K[j * dk + d] * Qt[d * mp + i]);
					}
					near(St[j * mp + i], s, m);
				}
			for (size_t c = 0; c < sizeof(dvs) / sizeof(dvs[0]); c++) {
				size_t dv = dvs[c];
				float *V = rnd_floats(nk * dv), *Ot = rnd_floats(dv * mp), *alpha = rnd_floats(mp);
				float *O0 = malloc(dv * mp * sizeof(float));
				assert_non_null(O0);
				memcpy(O0, Ot, dv * mp * sizeof(float));
				attn_pv_tile(V, dv, St, mp, nk, Ot, alpha);
				for (size_t d = 0; d < dv; d++)
					for (size_t i = 0; i < mp; i++) {
						double s = (double)O0[d * mp + i] * alpha[i], m = fabs(s);
						for (size_t j = 0; j < nk; j++) {
							s += (double)V[j * dv + d] * St[j * mp + i];
							m += fabs((double)V[j * dv + d] * St[j * mp + i]);
						}
						near(Ot[d * mp + i], s, m);
					}
				free(V);
				free(Ot);
				free(alpha);
				free(O0);
			}
			free(K);
			free(Qt);
			free(St);
		}
}

/* One query row against a tile: q·k dims 64 and 128 (query in registers) and others; value dims around 128. */
static void test_rows_products(void **state)
{
	(void)state;
	const size_t dks[] = { 16, 64, 80, 128, 192 }, dvs[] = { 16, 112, 128, 144, 272 }, nk16 = 48, nk = 37;
	for (size_t a = 0; a < sizeof(dks) / sizeof(dks[0]); a++) {
		size_t dk = dks[a];
		float *q = rnd_floats(dk), *K = rnd_floats(nk16 * dk), *S = rnd_floats(nk16);
		attn_rows_qk(q, K, dk, nk16, S);
		for (size_t j = 0; j < nk16; j++) {
			double s = 0, m = 0;
			for (size_t d = 0; d < dk; d++) {
				s += (double)q[d] * K[j * dk + d];
				m += fabs((double)q[d] * K[j * dk + d]);
			}
			near(S[j], s, m);
		}
		free(q);
		free(K);
		free(S);
	}
	for (size_t a = 0; a < sizeof(dvs) / sizeof(dvs[0]); a++) {
		size_t dv = dvs[a];
		float *o = rnd_floats(dv), *P = rnd_floats(nk), *V = rnd_floats(nk * dv), *o0 = malloc(dv * sizeof(float));
		assert_non_null(o0);
		memcpy(o0, o, dv * sizeof(float));
		attn_rows_pv(o, 0.75f, P, V, dv, nk);
		for (size_t d = 0; d < dv; d++) {
			double s = 0.75 * o0[d], m = fabs(s);
			for (size_t j = 0; j < nk; j++) {
				s += (double)P[j] * V[j * dv + d];
				m += fabs((double)P[j] * V[j * dv + d]);
			}
			near(o[d], s, m);
		}
		free(o);
		free(P);
		free(V);
		free(o0);
	}
}

#ifdef ATTN_BF16
static uint16_t *rnd_bf16(size_t n)
{
	uint16_t *p = aligned_alloc(64, (n * 2 + 63) & ~(size_t)63);
	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = perfdb_bf16_from_float(rnd());
	return p;
}
#endif

/* bf16 pairs: packing exact (rounding as perfdb_bf16_from_float), tiles as the fp32 ones on the packed values. */
static void test_bf16_products(void **state)
{
	(void)state;
#ifndef ATTN_BF16
	skip();
#else
	if (perfdb_cpu_isa() < PERFDB_ISA_AVX512_BF16)
		skip();
	const size_t mp = 48, nk = 24, dk = 72, dv = 40;
	/* V rows 2q and 2q+1 interleaved, the odd row missing on the last pair */
	uint16_t *r0 = rnd_bf16(dv), *r1 = rnd_bf16(dv);
	uint32_t *vp = aligned_alloc(64, 2 * dv * sizeof(uint32_t));
	assert_non_null(vp);
	attn_pack_v_bf16(vp, r0, r1, dv);
	attn_pack_v_bf16(vp + dv, r0, NULL, dv);
	for (size_t d = 0; d < dv; d++) {
		assert_int_equal(vp[d], r0[d] | (uint32_t)r1[d] << 16);
		assert_int_equal(vp[dv + d], r0[d]);
	}
	/* P rounded to nearest even, ties included (0x3f808000 lies halfway between two bf16 values) */
	float *st = rnd_floats(nk * mp), *st0 = malloc(nk * mp * sizeof(float));
	assert_non_null(st0);
	uint32_t tie = 0x3f808000u;
	memcpy(&st[0], &tie, 4);
	memcpy(st0, st, nk * mp * sizeof(float));
	attn_pack_p_bf16(st, mp, nk);
	for (size_t q = 0; q < nk / 2; q++)
		for (size_t i = 0; i < mp; i++) {
			uint32_t w;
			memcpy(&w, &st[q * mp + i], 4);
			assert_int_equal(w, perfdb_bf16_from_float(st0[2 * q * mp + i]) |
						    (uint32_t)perfdb_bf16_from_float(st0[(2 * q + 1) * mp + i]) << 16);
		}
	/* S = K·Qt on (d, d+1) pairs per lane */
	uint16_t *K = rnd_bf16(nk * dk), *qv = rnd_bf16(dk * mp);
	uint32_t *qt2 = aligned_alloc(64, dk / 2 * mp * sizeof(uint32_t));
	float *S = rnd_floats(nk * mp);
	assert_non_null(qt2);
	for (size_t d = 0; d < dk; d += 2)
		for (size_t i = 0; i < mp; i++)
			qt2[d / 2 * mp + i] = qv[d * mp + i] | (uint32_t)qv[(d + 1) * mp + i] << 16;
	attn_qk_tile_bf16(K, dk, qt2, mp, S, nk);
	for (size_t j = 0; j < nk; j++)
		for (size_t i = 0; i < mp; i++) {
			double s = 0, m = 0;
			for (size_t d = 0; d < dk; d++) {
				double t = (double)perfdb_bf16_to_float(K[j * dk + d]) * perfdb_bf16_to_float(qv[d * mp + i]);
				s += t;
				m += fabs(t);
			}
			near(S[j * mp + i], s, m);
		}
	/* O = O·alpha + Vᵀ·P on key pairs: V packed by pairs, P the packed st */
	uint16_t *V = rnd_bf16(nk * dv);
	uint32_t *Vp = aligned_alloc(64, nk / 2 * dv * sizeof(uint32_t));
	float *Ot = rnd_floats(dv * mp), *alpha = rnd_floats(mp), *O0 = malloc(dv * mp * sizeof(float));
	assert_non_null(Vp);
	assert_non_null(O0);
	for (size_t q = 0; q < nk / 2; q++)
		attn_pack_v_bf16(Vp + q * dv, V + 2 * q * dv, V + (2 * q + 1) * dv, dv);
	memcpy(O0, Ot, dv * mp * sizeof(float));
	attn_pv_tile_bf16(Vp, dv, (const uint32_t *)st, mp, nk, Ot, alpha);
	for (size_t d = 0; d < dv; d++)
		for (size_t i = 0; i < mp; i++) {
			double s = (double)O0[d * mp + i] * alpha[i], m = fabs(s);
			for (size_t j = 0; j < nk; j++) {
				double t = (double)perfdb_bf16_to_float(V[j * dv + d]) *
					   perfdb_bf16_to_float(perfdb_bf16_from_float(st0[j * mp + i]));
				s += t;
				m += fabs(t);
			}
			near(Ot[d * mp + i], s, m);
		}
	free(r0);
	free(r1);
	free(vp);
	free(st);
	free(st0);
	free(K);
	free(qv);
	free(qt2);
	free(S);
	free(V);
	free(Vp);
	free(Ot);
	free(alpha);
	free(O0);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fp32_tiles),
		cmocka_unit_test(test_rows_products),
		cmocka_unit_test(test_bf16_products),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
