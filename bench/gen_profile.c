/*
 * gen_profile: write realistic torch_npu profiler output (kernel_details.csv,
 * optionally operator_details.csv) for the parse benchmark (bench/parse.sh)
 * and the example profile (examples/profiling/).
 *
 * usage: gen_profile OUT_DIR --rows N [--ranks R] [--seed S] [--layers L]
 *                    [--operator-details]
 *        gen_profile OUT.csv --rows N [--seed S] [--layers L]
 *
 * Directory mode writes, for each rank r in 0..R-1,
 *   OUT_DIR/rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv
 * with the N rows split across the ranks (the first N % R ranks get one more),
 * and with --operator-details an operator_details.csv beside it holding one
 * row per FusedInferAttentionScore kernel row, in the same order (the parser
 * pairs them by position within a directory; docs/spec/parse.md §5).  A path that
 * ends in ".csv" writes one kernel_details file (one rank) to that path.
 *
 * What the rows look like: decode and prefill steps of a DeepSeek-V3-style
 * model (MLA attention, 3 dense + L-3 MoE layers, w8a8 matmuls, EP/TP
 * communication) on vllm-ascend, plus one EAGLE-style dense draft layer per
 * step using the triton kernels split_qkv_rmsnorm_rope_kernel_0 and
 * muls_add_kernel_1.  That gives about 40 kernel types with realistic
 * frequencies (norms and matmuls every layer, sampling kernels once per step,
 * a few only on some steps) and a realistic number of distinct shapes (token
 * counts from a small set of decode batch sizes and prefill chunk lengths;
 * the MoE grouped-matmul row count varies per layer around its expectation).
 * The format follows the profiler: the 46-column header, a tab after the
 * start time, shape cells with literal quotes (on disk `"""4096,7168;..."""`),
 * FusedInferAttentionScore rows with 31 input slots (most empty; slots 5 and
 * 6, the host-side sequence-length lists, are empty in kernel rows and filled
 * in operator rows), N/A shapes and counters on communication kernels, empty
 * or N/A cube counters on vector kernels, an empty Duration(us) on about one
 * row in 10,000, CRLF line ends.  Durations are lognormal around a median
 * that is a function of the (type, shape) key, never below the op's roofline
 * time on the claimed device times an efficiency of 1.1 to 3 (roof_us()), with
 * a small fraction of slow outliers, printed with 3 decimals.
 *
 * Deterministic: the output depends only on the arguments (splitmix64 stream
 * per rank, Box-Muller normals, integer formatting of fixed-point numbers).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- random numbers ---------------------------------------------------- */

struct rng {
	uint64_t s;
	int have_spare;
	double spare;
};

static uint64_t rnext(struct rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* uniform in [0, 1) */
static double runif(struct rng *r)
{
	return (double)(rnext(r) >> 11) * 0x1.0p-53;
}

static unsigned rbelow(struct rng *r, unsigned n)
{
	return (unsigned)(rnext(r) % n);
}

/* standard normal, Box-Muller */
static double rnorm(struct rng *r)
{
	if (r->have_spare) {
		r->have_spare = 0;
		return r->spare;
	}
	double u1 = 1.0 - runif(r), u2 = runif(r);
	double m = sqrt(-2.0 * log(u1));
	r->spare = m * sin(2.0 * M_PI * u2);
	r->have_spare = 1;
	return m * cos(2.0 * M_PI * u2);
}

/* lognormal with the given median and log-space sigma */
static double rlognorm(struct rng *r, double median, double sigma)
{
	return median * exp(sigma * rnorm(r));
}

/* ---- buffered output ----------------------------------------------------- */

struct out {
	FILE *f;
	const char *path;
	size_t n;
	int failed;
	char buf[1 << 20];
};

static void oflush(struct out *o)
{
	if (o->n && fwrite(o->buf, 1, o->n, o->f) != o->n)
		o->failed = 1;
	o->n = 0;
}

static void oput(struct out *o, const char *s, size_t len)
{
	if (o->n + len > sizeof(o->buf))
		oflush(o);
	if (len > sizeof(o->buf)) {
		if (fwrite(s, 1, len, o->f) != len)
			o->failed = 1;
		return;
	}
	memcpy(o->buf + o->n, s, len);
	o->n += len;
}

static void ostr(struct out *o, const char *s)
{
	oput(o, s, strlen(s));
}

static void och(struct out *o, char c)
{
	if (o->n == sizeof(o->buf))
		oflush(o);
	o->buf[o->n++] = c;
}

static void ou64(struct out *o, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	oput(o, tmp + i, sizeof(tmp) - i);
}

/* v with exactly 3 decimals (v < 0 is written as 0.000) */
static void ofix3(struct out *o, double v)
{
	uint64_t m = v > 0 ? (uint64_t)llround(v * 1000.0) : 0;
	ou64(o, m / 1000);
	char frac[4] = { '.', (char)('0' + m / 100 % 10), (char)('0' + m / 10 % 10),
			 (char)('0' + m % 10) };
	oput(o, frac, 4);
}

/* ---- the model ------------------------------------------------------------ */

/*
 * Shape templates: "%X" is replaced by the value of variable X of the row's
 * context; "%b" is the batch size in operator rows and nothing in kernel rows
 * (FIA slots 5 and 6 are host-side int lists that kernel_details leaves
 * empty).  Variables:
 *   T tokens in the step      B sequences in the step     K T * top_k (8)
 *   M rows routed to this rank's 16 experts (varies per MoE layer)
 *   P KV-cache blocks (fixed)  S block-table width (fixed, 32k / 128)
 */
enum core { AIC, AIV, MIXC, MIXV, COMM };
enum cnt { CNT_CUBE, CNT_VEC_NA, CNT_VEC_EMPTY, CNT_MIX, CNT_NONE };

struct op {
	const char *type, *name;
	enum core core;
	const char *in, *idt, *ifmt, *out, *odt, *ofmt;
	char work;        /* variable the duration scales with ('W' = attention work) */
	double base_us;   /* median at zero work */
	double per_us;    /* median growth per unit of work */
	double sigma;     /* lognormal spread (log space) */
	enum cnt cnt;
};

enum {
	/* step begin */
	EMBED, EMBED_AR, COS, SIN, POS_CAST, BT_MOVE,
	/* attention (every layer) */
	IN_NORM0, IN_NORM, QKVA_QUANT, QKVA_MM, QA_SLICE, QA_NORM, QB_QUANT, QB_MM, KV_SLICE,
	KV_CACHE, Q_ABSORB, Q_TRANS, Q_ROPE, FIA_DECODE, FIA_PREFILL, UV_BMM, O_TRANS, O_PROJ,
	O_AR, POST_NORM,
	/* dense MLP (layers 0..2) */
	D_GATEUP, D_SWIGLU, D_DOWN, D_AR,
	/* MoE */
	ROUTER, TOPK, DISPATCH, COMBINE, PERMUTE, A2A, UNPERMUTE, E_QUANT1, GMM_UP, E_SWIGLU,
	E_QUANT2, GMM_DOWN, SH_GATEUP, SH_SWIGLU, SH_DOWN, ROUTED_SCALE, MOE_ADD,
	/* step end: final norm, lm_head, sampling */
	FINAL_NORM, LAST_TOK, LM_HEAD, LOGIT_GATHER, LOGIT_CONCAT, LOGIT_CAST, PENALTY, TEMP,
	TOPK_SAMPLE, SOFTMAX, ARGMAX, TOK_CAST, POS_ADD, SLOT_FILL, BT_UPDATE,
	/* EAGLE-style draft layer (hidden 1024, 16 q heads, 8 kv heads) */
	DR_NORM, DR_QKV, DR_SPLIT, DR_CACHE, DR_FIA_DECODE, DR_FIA_PREFILL, DR_O, DR_MULS_ADD,
	NOPS
};

#define BF "DT_BF16"
#define NA "N/A"

static const struct op ops[NOPS] = {
	[EMBED] = { "GatherV2", "aclnnEmbedding_GatherV2_GatherV2", AIV, "16160,7168;%T;1",
		    "DT_BF16;INT64;INT64", "ND;ND;ND", "%T,7168", BF, "ND", 'T', 3.0, 0.004, 0.08,
		    CNT_VEC_NA },
	[EMBED_AR] = { "hcom_allReduce_", "hcom_allReduce_", COMM, NA, NA, NA, NA, NA, NA, 'T',
		       18.0, 0.012, 0.45, CNT_NONE },
	[COS] = { "GatherV2", "aclnnIndexSelect_GatherV2_GatherV2", AIV, "163840,64;%T;1",
		  "DT_BF16;INT64;INT64", "ND;ND;ND", "%T,64", BF, "ND", 'T', 2.2, 0.0004, 0.08,
		  CNT_VEC_NA },
	[SIN] = { "GatherV2", "aclnnIndexSelect_GatherV2_GatherV2", AIV, "163840,64;%T;1",
		  "DT_BF16;INT64;INT64", "ND;ND;ND", "%T,64", BF, "ND", 'T', 2.2, 0.0004, 0.08,
		  CNT_VEC_NA },
	[POS_CAST] = { "Cast", "aclnnCast_Cast_Cast", AIV, "%T", "INT64", "ND", "%T", "INT32",
		       "ND", 'T', 1.6, 0.0001, 0.06, CNT_VEC_EMPTY },
	[BT_MOVE] = { "TensorMove", "aclnnInplaceCopy_TensorMove_TensorMove", AIV, "%B,%S",
		      "INT32", "ND", "%B,%S", "INT32", "ND", 'B', 1.9, 0.002, 0.07, CNT_VEC_EMPTY },

	[IN_NORM0] = { "RmsNorm", "aclnnRmsNorm_RmsNorm_RmsNorm", AIV, "%T,7168;7168",
		       "DT_BF16;DT_BF16", "ND;ND", "%T,7168;%T,1", "DT_BF16;FLOAT", "ND;ND", 'T',
		       3.1, 0.0042, 0.06, CNT_VEC_NA },
	[IN_NORM] = { "AddRmsNormBias", "aclnnAddRmsNormBias_AddRmsNormBias_AddRmsNormBias", AIV,
		      "%T,7168;%T,7168;7168;7168", "DT_BF16;DT_BF16;DT_BF16;DT_BF16",
		      "ND;ND;ND;ND", "%T,7168;%T,1;%T,7168", "DT_BF16;FLOAT;DT_BF16", "ND;ND;ND",
		      'T', 3.8, 0.0085, 0.06, CNT_VEC_NA },
	[QKVA_QUANT] = { "DynamicQuant", "aclnnDynamicQuant_DynamicQuant_DynamicQuant", AIV,
			 "%T,7168", BF, "ND", "%T,7168;%T", "INT8;FLOAT", "ND;ND", 'T', 2.9,
			 0.0047, 0.07, CNT_VEC_EMPTY },
	[QKVA_MM] = { "QuantBatchMatmulV3", "aclnnQuantMatmulV4_QuantBatchMatmulV3_QuantBatchMatmulV3",
		      AIC, "%T,7168;2112,7168;2112;%T", "INT8;INT8;FLOAT;FLOAT",
		      "ND;FRACTAL_NZ;ND;ND", "%T,2112", BF, "ND", 'T', 10.5, 0.052, 0.04,
		      CNT_CUBE },
	[QA_SLICE] = { "Slice", "aclnnSlice_Slice_Slice", AIV, "%T,2112;2;2", "DT_BF16;INT64;INT64",
		       "ND;ND;ND", "%T,1536", BF, "ND", 'T', 1.8, 0.0011, 0.06, CNT_VEC_EMPTY },
	[QA_NORM] = { "RmsNorm", "aclnnRmsNorm_RmsNorm_RmsNorm", AIV, "%T,1536;1536",
		      "DT_BF16;DT_BF16", "ND;ND", "%T,1536;%T,1", "DT_BF16;FLOAT", "ND;ND", 'T',
		      2.6, 0.0011, 0.06, CNT_VEC_NA },
	[QB_QUANT] = { "AscendQuantV2", "aclnnAscendQuantV3_AscendQuantV2_AscendQuantV2", AIV,
		       "%T,1536;1536;1536", "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND", "%T,1536",
		       "INT8", "ND", 'T', 2.1, 0.0009, 0.07, CNT_VEC_EMPTY },
	[QB_MM] = { "QuantBatchMatmulV3", "aclnnQuantMatmulV4_QuantBatchMatmulV3_QuantBatchMatmulV3",
		    AIC, "%T,1536;3072,1536;3072;%T", "INT8;INT8;FLOAT;FLOAT",
		    "ND;FRACTAL_NZ;ND;ND", "%T,3072", BF, "ND", 'T', 6.2, 0.016, 0.04, CNT_CUBE },
	[KV_SLICE] = { "Slice", "aclnnSlice_Slice_Slice", AIV, "%T,2112;2;2", "DT_BF16;INT64;INT64",
		       "ND;ND;ND", "%T,576", BF, "ND", 'T', 1.7, 0.0005, 0.06, CNT_VEC_EMPTY },
	[KV_CACHE] = { "KvRmsNormRopeCache", "aclnnKvRmsNormRopeCache_KvRmsNormRopeCache_KvRmsNormRopeCache",
		       AIV, "%T,1,1,576;512;%T,1,1,64;%T,1,1,64;%T;%P,128,1,64;%P,128,1,512",
		       "DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT64;DT_BF16;DT_BF16",
		       "ND;ND;ND;ND;ND;ND;ND", "%P,128,1,64;%P,128,1,512;%T,1,1,64;%T,1,1,512",
		       "DT_BF16;DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND;ND", 'T', 4.4, 0.0031, 0.07,
		       CNT_VEC_NA },
	[Q_ABSORB] = { "BatchMatMulV2", "aclnnBatchMatMul_BatchMatMulV2_BatchMatMulV2", AIC,
		       "16,%T,128;16,128,512", "DT_BF16;DT_BF16", "ND;ND", "16,%T,512", BF, "ND",
		       'T', 5.3, 0.0072, 0.05, CNT_CUBE },
	[Q_TRANS] = { "Transpose", "aclnnPermute_Transpose_Transpose", AIV, "16,%T,512;3", "DT_BF16;INT64",
		      "ND;ND", "%T,16,512", BF, "ND", 'T', 2.4, 0.0058, 0.07, CNT_VEC_EMPTY },
	[Q_ROPE] = { "InterleaveRope", "aclnnInterleaveRope_InterleaveRope_InterleaveRope", AIV,
		     "%T,16,1,64;%T,1,1,64;%T,1,1,64", "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND",
		     "%T,16,1,64", BF, "ND", 'T', 2.3, 0.0012, 0.07, CNT_VEC_NA },
	/* FIA (MLA, BNSD-style paged): q, k, v, -, mask, seq lens, kv seq lens, ..., block
	 * table (slot 14), ..., query_rope (24), key_rope (25), ... 31 slots. dtypes and
	 * formats are filled in at start-up from the slots. */
	[FIA_DECODE] = { "FusedInferAttentionScore",
			 "aclnnFusedInferAttentionScoreV3_FusedInferAttentionScore_FusedInferAttentionScore",
			 MIXC,
			 "%T,16,512;%P,128,512;%P,128,512;;;%b;%b;;;;;;;;%B,%S;;;;;;;;;;%T,16,64;%P,128,64;;;;;",
			 NULL, NULL, "%T,16,512;", "DT_BF16;DT_UNDEFINED", "ND;NULL", 'W', 9.5,
			 0.021, 0.10, CNT_MIX },
	[FIA_PREFILL] = { "FusedInferAttentionScore",
			  "aclnnFusedInferAttentionScoreV3_FusedInferAttentionScore_FusedInferAttentionScore",
			  MIXC,
			  "%T,16,512;%P,128,512;%P,128,512;;2048,2048;%b;%b;;;;;;;;%B,%S;;;;;;;;;;%T,16,64;%P,128,64;;;;;",
			  NULL, NULL, "%T,16,512;%T,16,1", "DT_BF16;FLOAT", "ND;ND", 'W', 14.0,
			  0.021, 0.10, CNT_MIX },
	[UV_BMM] = { "BatchMatMulV2", "aclnnBatchMatMul_BatchMatMulV2_BatchMatMulV2", AIC,
		     "16,%T,512;16,512,128", "DT_BF16;DT_BF16", "ND;ND", "16,%T,128", BF, "ND",
		     'T', 5.1, 0.0069, 0.05, CNT_CUBE },
	[O_TRANS] = { "Transpose", "aclnnPermute_Transpose_Transpose", AIV, "16,%T,128;3", "DT_BF16;INT64",
		      "ND;ND", "%T,16,128", BF, "ND", 'T', 2.0, 0.0016, 0.07, CNT_VEC_EMPTY },
	[O_PROJ] = { "MatMulV3", "aclnnMm_MatMulV3_MatMulV3", AIC, "%T,2048;2048,7168",
		     "DT_BF16;DT_BF16", "ND;ND", "%T,7168", BF, "ND", 'T', 13.8, 0.098, 0.04,
		     CNT_CUBE },
	[O_AR] = { "hcom_allReduce_", "hcom_allReduce_", COMM, NA, NA, NA, NA, NA, NA, 'T', 16.0,
		   0.011, 0.45, CNT_NONE },
	[POST_NORM] = { "AddRmsNormBias", "aclnnAddRmsNormBias_AddRmsNormBias_AddRmsNormBias", AIV,
			"%T,7168;%T,7168;7168;7168", "DT_BF16;DT_BF16;DT_BF16;DT_BF16",
			"ND;ND;ND;ND", "%T,7168;%T,1;%T,7168", "DT_BF16;FLOAT;DT_BF16", "ND;ND;ND",
			'T', 3.8, 0.0085, 0.06, CNT_VEC_NA },

	[D_GATEUP] = { "MatMulV2", "aclnnMm_MatMulV2_MatMulV2", AIC, "%T,7168;7168,4608",
		       "DT_BF16;DT_BF16", "ND;ND", "%T,4608", BF, "ND", 'T', 28.0, 0.22, 0.04,
		       CNT_CUBE },
	[D_SWIGLU] = { "SwiGlu", "aclnnSwiGlu_SwiGlu_SwiGlu", AIV, "%T,4608", BF, "ND", "%T,2304",
		       BF, "ND", 'T', 2.5, 0.0042, 0.06, CNT_VEC_NA },
	[D_DOWN] = { "MatMulV2", "aclnnMm_MatMulV2_MatMulV2", AIC, "%T,2304;2304,7168",
		     "DT_BF16;DT_BF16", "ND;ND", "%T,7168", BF, "ND", 'T', 15.2, 0.11, 0.04,
		     CNT_CUBE },
	[D_AR] = { "hcom_allReduce_", "hcom_allReduce_", COMM, NA, NA, NA, NA, NA, NA, 'T', 16.0,
		   0.011, 0.45, CNT_NONE },

	[ROUTER] = { "MatMulV2", "aclnnMm_MatMulV2_MatMulV2", AIC, "%T,7168;256,7168",
		     "DT_BF16;DT_BF16", "ND;ND", "%T,256", "FLOAT", "ND", 'T', 4.2, 0.0122, 0.05,
		     CNT_CUBE },
	[TOPK] = { "MoeGatingTopK", "aclnnMoeGatingTopK_MoeGatingTopK_MoeGatingTopK", AIV,
		   "%T,256;256", "FLOAT;FLOAT", "ND;ND", "%T,8;%T,8;%T,256", "FLOAT;INT32;FLOAT",
		   "ND;ND;ND", 'T', 4.6, 0.0021, 0.07, CNT_VEC_NA },
	[DISPATCH] = { "MoeDistributeDispatchV2",
		       "aclnnMoeDistributeDispatchV2_MoeDistributeDispatchV2_MoeDistributeDispatchV2",
		       MIXV, "%T,7168;%T,8;;;%T,8", "DT_BF16;INT32;DT_UNDEFINED;DT_UNDEFINED;FLOAT",
		       "ND;ND;NULL;NULL;ND", "%M,7168;%M;%K;16;256;%M", "INT8;FLOAT;INT32;INT64;INT32;FLOAT",
		       "ND;ND;ND;ND;ND;ND", 'M', 38.0, 0.09, 0.25, CNT_MIX },
	[COMBINE] = { "MoeDistributeCombineV2",
		      "aclnnMoeDistributeCombineV2_MoeDistributeCombineV2_MoeDistributeCombineV2",
		      MIXV, "%M,7168;%T,8;%K;16;256;%T,8", "DT_BF16;INT32;INT32;INT64;INT32;FLOAT",
		      "ND;ND;ND;ND;ND;ND", "%T,7168", BF, "ND", 'M', 42.0, 0.10, 0.25, CNT_MIX },
	[PERMUTE] = { "MoeTokenPermute", "aclnnMoeTokenPermute_MoeTokenPermute_MoeTokenPermute", AIV,
		      "%T,7168;%T,8", "DT_BF16;INT32", "ND;ND", "%K,7168;%K", "DT_BF16;INT32",
		      "ND;ND", 'K', 6.5, 0.0052, 0.08, CNT_VEC_EMPTY },
	[A2A] = { "hcom_alltoallv_", "hcom_alltoallv_", COMM, NA, NA, NA, NA, NA, NA, 'K', 45.0,
		  0.021, 0.55, CNT_NONE },
	[UNPERMUTE] = { "MoeTokenUnpermute",
			"aclnnMoeTokenUnpermute_MoeTokenUnpermute_MoeTokenUnpermute", AIV,
			"%K,7168;%K;%T,8", "DT_BF16;INT32;FLOAT", "ND;ND;ND", "%T,7168", BF, "ND",
			'K', 6.9, 0.0061, 0.08, CNT_VEC_EMPTY },
	[E_QUANT1] = { "DynamicQuant", "aclnnDynamicQuant_DynamicQuant_DynamicQuant", AIV,
		       "%M,7168", BF, "ND", "%M,7168;%M", "INT8;FLOAT", "ND;ND", 'M', 2.9, 0.0047,
		       0.07, CNT_VEC_EMPTY },
	[GMM_UP] = { "GroupedMatmul", "aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul", MIXC,
		     "%M,7168;16,7168,4096;16,4096;%M;16", "INT8;INT8;FLOAT;FLOAT;INT64",
		     "ND;FRACTAL_NZ;ND;ND;ND", "%M,4096", BF, "ND", 'M', 42.0, 0.105, 0.06,
		     CNT_MIX },
	[E_SWIGLU] = { "SwiGlu", "aclnnSwiGlu_SwiGlu_SwiGlu", AIV, "%M,4096", BF, "ND", "%M,2048",
		       BF, "ND", 'M', 2.5, 0.0038, 0.06, CNT_VEC_NA },
	[E_QUANT2] = { "DynamicQuant", "aclnnDynamicQuant_DynamicQuant_DynamicQuant", AIV,
		       "%M,2048", BF, "ND", "%M,2048;%M", "INT8;FLOAT", "ND;ND", 'M', 2.4, 0.0015,
		       0.07, CNT_VEC_EMPTY },
	[GMM_DOWN] = { "GroupedMatmul", "aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul", MIXC,
		       "%M,2048;16,2048,7168;16,7168;%M;16", "INT8;INT8;FLOAT;FLOAT;INT64",
		       "ND;FRACTAL_NZ;ND;ND;ND", "%M,7168", BF, "ND", 'M', 36.0, 0.092, 0.06,
		       CNT_MIX },
	[SH_GATEUP] = { "MatMulV2", "aclnnMm_MatMulV2_MatMulV2", AIC, "%T,7168;7168,4096",
			"DT_BF16;DT_BF16", "ND;ND", "%T,4096", BF, "ND", 'T', 25.0, 0.196, 0.04,
			CNT_CUBE },
	[SH_SWIGLU] = { "SwiGlu", "aclnnSwiGlu_SwiGlu_SwiGlu", AIV, "%T,4096", BF, "ND", "%T,2048",
			BF, "ND", 'T', 2.5, 0.0038, 0.06, CNT_VEC_NA },
	[SH_DOWN] = { "MatMulV2", "aclnnMm_MatMulV2_MatMulV2", AIC, "%T,2048;2048,7168",
		      "DT_BF16;DT_BF16", "ND;ND", "%T,7168", BF, "ND", 'T', 13.8, 0.098, 0.04,
		      CNT_CUBE },
	[ROUTED_SCALE] = { "Mul", "aclnnMuls_Mul_Mul", AIV, "%T,7168;1", "DT_BF16;FLOAT", "ND;ND",
			   "%T,7168", BF, "ND", 'T', 1.9, 0.0029, 0.06, CNT_VEC_EMPTY },
	[MOE_ADD] = { "Add", "aclnnAdd_Add_Add", AIV, "%T,7168;%T,7168", "DT_BF16;DT_BF16",
		      "ND;ND", "%T,7168", BF, "ND", 'T', 2.0, 0.0043, 0.06, CNT_VEC_EMPTY },

	[FINAL_NORM] = { "RmsNorm", "aclnnRmsNorm_RmsNorm_RmsNorm", AIV, "%T,7168;7168",
			 "DT_BF16;DT_BF16", "ND;ND", "%T,7168;%T,1", "DT_BF16;FLOAT", "ND;ND", 'T',
			 3.1, 0.0042, 0.06, CNT_VEC_NA },
	[LAST_TOK] = { "Index", "aclnnIndex_Index_Index", AIV, "%T,7168;%B", "DT_BF16;INT64",
		       "ND;ND", "%B,7168", BF, "ND", 'B', 3.4, 0.0045, 0.08, CNT_VEC_EMPTY },
	[LM_HEAD] = { "MatMulV2", "aclnnMm_MatMulV2_MatMulV2", AIC, "%B,7168;16160,7168",
		      "DT_BF16;DT_BF16", "ND;ND", "%B,16160", BF, "ND", 'B', 76.0, 0.45, 0.04,
		      CNT_CUBE },
	[LOGIT_GATHER] = { "hcom_allGather_", "hcom_allGather_", COMM, NA, NA, NA, NA, NA, NA,
			   'B', 22.0, 0.09, 0.45, CNT_NONE },
	[LOGIT_CONCAT] = { "ConcatD", "aclnnCat_ConcatD_ConcatD", AIV,
			   "%B,16160;%B,16160;%B,16160;%B,16160;%B,16160;%B,16160;%B,16160;%B,16160",
			   "DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16",
			   "ND;ND;ND;ND;ND;ND;ND;ND", "%B,129280", BF, "ND", 'B', 4.1, 0.08, 0.07,
			   CNT_VEC_EMPTY },
	[LOGIT_CAST] = { "Cast", "aclnnCast_Cast_Cast", AIV, "%B,129280", BF, "ND", "%B,129280",
			 "FLOAT", "ND", 'B', 2.8, 0.11, 0.06, CNT_VEC_EMPTY },
	[PENALTY] = { "Sub", "aclnnSub_Sub_Sub", AIV, "%B,129280;%B,129280", "FLOAT;FLOAT",
		      "ND;ND", "%B,129280", "FLOAT", "ND", 'B', 3.2, 0.16, 0.06, CNT_VEC_EMPTY },
	[TOPK_SAMPLE] = { "TopKV2", "aclnnTopk_TopKV2_TopKV2", AIV, "%B,129280;1", "FLOAT;INT64",
			  "ND;ND", "%B,50;%B,50", "FLOAT;INT64", "ND;ND", 'B', 9.5, 0.42, 0.08,
			  CNT_VEC_NA },
	[TEMP] = { "RealDiv", "aclnnDiv_RealDiv_RealDiv", AIV, "%B,129280;%B,1", "FLOAT;FLOAT",
		   "ND;ND", "%B,129280", "FLOAT", "ND", 'B', 3.0, 0.15, 0.06, CNT_VEC_EMPTY },
	[SOFTMAX] = { "SoftmaxV2", "aclnnSoftmax_SoftmaxV2_SoftmaxV2", AIV, "%B,129280", "FLOAT",
		      "ND", "%B,129280", "FLOAT", "ND", 'B', 5.2, 0.31, 0.07, CNT_VEC_NA },
	[ARGMAX] = { "ArgMaxV2", "aclnnArgMax_ArgMaxV2_ArgMaxV2", AIV, "%B,129280;1", "FLOAT;INT64",
		     "ND;ND", "%B", "INT64", "ND", 'B', 6.1, 0.19, 0.07, CNT_VEC_NA },
	[TOK_CAST] = { "Cast", "aclnnCast_Cast_Cast", AIV, "%B", "INT64", "ND", "%B", "INT32",
		       "ND", 'B', 1.6, 0.0001, 0.06, CNT_VEC_EMPTY },
	[POS_ADD] = { "Add", "aclnnAdds_Add_Add", AIV, "%B;1", "INT64;INT64", "ND;ND", "%B",
		      "INT64", "ND", 'B', 1.7, 0.0001, 0.06, CNT_VEC_EMPTY },
	[SLOT_FILL] = { "Fill", "aclnnInplaceFillScalar_Fill_Fill", AIV, "%B;1", "INT32;INT32",
			"ND;ND", "%B", "INT32", "ND", 'B', 1.5, 0.0001, 0.06, CNT_VEC_EMPTY },
	[BT_UPDATE] = { "ScatterNdUpdate", "aclnnScatterNdUpdate_ScatterNdUpdate_ScatterNdUpdate",
			AIV, "%B,%S;%B,1;%B", "INT32;INT64;INT32", "ND;ND;ND", "%B,%S", "INT32",
			"ND", 'B', 3.3, 0.004, 0.08, CNT_VEC_NA },

	[DR_NORM] = { "RmsNorm", "aclnnRmsNorm_RmsNorm_RmsNorm", AIV, "%T,1024;1024",
		      "DT_BF16;DT_BF16", "ND;ND", "%T,1024;%T,1", "DT_BF16;FLOAT", "ND;ND", 'T',
		      2.4, 0.0007, 0.06, CNT_VEC_NA },
	[DR_QKV] = { "MatMulV2", "aclnnMm_MatMulV2_MatMulV2", AIC, "%T,1024;4096,1024",
		     "DT_BF16;DT_BF16", "ND;ND", "%T,4096", BF, "ND", 'T', 7.4, 0.028, 0.04,
		     CNT_CUBE },
	[DR_SPLIT] = { "split_qkv_rmsnorm_rope_kernel_0", "split_qkv_rmsnorm_rope_kernel_0", AIV,
		       "%T,4096;128;128;%T,128;%T,128", "DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16",
		       "ND;ND;ND;ND;ND", "%T,2048;%T,1024;%T,1024", "DT_BF16;DT_BF16;DT_BF16",
		       "ND;ND;ND", 'T', 4.8, 0.0036, 0.09, CNT_VEC_EMPTY },
	[DR_CACHE] = { "ReshapeAndCacheNdKernel", "ReshapeAndCacheNdKernel", AIV,
		       "%T,8,128;%T,8,128;%P,128,8,128;%P,128,8,128;%T",
		       "DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT32", "ND;ND;ND;ND;ND",
		       "%P,128,8,128;%P,128,8,128", "DT_BF16;DT_BF16", "ND;ND", 'T', 3.1, 0.0022,
		       0.08, CNT_VEC_NA },
	[DR_FIA_DECODE] = { "FusedInferAttentionScore",
			    "aclnnFusedInferAttentionScoreV3_FusedInferAttentionScore_FusedInferAttentionScore",
			    MIXC,
			    "%T,16,128;%P,128,1024;%P,128,1024;;;%b;%b;;;;;;;;%B,%S;;;;;;;;;;;;;;;;",
			    NULL, NULL, "%T,16,128;", "DT_BF16;DT_UNDEFINED", "ND;NULL", 'W', 7.2,
			    0.006, 0.10, CNT_MIX },
	[DR_FIA_PREFILL] = { "FusedInferAttentionScore",
			     "aclnnFusedInferAttentionScoreV3_FusedInferAttentionScore_FusedInferAttentionScore",
			     MIXC,
			     "%T,16,128;%P,128,1024;%P,128,1024;;2048,2048;%b;%b;;;;;;;;%B,%S;;;;;;;;;;;;;;;;",
			     NULL, NULL, "%T,16,128;%T,16,1", "DT_BF16;FLOAT", "ND;ND", 'W', 9.0,
			     0.006, 0.10, CNT_MIX },
	[DR_O] = { "MatMulV2", "aclnnMm_MatMulV2_MatMulV2", AIC, "%T,2048;1024,2048",
		   "DT_BF16;DT_BF16", "ND;ND", "%T,1024", BF, "ND", 'T', 6.1, 0.014, 0.04,
		   CNT_CUBE },
	[DR_MULS_ADD] = { "muls_add_kernel_1", "muls_add_kernel_1", AIV, "%T,1024;%T,1024",
			  "DT_BF16;DT_BF16", "ND;ND", "%T,1024", BF, "ND", 'T', 2.2, 0.0008, 0.08,
			  CNT_VEC_EMPTY },
};

/* dtypes and formats of the FIA ops, derived from their slots */
static char fia_idt[NOPS][512], fia_ifmt[NOPS][256];

static void fill_fia_types(int id)
{
	/* empty slot: DT_UNDEFINED/NULL; %b (sequence-length list): INT64; slot 4
	 * (attention mask): BOOL; slot 14 (block table): INT32; others: DT_BF16 */
	const char *s = ops[id].in;
	char *dt = fia_idt[id], *fmt = fia_ifmt[id];
	size_t dn = 0, fn = 0;
	int slot = 0;
	for (;;) {
		size_t len = strcspn(s, ";");
		const char *d = "DT_BF16", *f = "ND";
		if (len == 0) {
			d = "DT_UNDEFINED";
			f = "NULL";
		} else if (len == 2 && s[0] == '%' && s[1] == 'b') {
			d = "INT64";
		} else if (slot == 4) {
			d = "BOOL";
		} else if (slot == 14) {
			d = "INT32";
		}
		dn += (size_t)snprintf(dt + dn, sizeof(fia_idt[0]) - dn, "%s%s", slot ? ";" : "", d);
		fn += (size_t)snprintf(fmt + fn, sizeof(fia_ifmt[0]) - fn, "%s%s", slot ? ";" : "",
				       f);
		slot++;
		if (s[len] == '\0')
			break;
		s += len + 1;
	}
	if (slot != 31) {
		fprintf(stderr, "gen_profile: internal error: FIA template %d has %d slots\n", id,
			slot);
		exit(3);
	}
}

static const char *op_idt(int id)
{
	return ops[id].idt ? ops[id].idt : fia_idt[id];
}

static const char *op_ifmt(int id)
{
	return ops[id].ifmt ? ops[id].ifmt : fia_ifmt[id];
}

/* ---- per-rank state -------------------------------------------------------- */

struct ctx {
	long v[128];            /* template variables, by letter */
	int prefill;
	double kv_len;          /* mean context length of the step's sequences */
	uint64_t step, task;
	uint64_t t_ns;          /* start time, ns */
	long long rows_left;
	struct rng rng, eff_rng;
	struct out *kd, *od;    /* kernel_details, operator_details (or NULL) */
};

static void put_tpl(struct out *o, const struct ctx *c, const char *tpl, int kernel_view)
{
	for (const char *p = tpl; *p; p++) {
		if (p[0] == '%' && p[1]) {
			p++;
			if (*p == 'b') {
				if (!kernel_view)
					ou64(o, (uint64_t)c->v['B']);
			} else {
				ou64(o, (uint64_t)c->v[(unsigned char)*p]);
			}
		} else {
			och(o, *p);
		}
	}
}

/* a shape cell as the profiler writes it: literal quotes, CSV-escaped */
static void put_shape(struct out *o, const struct ctx *c, const char *tpl, int kernel_view)
{
	if (strcmp(tpl, NA) == 0) {
		ostr(o, NA);
		return;
	}
	ostr(o, "\"\"\"");
	put_tpl(o, c, tpl, kernel_view);
	ostr(o, "\"\"\"");
}

static double median_us(const struct op *op, const struct ctx *c)
{
	double work;
	if (op->work == 'W')
		work = (double)c->v['T'] * (c->prefill ? 0.5 * (double)c->v['T'] /
					   (double)c->v['B'] + 64.0 : c->kv_len) / 256.0;
	else
		work = (double)c->v[(unsigned char)op->work];
	return op->base_us + op->per_us * work;
}

/* ---- the roof ---------------------------------------------------------------- */

/*
 * The fastest the claimed device (ATLAS_800_A3_752T_128G_DIE in
 * data/devices.json: 1759.218604 GB/s; cube 353.9 TFLOP/s bf16, 752 int8)
 * can run an op, from the
 * op's own shapes by the plain formulas: max(FLOPs / peak, bytes / bandwidth).
 * No generated duration may beat it (a point above the report's roofline is
 * a wrong model or a wrong device, never a result), so emit() stretches the
 * duration to at least this times an efficiency factor.  Derived here from
 * the templates on purpose, not by perfdb's operator costs, so that the
 * report's roofline is checked against an independent count.
 */
#define A3_BYTES_PER_US 1759.218604e3
#define A3_CUBE_BF16_PER_US 353.9e6
#define A3_CUBE_INT8_PER_US 752e6

struct tensor {
	double n, size;     /* elements, bytes per element */
	double dim[8];
	int nd;
	int cache;          /* first dimension is the KV-cache block count %P */
};

static double dtype_size(const char *d, size_t n)
{
	static const struct { const char *name; double size; } t[] = {
		{ "DT_BF16", 2 }, { "FLOAT", 4 }, { "INT8", 1 }, { "INT32", 4 },
		{ "INT64", 8 }, { "BOOL", 1 }, { "DT_UNDEFINED", 0 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strlen(t[i].name) == n && memcmp(t[i].name, d, n) == 0)
			return t[i].size;
	return 4;
}

/* the tensors of a shape template in the kernel view, with their dtypes */
static int tensors(const struct ctx *c, const char *tpl, const char *dts, struct tensor *t,
		   int max)
{
	if (strcmp(tpl, NA) == 0)
		return 0;
	int k = 0;
	for (;;) {
		struct tensor *x = &t[k];
		memset(x, 0, sizeof(*x));
		size_t tl = strcspn(tpl, ";"), dl = strcspn(dts, ";");
		x->size = dtype_size(dts, dl);
		x->cache = tl >= 2 && tpl[0] == '%' && tpl[1] == 'P';
		x->n = tl ? 1 : 0;
		for (const char *p = tpl; p < tpl + tl && x->nd < 8;) {
			double v;
			if (*p == '%') {
				v = p[1] == 'b' ? 0 : (double)c->v[(unsigned char)p[1]];
				p += 2;
			} else {
				char *end;
				v = strtod(p, &end);
				p = end;
			}
			x->dim[x->nd++] = v;
			x->n *= v;
			if (*p == ',')
				p++;
		}
		if (++k == max || tpl[tl] == '\0')
			return k;
		tpl += tl + 1;
		dts += dts[dl] ? dl + 1 : dl;
	}
}

static double sum_bytes(const struct tensor *t, int n, int from, int skip_cache)
{
	double b = 0;
	for (int i = from; i < n; i++)
		if (!(skip_cache && t[i].cache))
			b += t[i].n * t[i].size;
	return b;
}

static int type_is(const struct op *op, const char *const *types)
{
	for (; *types; types++)
		if (strcmp(op->type, *types) == 0)
			return 1;
	return 0;
}

/* roofline time in µs of op `id` in the step `c`; 0 for communication */
static double roof_us(int id, const struct ctx *c)
{
	static const char *const gemm[] = { "MatMulV2", "MatMulV3", "BatchMatMulV2",
					    "QuantBatchMatmulV3", "GroupedMatmul", NULL };
	static const char *const rows_read[] = { "GatherV2", "Index", "Slice", NULL };
	const struct op *op = &ops[id];
	if (op->core == COMM)
		return 0;
	struct tensor in[32], out[8];
	int ni = tensors(c, op->in, op_idt(id), in, 32);
	int no = tensors(c, op->out, op->odt, out, 8);
	double flops = 0, bytes, peak = 1;
	double T = (double)c->v['T'], B = (double)c->v['B'];
	if (type_is(op, gemm)) {
		/* 2MNK: each output element is a K-long dot product */
		double K = in[0].dim[in[0].nd - 1];
		flops = 2.0 * out[0].n * K;
		bytes = sum_bytes(in, ni, 0, 0) + out[0].n * out[0].size;
		if (strcmp(op->type, "GroupedMatmul") == 0) {
			/* only the experts that get rows read their weights and scales */
			double g = in[1].dim[0], used = in[0].dim[0] < g ? in[0].dim[0] : g;
			bytes -= (1.0 - used / g) * (in[1].n * in[1].size + in[2].n * in[2].size);
		}
		peak = in[0].size == 1 ? A3_CUBE_INT8_PER_US : A3_CUBE_BF16_PER_US;
	} else if (strcmp(op->type, "FusedInferAttentionScore") == 0) {
		/* Q, O, and K, V for each sequence's kv length; 4*b*h*s*kv*d, with
		 * a prefill's causal mask pairing query i with its i+1 first keys */
		double h = in[0].dim[1], d = in[0].dim[2] + (ni > 24 ? in[24].dim[2] : 0);
		double kd = in[1].dim[2] + (ni > 25 ? in[25].dim[2] : 0), vd = in[2].dim[2];
		double s = c->prefill ? T / B : 1.0, kv = c->prefill ? T / B : c->kv_len;
		double pairs = c->prefill ? (s + 1.0) / 2.0 : kv;
		flops = 4.0 * B * h * s * pairs * d;
		bytes = T * h * d * 2 + out[0].n * out[0].size + B * kv * (kd + vd) * 2;
		peak = A3_CUBE_BF16_PER_US;
	} else if (type_is(op, rows_read)) {
		/* reads the rows it writes, plus the indices */
		bytes = 2.0 * sum_bytes(out, no, 0, 0) + sum_bytes(in, ni, 1, 0);
	} else {
		/* elementwise, norms, cache updates: every operand read or written
		 * once; a KV cache only for the T rows written into it.  A few FLOPs
		 * per byte at most, under the vector unit's ridge (11e6 / 1759e3 =
		 * 6.3 FLOP/B): bandwidth-bound, so bytes alone give the roof. */
		bytes = sum_bytes(in, ni, 0, 1) + sum_bytes(out, no, 0, 1);
		for (int i = 0; i < no; i++)
			if (out[i].cache)
				bytes += T * out[i].n / (out[i].dim[0] * out[i].dim[1]) * out[i].size;
	}
	double tf = flops / peak, tb = bytes / A3_BYTES_PER_US;
	return tf > tb ? tf : tb;
}

static void ratios(struct out *o, struct rng *r, double total, int n, const double *lo,
		   const double *hi)
{
	for (int i = 0; i < n; i++) {
		double q = lo[i] + (hi[i] - lo[i]) * runif(r);
		och(o, ',');
		ofix3(o, q * total);
		och(o, ',');
		ofix3(o, q);
	}
}

static void aic_counters(struct out *o, struct rng *r, double dur, unsigned blocks)
{
	static const double lo[5] = { 0.25, 0.02, 0.08, 0.30, 0.02 };
	static const double hi[5] = { 0.85, 0.15, 0.40, 0.92, 0.20 };
	double t = dur * (0.86 + 0.1 * runif(r));
	och(o, ',');
	ofix3(o, t);
	och(o, ',');
	ou64(o, (uint64_t)(t * 1850.0 * blocks));
	ratios(o, r, t, 5, lo, hi);
	och(o, ',');
	ofix3(o, 0.05 * runif(r));
}

static void aiv_counters(struct out *o, struct rng *r, double dur, unsigned blocks)
{
	static const double lo[4] = { 0.20, 0.03, 0.25, 0.10 };
	static const double hi[4] = { 0.80, 0.25, 0.90, 0.60 };
	double t = dur * (0.84 + 0.12 * runif(r));
	och(o, ',');
	ofix3(o, t);
	och(o, ',');
	ou64(o, (uint64_t)(t * 1850.0 * blocks));
	ratios(o, r, t, 4, lo, hi);
	och(o, ',');
	ofix3(o, 0.08 * runif(r));
}

static void repeat(struct out *o, const char *cell, int n)
{
	for (int i = 0; i < n; i++) {
		och(o, ',');
		ostr(o, cell);
	}
}

static const char *const core_name[] = { "AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV",
					  "HCCL" };

static void emit(struct ctx *c, int id)
{
	if (c->rows_left <= 0)
		return;
	c->rows_left--;
	const struct op *op = &ops[id];
	struct out *o = c->kd;
	struct rng *r = &c->rng;

	double dur = rlognorm(r, median_us(op, c), op->sigma);
	/* never faster than the device: the roof times 1.1 to 3 (its own stream,
	 * so that the steps and shapes do not depend on it) */
	double eff = 1.1 * exp(0.35 * fabs(rnorm(&c->eff_rng)));
	double floor_us = roof_us(id, c) * (eff < 3.0 ? eff : 3.0);
	if (dur < floor_us)
		dur = floor_us;
	if (runif(r) < 0.002)            /* preemption, cache misses, host jitter */
		dur *= 2.0 + 8.0 * runif(r);
	int no_dur = runif(r) < 0.0001;
	double wait = runif(r) < 0.01 ? rlognorm(r, 60.0, 0.8) : rlognorm(r, 1.2, 0.5);
	c->t_ns += (uint64_t)llround(wait * 1000.0);
	unsigned blocks = op->core == AIC ? 24u : op->core == COMM ? 0u
			  : (unsigned)(c->v['T'] < 48 ? (c->v['T'] < 1 ? 1 : c->v['T']) : 48);
	if (op->core == MIXC || op->core == MIXV)
		blocks = 24;

	/* Step Id, Model ID, Task ID, Stream ID, Name */
	ou64(o, c->step);
	ostr(o, ",4294967295,");
	ou64(o, c->task % 65536);
	ostr(o, op->core == COMM ? ",5," : ",2,");
	ostr(o, op->name);
	if (op->core == COMM) {
		och(o, '_');
		ou64(o, 100 + c->task % 900);
		ostr(o, "_0_1");
	}
	/* Type, OP State, Accelerator Core */
	och(o, ',');
	ostr(o, op->type);
	ostr(o, op->core == COMM ? ",N/A," : ",dynamic,");
	ostr(o, core_name[op->core]);
	/* Start Time(us) with its tab, Duration(us), Wait Time(us) */
	och(o, ',');
	ou64(o, c->t_ns / 1000);
	och(o, '.');
	char ns[3] = { (char)('0' + c->t_ns / 100 % 10), (char)('0' + c->t_ns / 10 % 10),
		       (char)('0' + c->t_ns % 10) };
	oput(o, ns, 3);
	ostr(o, "\t,");
	if (!no_dur)
		ofix3(o, dur);
	och(o, ',');
	ofix3(o, wait);
	/* Block Dim, Mix Block Dim, HF32 Eligible */
	och(o, ',');
	ou64(o, blocks);
	ostr(o, op->core == MIXC || op->core == MIXV ? ",48,NO," : ",0,NO,");
	/* shapes, dtypes, formats */
	put_shape(o, c, op->in, 1);
	och(o, ',');
	ostr(o, op_idt(id));
	och(o, ',');
	ostr(o, op_ifmt(id));
	och(o, ',');
	put_shape(o, c, op->out, 1);
	och(o, ',');
	ostr(o, op->odt);
	och(o, ',');
	ostr(o, op->ofmt);
	/* Context ID */
	ostr(o, op->core == MIXC || op->core == MIXV ? ",0" : ",N/A");

	/* the 25 counters: 13 aic, 11 aiv, cube_utilization(%) */
	switch (op->cnt) {
	case CNT_CUBE:
		aic_counters(o, r, dur, blocks);
		repeat(o, NA, 11);
		och(o, ',');
		ofix3(o, 100.0 * (0.3 + 0.65 * runif(r)));
		break;
	case CNT_VEC_NA:
	case CNT_VEC_EMPTY:
		repeat(o, op->cnt == CNT_VEC_NA ? NA : "", 13);
		aiv_counters(o, r, dur, blocks);
		ostr(o, op->cnt == CNT_VEC_NA ? ",N/A" : ",");
		break;
	case CNT_MIX:
		aic_counters(o, r, dur, blocks);
		aiv_counters(o, r, dur, 2 * blocks);
		och(o, ',');
		ofix3(o, 100.0 * (0.2 + 0.6 * runif(r)));
		break;
	case CNT_NONE:
		repeat(o, NA, 25);
		break;
	}
	ostr(o, "\r\n");

	/* operator_details: one row per FIA kernel row, same order */
	if (c->od && strcmp(op->type, "FusedInferAttentionScore") == 0) {
		struct out *d = c->od;
		ostr(d, "aclnnFusedInferAttentionScoreV2,");
		put_shape(d, c, op->in, 0);
		och(d, ',');
		ostr(d, op_idt(id));
		och(d, ',');
		put_shape(d, c, op->out, 0);
		double host = rlognorm(r, 38.0, 0.3);
		for (int i = 0; i < 2; i++) {
			och(d, ',');
			ofix3(d, host);
		}
		for (int i = 0; i < 4; i++) {
			och(d, ',');
			if (!no_dur)
				ofix3(d, dur);
		}
		ostr(d, "\r\n");
	}
	c->t_ns += (uint64_t)llround((no_dur ? 1.0 : dur) * 1000.0);
	c->task++;
}

/* ---- steps ------------------------------------------------------------------ */

static const long decode_batches[] = { 1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256 };
static const unsigned decode_weights[] = { 2, 3, 4, 6, 8, 8, 10, 9, 9, 7, 6, 4, 3 };
static const long prefill_tokens[] = { 128, 256, 512, 1024, 2048, 4096, 8192 };
static const unsigned prefill_weights[] = { 3, 4, 5, 6, 5, 4, 3 };

static long pick(struct rng *r, const long *vals, const unsigned *w, size_t n)
{
	unsigned total = 0;
	for (size_t i = 0; i < n; i++)
		total += w[i];
	unsigned x = rbelow(r, total);
	for (size_t i = 0; i < n; i++) {
		if (x < w[i])
			return vals[i];
		x -= w[i];
	}
	return vals[n - 1];
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void step(struct ctx *c, int layers)
{
	struct rng *r = &c->rng;
	c->prefill = c->step == 0 || runif(r) < 0.12;
	long T, B;
	if (c->prefill) {
		T = pick(r, prefill_tokens, prefill_weights, NELEM(prefill_tokens));
		B = 1L << rbelow(r, 3);                  /* 1, 2 or 4 sequences */
		c->kv_len = (double)T / (double)B;
	} else {
		B = pick(r, decode_batches, decode_weights, NELEM(decode_batches));
		T = B;
		c->kv_len = rlognorm(r, 3000.0, 0.7);
	}
	c->v['T'] = T;
	c->v['B'] = B;
	c->v['K'] = T * 8;
	c->v['P'] = 4096;
	c->v['S'] = 256;
	c->v['M'] = 1;

	emit(c, EMBED);
	emit(c, EMBED_AR);
	emit(c, COS);
	emit(c, SIN);
	emit(c, POS_CAST);
	if (!c->prefill)
		emit(c, BT_MOVE);
	for (int l = 0; l < layers; l++) {
		int moe = l >= 3;
		emit(c, l == 0 ? IN_NORM0 : IN_NORM);
		emit(c, QKVA_QUANT);
		emit(c, QKVA_MM);
		emit(c, QA_SLICE);
		emit(c, QA_NORM);
		emit(c, QB_QUANT);
		emit(c, QB_MM);
		emit(c, KV_SLICE);
		emit(c, KV_CACHE);
		emit(c, Q_ABSORB);
		emit(c, Q_TRANS);
		emit(c, Q_ROPE);
		emit(c, c->prefill ? FIA_PREFILL : FIA_DECODE);
		emit(c, UV_BMM);
		emit(c, O_TRANS);
		emit(c, O_PROJ);
		emit(c, O_AR);
		emit(c, POST_NORM);
		if (!moe) {
			emit(c, D_GATEUP);
			emit(c, D_SWIGLU);
			emit(c, D_DOWN);
			emit(c, D_AR);
			continue;
		}
		/* rows routed to this rank's 16 of 256 experts: T*8/16 on average,
		 * +-3/8 depending on the layer's routing */
		long m = (T * (8 + (long)rbelow(r, 7) - 3) + 8) / 16;
		c->v['M'] = m < 1 ? 1 : m;
		emit(c, ROUTER);
		emit(c, TOPK);
		if (c->prefill) {
			emit(c, PERMUTE);
			emit(c, A2A);
			emit(c, E_QUANT1);
		} else {
			emit(c, DISPATCH);
		}
		emit(c, GMM_UP);
		emit(c, E_SWIGLU);
		emit(c, E_QUANT2);
		emit(c, GMM_DOWN);
		if (c->prefill) {
			emit(c, A2A);
			emit(c, UNPERMUTE);
		} else {
			emit(c, COMBINE);
		}
		emit(c, SH_GATEUP);
		emit(c, SH_SWIGLU);
		emit(c, SH_DOWN);
		emit(c, ROUTED_SCALE);
		emit(c, MOE_ADD);
	}
	emit(c, FINAL_NORM);
	emit(c, LAST_TOK);
	emit(c, LM_HEAD);
	emit(c, LOGIT_GATHER);
	emit(c, LOGIT_CONCAT);
	emit(c, LOGIT_CAST);
	if (runif(r) < 0.1)              /* repetition / presence penalties */
		emit(c, PENALTY);
	emit(c, TEMP);
	if (runif(r) < 0.15)             /* top-k sampling */
		emit(c, TOPK_SAMPLE);
	if (runif(r) < 0.1)              /* requests asking for logprobs */
		emit(c, SOFTMAX);
	emit(c, ARGMAX);
	emit(c, TOK_CAST);
	emit(c, POS_ADD);
	if (runif(r) < 0.2)              /* finished requests free their slots */
		emit(c, SLOT_FILL);
	if (runif(r) < 0.05)             /* a sequence crossed a block boundary */
		emit(c, BT_UPDATE);
	/* EAGLE-style draft layer */
	c->v['P'] = 2048;
	emit(c, DR_NORM);
	emit(c, DR_QKV);
	emit(c, DR_SPLIT);
	emit(c, DR_CACHE);
	emit(c, c->prefill ? DR_FIA_PREFILL : DR_FIA_DECODE);
	emit(c, DR_O);
	emit(c, DR_MULS_ADD);
	c->step++;
	c->t_ns += (uint64_t)llround(rlognorm(r, 900.0, 0.5) * 1000.0);   /* host gap */
}

/* ---- files ------------------------------------------------------------------ */

static const char kd_header[] =
	"Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,"
	"Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,"
	"Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
	"Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_time(us),"
	"aic_mac_ratio,aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,"
	"aic_mte2_time(us),aic_mte2_ratio,aic_fixpipe_time(us),aic_fixpipe_ratio,"
	"aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,"
	"aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,"
	"aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)\r\n";

static const char od_header[] =
	"Name,Input Shapes,Input Data Types,Output Shapes,Host Self Duration(us),"
	"Host Total Duration(us),Device Self Duration(us),Device Total Duration(us),"
	"Device Self Duration With AICore(us),Device Total Duration With AICore(us)\r\n";

static struct out *open_out(const char *path)
{
	struct out *o = calloc(1, sizeof(*o));
	if (!o) {
		fprintf(stderr, "gen_profile: out of memory\n");
		exit(1);
	}
	o->path = path;
	o->f = fopen(path, "wb");
	if (!o->f) {
		perror(path);
		exit(1);
	}
	return o;
}

static void close_out(struct out *o)
{
	oflush(o);
	if (fclose(o->f) != 0 || o->failed) {
		fprintf(stderr, "gen_profile: write error on %s\n", o->path);
		exit(1);
	}
	free(o);
}

static void mkdir_p(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);
	if (n >= sizeof(buf)) {
		fprintf(stderr, "gen_profile: path too long: %s\n", path);
		exit(1);
	}
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] == '/' || buf[i] == '\0') {
			char save = buf[i];
			buf[i] = '\0';
			if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
				perror(buf);
				exit(1);
			}
			buf[i] = save;
		}
	}
}

static void gen_rank(const char *kd_path, const char *od_path, long long rows, uint64_t seed,
		     unsigned rank, int layers)
{
	struct ctx *c = calloc(1, sizeof(*c));
	if (!c) {
		fprintf(stderr, "gen_profile: out of memory\n");
		exit(1);
	}
	/* one independent stream per rank, whatever the number of ranks */
	c->rng.s = seed * 0xD1B54A32D192ED03ull + rank * 0x9E3779B97F4A7C15ull + 1;
	c->eff_rng.s = ~c->rng.s;
	c->rows_left = rows;
	c->t_ns = (1729567123456789ull + 1000ull * rank) * 1000ull + rbelow(&c->rng, 1000);
	c->kd = open_out(kd_path);
	ostr(c->kd, kd_header);
	if (od_path) {
		c->od = open_out(od_path);
		ostr(c->od, od_header);
	}
	while (c->rows_left > 0)
		step(c, layers);
	close_out(c->kd);
	if (c->od)
		close_out(c->od);
	free(c);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: gen_profile OUT_DIR --rows N [--ranks R] [--seed S] [--layers L] "
		"[--operator-details]\n"
		"       gen_profile OUT.csv --rows N [--seed S] [--layers L]\n");
	exit(2);
}

static long long num_arg(const char *flag, const char *s, long long min)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min) {
		fprintf(stderr, "gen_profile: %s: expected an integer >= %lld, got '%s'\n", flag,
			min, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	long long rows = -1, ranks = 1, layers = 61;
	uint64_t seed = 1;
	int opdetails = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--operator-details") == 0) {
			opdetails = 1;
		} else if (a[0] == '-' && a[1] == '-') {
			if (i + 1 >= argc)
				usage();
			const char *v = argv[++i];
			if (strcmp(a, "--rows") == 0)
				rows = num_arg(a, v, 0);
			else if (strcmp(a, "--ranks") == 0)
				ranks = num_arg(a, v, 1);
			else if (strcmp(a, "--seed") == 0)
				seed = (uint64_t)num_arg(a, v, 0);
			else if (strcmp(a, "--layers") == 0)
				layers = num_arg(a, v, 1);
			else
				usage();
		} else if (!out) {
			out = a;
		} else {
			usage();
		}
	}
	if (!out || rows < 0 || ranks > 4096 || layers > 1000)
		usage();
	for (int id = 0; id < NOPS; id++)
		if (!ops[id].idt)
			fill_fia_types(id);

	size_t ol = strlen(out);
	if (ol > 4 && strcmp(out + ol - 4, ".csv") == 0) {
		if (ranks != 1 || opdetails) {
			fprintf(stderr, "gen_profile: --ranks and --operator-details need OUT_DIR\n");
			return 2;
		}
		gen_rank(out, NULL, rows, seed, 0, (int)layers);
		return 0;
	}
	for (long long rk = 0; rk < ranks; rk++) {
		char dir[4096], kd[4200], od[4200];
		if ((size_t)snprintf(dir, sizeof(dir), "%s/rank%lld_ascend_pt/ASCEND_PROFILER_OUTPUT",
				     out, rk) >= sizeof(dir)) {
			fprintf(stderr, "gen_profile: path too long\n");
			return 1;
		}
		mkdir_p(dir);
		snprintf(kd, sizeof(kd), "%s/kernel_details.csv", dir);
		snprintf(od, sizeof(od), "%s/operator_details.csv", dir);
		long long n = rows / ranks + (rk < rows % ranks ? 1 : 0);
		gen_rank(kd, opdetails ? od : NULL, n, seed, (unsigned)rk, (int)layers);
	}
	return 0;
}
