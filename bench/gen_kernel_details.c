/*
 * gen_kernel_details: write a realistic Ascend kernel_details.csv of about
 * SIZE megabytes for the CSV benchmark (bench/csv.sh).
 *
 * The rows imitate what torch_npu's profiler writes: 46 columns, a tab after
 * the start time, shape cells with literal quotes (`"""4096,7168;7168,2048"""`),
 * N/A counters for vector kernels, operator names with underscores.  The
 * content is driven by a fixed-seed xorshift generator, so every run writes
 * the same file.
 *
 * usage: gen_kernel_details OUT.csv SIZE_MB
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const char *const header =
	"Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,"
	"Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,"
	"Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
	"Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_time(us),"
	"aic_mac_ratio,aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,"
	"aic_mte2_time(us),aic_mte2_ratio,aic_fixpipe_time(us),aic_fixpipe_ratio,"
	"aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,"
	"aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,"
	"aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)\r\n";

struct kind {
	const char *name, *type, *core, *in, *idt, *ifmt, *out, *odt;
	int cube;
};

static const struct kind kinds[] = {
	{ "aclnnMm_MatMulV2_MatMulV2", "MatMulV2", "AI_CORE", "\"\"\"%d,7168;7168,2048\"\"\"",
	  "DT_BF16;DT_BF16", "ND;ND", "\"\"\"%d,2048\"\"\"", "DT_BF16", 1 },
	{ "aclnnRmsNorm_RmsNorm_RmsNorm", "RmsNorm", "AI_VECTOR_CORE", "\"\"\"%d,7168;7168\"\"\"",
	  "DT_BF16;DT_BF16", "ND;ND", "\"\"\"%d,7168;%d,1\"\"\"", "DT_BF16;FLOAT", 0 },
	{ "aclnnAdd_AddAiCore_Add", "Add", "AI_VECTOR_CORE", "\"\"\"%d,7168;%d,7168\"\"\"",
	  "DT_BF16;DT_BF16", "ND;ND", "\"\"\"%d,7168\"\"\"", "DT_BF16", 0 },
	{ "aclnnFusedInferAttentionScore_FusedInferAttentionScore", "FusedInferAttentionScore",
	  "MIX_AIC", "\"\"\"%d,128,192;%d,1,128,192;%d,1,128,128;;;;;;;;;;;;32,128;;;;;;;;;;;;;;;\"\"\"",
	  "DT_BF16;DT_BF16;DT_BF16;DT_UNDEFINED;INT64", "ND;ND;ND;NULL;ND", "\"\"\"%d,128,128;;\"\"\"",
	  "DT_BF16;FLOAT", 1 },
	{ "aclnnSwiGlu_SwiGlu_SwiGlu", "SwiGlu", "AI_VECTOR_CORE", "\"\"\"%d,4096\"\"\"", "DT_BF16",
	  "ND", "\"\"\"%d,2048\"\"\"", "DT_BF16", 0 },
};

/* Write a shape template, each "%d" replaced by n. */
static void put_tpl(FILE *f, const char *tpl, int n)
{
	for (const char *c = tpl; *c; c++) {
		if (c[0] == '%' && c[1] == 'd') {
			fprintf(f, "%d", n);
			c++;
		} else {
			fputc(*c, f);
		}
	}
}

static void cell(FILE *f, double v)
{
	fprintf(f, ",%.3f", v);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: gen_kernel_details OUT.csv SIZE_MB\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "wb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	static char buf[1 << 20];
	setvbuf(f, buf, _IOFBF, sizeof(buf));
	long long target = atoll(argv[2]) * 1000000LL;
	fputs(header, f);
	uint64_t t0 = 1729567123456789ull;
	for (long long task = 0; ftell(f) < target; task++) {
		const struct kind *k = &kinds[next() % (sizeof(kinds) / sizeof(kinds[0]))];
		int tokens = 1 << (next() % 13);
		double dur = 2.0 + (double)(next() % 100000) / 100.0;
		t0 += 5 + next() % 50;
		fprintf(f, "%lld,4294967295,%lld,2,%s,%s,dynamic,%s,%" PRIu64 ".%03u\t,%.3f,%.3f,%u,0,NO,",
			task / 5000, task % 65536, k->name, k->type, k->core, t0,
			(unsigned)(next() % 1000), dur, (double)(next() % 1000) / 1000.0,
			(unsigned)(next() % 48 + 1));
		put_tpl(f, k->in, tokens);
		fprintf(f, ",%s,%s,", k->idt, k->ifmt);
		put_tpl(f, k->out, tokens);
		fprintf(f, ",%s,ND,N/A", k->odt);
		if (k->cube) {
			cell(f, dur * 0.9);
			fprintf(f, ",%" PRIu64, next() % 10000000);
			for (int i = 0; i < 10; i++)
				cell(f, (double)(next() % 100000) / 1000.0);
			cell(f, (double)(next() % 1000) / 1000.0);
			for (int i = 0; i < 11; i++)
				fputs(",N/A", f);
			cell(f, (double)(next() % 10000) / 100.0);
		} else {
			for (int i = 0; i < 12; i++)
				fputs(",N/A", f);
			cell(f, dur * 0.95);
			fprintf(f, ",%" PRIu64, next() % 10000000);
			for (int i = 0; i < 8; i++)
				cell(f, (double)(next() % 100000) / 1000.0);
			cell(f, (double)(next() % 1000) / 1000.0);
			fputs(",N/A", f);
		}
		fputs("\r\n", f);
	}
	if (fclose(f) != 0) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
