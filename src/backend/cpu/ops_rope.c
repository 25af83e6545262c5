/*
 * CPU backend, rotary position embedding (docs/spec/replay.md §4; docs/ops.md
 * "RoPE and KV cache"): InterleaveRope, split_qkv_rmsnorm_rope_kernel,
 * _triton_rope_siso.  Rows are loaded to fp32 stack scratch, rotated and
 * stored back in the tensor's dtype.  Positions and cos/sin tables the row
 * does not record are built in prepare, outside the timed loop.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu_rope.h"
#include "ops/rope.h"

/* ---- helpers shared with ops_cache.c (cpu_rope.h) ---- */

CPU_CLONES void cpu_rope_interleave(const float *restrict x, const float *restrict cos, const float *restrict sin,
			 float *restrict y, size_t d)
{
	size_t h = d / 2;
	float a[CPU_ROPE_MAX_D / 2], b[CPU_ROPE_MAX_D / 2];
	for (size_t j = 0; j < h; j++) {   /* de-interleave first: the rotation loop is then unit-stride */
		a[j] = x[2 * j];
		b[j] = x[2 * j + 1];
	}
	for (size_t j = 0; j < h; j++) {
		y[j] = a[j] * cos[j] - b[j] * sin[j];
		y[j + h] = b[j] * cos[j + h] + a[j] * sin[j + h];
	}
}

CPU_CLONES void cpu_rope_neox(const float *restrict x, const float *restrict cos, const float *restrict sin,
		   float *restrict y, size_t d)
{
	size_t h = d / 2;
	for (size_t j = 0; j < h; j++) {
		float a = x[j], b = x[j + h];
		y[j] = a * cos[j] - b * sin[j];
		y[j + h] = b * cos[j + h] + a * sin[j + h];
	}
}

float *cpu_rope_table(size_t rows, size_t d, double base)
{
	float *t = malloc(rows * 2 * d * sizeof(float) + 1);
	if (!t)
		return NULL;
	size_t h = d / 2 ? d / 2 : 1;
	double f[CPU_ROPE_MAX_D];
	for (size_t k = 0; k < d && k < CPU_ROPE_MAX_D; k++)
		f[k] = pow(base, -2.0 * (double)(k % h) / (double)d);
	for (size_t p = 0; p < rows; p++)
		for (size_t k = 0; k < d && k < CPU_ROPE_MAX_D; k++) {
			t[p * 2 * d + k] = (float)cos((double)p * f[k]);
			t[p * 2 * d + d + k] = (float)sin((double)p * f[k]);
		}
	return t;
}

void cpu_slots_distinct(int64_t *slots, size_t n, int64_t nslots, int64_t block_size)
{
	perfdb_slots_distinct(slots, n, nslots, block_size);
}

void cpu_store_index(struct perfdb_tensor *t, const int64_t *v, size_t n)
{
	for (size_t i = 0; i < n && i < (size_t)t->numel; i++) {
		switch (t->dtype) {
		case PERFDB_DTYPE_INT64: ((int64_t *)t->data)[i] = v[i]; break;
		case PERFDB_DTYPE_INT32: ((int32_t *)t->data)[i] = (int32_t)v[i]; break;
		case PERFDB_DTYPE_INT16: ((int16_t *)t->data)[i] = (int16_t)v[i]; break;
		case PERFDB_DTYPE_INT8: ((int8_t *)t->data)[i] = (int8_t)v[i]; break;
		case PERFDB_DTYPE_UINT8:
		case PERFDB_DTYPE_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)v[i]; break;
		case PERFDB_DTYPE_FLOAT64: ((double *)t->data)[i] = (double)v[i]; break;
		default:
			if (perfdb_dtype_is_float(t->dtype)) {
				float f = (float)v[i];
				cpu_store_row(t, i, 1, &f);
			}
			break;
		}
	}
}

/*
 * ---- InterleaveRope: x (B,N,S,D), cos/sin (B or 1, 1, S or 1, D) -> y (B,N,S,D) ----
 * torch_npu.npu_interleave_rope (DeepSeek MLA's rope part).
 */
/* The row rules are the definition's (rules_rope.c); the rows are stack scratch of CPU_ROPE_MAX_D. */
static int irope_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	int64_t d = c->in[0].dims[3];
	if (d < 2 || d % 2 || d > CPU_ROPE_MAX_D)
		return perfdb_err_set(err, PERFDB_EINVAL, "InterleaveRope: D must be even and at most %d",
				      CPU_ROPE_MAX_D);
	return 0;
}

/* Rows of x in chunks of whole rows: one conversion call per chunk, not per 64-value row. */
#define CHUNK 4096

static int irope_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	const struct perfdb_tensor *x = &c->in[0], *cs = &c->in[1], *sn = &c->in[2];
	struct perfdb_tensor *o = &c->out[0];
	size_t B = (size_t)x->dims[0], N = (size_t)x->dims[1], S = (size_t)x->dims[2], D = (size_t)x->dims[3];
	size_t cb = (size_t)cs->dims[0], csq = (size_t)cs->dims[2];
	size_t rows = N * S, per = CHUNK / D;   /* rows of batch b are contiguous: row r is (n, s) = (r / S, r % S) */
	float xr[CHUNK], yr[CHUNK], cr[CPU_ROPE_MAX_D], sr[CPU_ROPE_MAX_D];
	for (size_t b = 0; b < B; b++) {
		size_t cbase = (cb == 1 ? 0 : b) * csq * D, loaded = (size_t)-1;
		for (size_t r0 = 0; r0 < rows; r0 += per) {
			size_t m = rows - r0 < per ? rows - r0 : per, off = (b * rows + r0) * D;
			cpu_load_row(x, off, m * D, xr);
			for (size_t r = 0; r < m; r++) {
				size_t s = csq == 1 ? 0 : (r0 + r) % S;
				if (s != loaded) {
					cpu_load_row(cs, cbase + s * D, D, cr);
					cpu_load_row(sn, cbase + s * D, D, sr);
					loaded = s;
				}
				cpu_rope_interleave(xr + r * D, cr, sr, yr + r * D, D);
			}
			cpu_store_row(o, off, m * D, yr);
		}
	}
	return 0;
}

/*
 * ---- split_qkv_rmsnorm_rope_kernel (vllm-ascend, Qwen3) ----
 * in0 qkv (T, q + 2·kv), in1 q_weight (hd), in2 k_weight (hd, optional:
 * q_weight); out0 q (T, q), out1 k (T, kv), out2 v (T, kv).  Per head of q
 * and k: RmsNorm (eps 1e-6) times the weight, then the NeoX rotation at
 * the token's position; v is copied.  The positions and the cos/sin cache
 * live on the device and are not recorded: position of token i is i, the
 * fp32 cos/sin table (T, 2·hd) is built in prepare (rope base 1e6, Qwen3's).
 */
static int qkv_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_qkv_plan p;
	perfdb_qkv_plan(c, &p);
	if (p.hd < 2 || p.hd % 2 || p.hd > CPU_ROPE_MAX_D)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "split_qkv_rmsnorm_rope_kernel: head dim (weight size) must be even and at most %d",
				      CPU_ROPE_MAX_D);
	return 0;
}

static int qkv_prepare(struct perfdb_op_case *c, struct perfdb_err *err)
{
	struct perfdb_qkv_plan p;
	perfdb_qkv_plan(c, &p);
	c->priv = cpu_rope_table(p.t ? p.t : 1, p.hd, 1e6);
	return c->priv ? 0 : perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
}

static void free_priv(struct perfdb_op_case *c)
{
	free(c->priv);
	c->priv = NULL;
}

/* heads rows of hd in x: y = rope(rmsnorm(x)·w) per head. */
CPU_CLONES static void norm_rope_heads(float *x, size_t heads, size_t hd, const float *w, const float *cs,
				       const float *sn)
{
	float t[CPU_ROPE_MAX_D];
	for (size_t h = 0; h < heads; h++) {
		float *r = x + h * hd;
		float rstd = 1.0f / sqrtf(cpu_sumsq(r, hd) / (float)hd + PERFDB_EPS_QKV_ROPE);
		for (size_t j = 0; j < hd; j++)
			t[j] = r[j] * rstd * w[j];
		cpu_rope_neox(t, cs, sn, r, hd);
	}
}

static int qkv_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	struct perfdb_qkv_plan p;
	perfdb_qkv_plan(c, &p);
	const struct perfdb_tensor *in = &c->in[0];
	const struct perfdb_tensor *kw = c->nin > 2 && c->in[2].present ? &c->in[2] : &c->in[1];
	float wq[CPU_ROPE_MAX_D], wk[CPU_ROPE_MAX_D], buf[4096];
	cpu_load_row(&c->in[1], 0, p.hd, wq);
	cpu_load_row(kw, 0, p.hd, wk);
	const float *tab = c->priv;
	size_t w = p.q + 2 * p.kv;
	for (size_t i = 0; i < p.t; i++) {
		const float *cs = tab + i * 2 * p.hd, *sn = cs + p.hd;
		/* q then k, in chunks of whole heads through the scratch */
		size_t hpc = sizeof(buf) / sizeof(buf[0]) / p.hd;
		for (int part = 0; part < 2; part++) {
			size_t width = part ? p.kv : p.q, src = i * w + (part ? p.q : 0);
			struct perfdb_tensor *o = &c->out[part];
			for (size_t h0 = 0; h0 < width / p.hd; h0 += hpc) {
				size_t nh = width / p.hd - h0 < hpc ? width / p.hd - h0 : hpc;
				cpu_load_row(in, src + h0 * p.hd, nh * p.hd, buf);
				norm_rope_heads(buf, nh, p.hd, part ? wk : wq, cs, sn);
				cpu_store_row(o, i * width + h0 * p.hd, nh * p.hd, buf);
			}
		}
		if (in->dtype == c->out[2].dtype) {
			size_t es = perfdb_dtype_bytes(in->dtype, 1);
			memcpy((char *)c->out[2].data + i * p.kv * es, (const char *)in->data + (i * w + p.q + p.kv) * es,
			       p.kv * es);
		} else {
			for (size_t j = 0; j < p.kv; j += sizeof(buf) / sizeof(buf[0])) {
				size_t m = p.kv - j < sizeof(buf) / sizeof(buf[0]) ? p.kv - j : sizeof(buf) / sizeof(buf[0]);
				cpu_load_row(in, i * w + p.q + p.kv + j, m, buf);
				cpu_store_row(&c->out[2], i * p.kv + j, m, buf);
			}
		}
	}
	return 0;
}

/*
 * ---- _triton_rope_siso: vLLM-Ascend's Triton rope ----
 * Layout of the grid's triton_rope pattern: in0 q (T, Hq, D), in1 k
 * (T, Hk, D) (optional), in2 cos_sin_cache (P, D): cos(D/2) | sin(D/2)
 * per position; out0 q, out1 k (shapes of q and k).  NeoX rotation; the
 * positions live on the device and are not recorded: token i takes
 * position i mod P.
 */
static int trope_check(const struct perfdb_op_case *c, struct perfdb_err *err)
{
	const struct perfdb_tensor *q = &c->in[0], *cc = &c->in[2];
	int64_t d = q->dims[2];
	if (d < 2 || d % 2 || d > CPU_ROPE_MAX_D || cc->dims[1] != d || cc->dims[0] < 1)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "_triton_rope_siso: D must be even, at most %d, and the cache's last dim",
				      CPU_ROPE_MAX_D);
	return 0;
}

static void trope_tensor(const struct perfdb_tensor *x, struct perfdb_tensor *o, const struct perfdb_tensor *cc)
{
	size_t t = (size_t)x->dims[0], h = (size_t)x->dims[1], d = (size_t)x->dims[2], hf = d / 2;
	size_t p = (size_t)cc->dims[0], per = CHUNK / d;
	float half[CPU_ROPE_MAX_D], cs[CPU_ROPE_MAX_D], sn[CPU_ROPE_MAX_D], xr[CHUNK], yr[CHUNK];
	for (size_t i = 0; i < t; i++) {
		cpu_load_row(cc, (i % p) * d, d, half);
		for (size_t j = 0; j < hf; j++) {   /* each angle serves both halves */
			cs[j] = cs[j + hf] = half[j];
			sn[j] = sn[j + hf] = half[hf + j];
		}
		for (size_t n0 = 0; n0 < h; n0 += per) {   /* the token's heads are contiguous */
			size_t m = h - n0 < per ? h - n0 : per, off = (i * h + n0) * d;
			cpu_load_row(x, off, m * d, xr);
			for (size_t n = 0; n < m; n++)
				cpu_rope_neox(xr + n * d, cs, sn, yr + n * d, d);
			cpu_store_row(o, off, m * d, yr);
		}
	}
}

static int trope_run(struct perfdb_op_case *c, struct perfdb_err *err)
{
	(void)err;
	trope_tensor(&c->in[0], &c->out[0], &c->in[2]);
	if (c->in[1].present)
		trope_tensor(&c->in[1], &c->out[1], &c->in[2]);
	return 0;
}

const struct perfdb_op_impl cpu_ops_rope[] = {
	{ .name = "InterleaveRope", .check = irope_check, .run = irope_run },
	{ .name = "_triton_rope_siso", .check = trope_check, .run = trope_run },
	{ .name = "split_qkv_rmsnorm_rope_kernel", .check = qkv_check, .prepare = qkv_prepare, .run = qkv_run,
	  .release = free_priv },
	{ .name = NULL },
};
