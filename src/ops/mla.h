/*
 * mla_preprocess_0_mix_aic's plan (docs/ops.md "MLA pre-processing"): its
 * slots in the aclnn parameter order and the sizes its row's shapes and
 * Runtime cells say, what a backend's prepare reads after the definition's
 * check (rules_mla.c) and its own limits passed.
 */
#ifndef PERFDB_REPLAY_OPDEF_MLA_H
#define PERFDB_REPLAY_OPDEF_MLA_H

#include <stdint.h>

#include "perfdb/err.h"
#include "ops/op_case.h"

enum perfdb_mla_in {
	PERFDB_MLA_X, PERFDB_MLA_GAMMA0, PERFDB_MLA_BETA0, PERFDB_MLA_QSCALE0, PERFDB_MLA_QOFFSET0,
	PERFDB_MLA_WDQKV, PERFDB_MLA_DESCALE0, PERFDB_MLA_BIAS0, PERFDB_MLA_GAMMA1, PERFDB_MLA_BETA1,
	PERFDB_MLA_QSCALE1, PERFDB_MLA_QOFFSET1, PERFDB_MLA_WUQ, PERFDB_MLA_DESCALE1, PERFDB_MLA_BIAS1,
	PERFDB_MLA_GAMMA2, PERFDB_MLA_COS, PERFDB_MLA_SIN, PERFDB_MLA_WUK, PERFDB_MLA_KVCACHE,
	PERFDB_MLA_KRCACHE, PERFDB_MLA_SLOTS, PERFDB_MLA_NIN_MIN
};
enum perfdb_mla_out { PERFDB_MLA_QOUT, PERFDB_MLA_KVOUT, PERFDB_MLA_QROPE, PERFDB_MLA_KROUT };

struct perfdb_mla_plan {
	int64_t t, h;                 /* tokens, hidden size */
	int64_t kv, rope, ql, d0;     /* kv_lora, rope dim, q_lora; d0 = kv + rope + ql */
	int64_t n, nope, hd;          /* heads, nope dim, hd = nope + rope */
	int64_t qw;                   /* q_out0's last dim: kv (krope_ctkv) or kv + rope (mode 0) */
	int64_t crow;                 /* kv_cache row: kv or kv + rope */
	int64_t nslots, block;
	int split;                    /* cache_mode krope_ctkv: separate rope cache and q_rope output */
	int per_token;                /* quant_mode per_token_quant_symm */
	float eps;
	enum perfdb_dtype act;
};

/*
 * The row's plan, or -PERFDB_EINVAL with the rule it breaks (the
 * definition's check).  A row without kv_lora or q_lora dims, or with an
 * NZ or INT8 kv_cache (cache modes int8_nzcache, nzcache), is let through
 * with the plan partly filled: no backend plans those, and its own check
 * refuses them.
 */
int perfdb_mla_plan(const struct perfdb_op_case *c, struct perfdb_mla_plan *p, struct perfdb_err *err);

#endif
