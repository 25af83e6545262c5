/*
 * split_qkv_rmsnorm_rope_kernel rows (docs/spec/grid.md §3, reference
 * generators/rope.py): the vLLM-Ascend fused QKV + RMSNorm + RoPE kernel.
 *
 * For every dense (non-MLA) model and tp: skipped when heads % tp != 0;
 * local kv heads = kv//tp when kv >= tp, 1 when tp % kv == 0, else the tp
 * is skipped.  With q = local heads * hd and kv = local kv heads * hd:
 *   (t, q+2kv);(hd,) -> (t,q);(t,kv);(t,kv)
 * dtypes DT_BF16 and formats ND on every slot; a (t, q, kv, hd) already
 * produced (by any model) is not repeated.
 */
#include "grid_internal.h"
#include "perfdb/schema.h"

#include <stdlib.h>
#include <string.h>

int grid_gen_split_qkv(const struct grid_gen_ctx *g, grid_emit_fn emit, void *arg,
		       struct perfdb_err *err)
{
	struct grid_cand *c = calloc(1, sizeof(*c));
	if (!c)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	c->nin = 2;
	c->nout = 3;
	c->nextra = 4;
	c->extra_col[0] = PERFDB_COL_IN_DTYPES;
	c->extra_val[0] = "DT_BF16;DT_BF16";
	c->extra_col[1] = PERFDB_COL_IN_FORMATS;
	c->extra_val[1] = "ND;ND";
	c->extra_col[2] = PERFDB_COL_OUT_DTYPES;
	c->extra_val[2] = "DT_BF16;DT_BF16;DT_BF16";
	c->extra_col[3] = PERFDB_COL_OUT_FORMATS;
	c->extra_val[3] = "ND;ND;ND";
	int64_t(*seen)[4] = NULL;
	size_t nseen = 0, cap = 0;
	int rc = 0;
	for (size_t i = 0; i < g->models->n && rc == 0; i++) {
		const struct perfdb_grid_model *m = &g->models->v[i];
		if (grid_model_is_mla(m))
			continue;
		for (size_t t = 0; t < m->ntp && rc == 0; t++) {
			int64_t tp = m->tp[t], lkv;
			if (m->heads % tp != 0)
				continue;
			if (m->kv_heads >= tp)
				lkv = m->kv_heads / tp;
			else if (tp % m->kv_heads == 0)
				lkv = 1;
			else
				continue;
			int64_t q = m->heads / tp * m->head_dim, kv = lkv * m->head_dim;
			int64_t hd = m->head_dim;
			for (size_t k = 0; k < g->p->tokens.n && rc == 0; k++) {
				int64_t tok = g->p->tokens.v[k];
				bool dup = false;
				for (size_t s = 0; s < nseen && !dup; s++)
					dup = seen[s][0] == tok && seen[s][1] == q && seen[s][2] == kv &&
					      seen[s][3] == hd;
				if (dup)
					continue;
				if (nseen == cap) {
					cap = cap ? cap * 2 : 64;
					int64_t(*ns)[4] = realloc(seen, cap * sizeof(*ns));
					if (!ns) {
						rc = perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
						break;
					}
					seen = ns;
				}
				seen[nseen][0] = tok;
				seen[nseen][1] = q;
				seen[nseen][2] = kv;
				seen[nseen][3] = hd;
				nseen++;
				int64_t a[2] = { tok, q + 2 * kv }, b[1] = { hd }, o0[2] = { tok, q },
					o1[2] = { tok, kv };
				grid_shape_set(&c->in[0], 2, a);
				grid_shape_set(&c->in[1], 1, b);
				grid_shape_set(&c->out[0], 2, o0);
				grid_shape_set(&c->out[1], 2, o1);
				grid_shape_set(&c->out[2], 2, o1);
				rc = emit(arg, c, err);
			}
		}
	}
	free(seen);
	free(c);
	return rc;
}
