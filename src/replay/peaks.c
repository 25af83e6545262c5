/*
 * This machine's CPU peaks, measured once (docs/devices.md "Devices perfdb
 * met"): a CPU has no datasheet in the registry, so its roofline had no
 * roof and `perfdb report` plotted none of its rows.  The roofs are what
 * the backend's own kernels reach at the run's threads, timed as rows are:
 *
 *   - compute: a 2048^3 MatMulV2 per dtype (fp32, bf16, fp16; a dtype the
 *     backend refuses is left unknown), 2*2048^3 FLOP over its fastest sample;
 *   - memory: Add of two (4096, 8192) fp32 tensors, 384 MiB a call, whose
 *     parallel kernel runs at the STREAM triad's speed (docs/measuring.md
 *     "Broadcast element-wise ops"), its bytes over its fastest sample.
 *
 * The vector unit's peaks are the fp32 GEMM's: a CPU's vector unit is the
 * one its GEMMs run on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "perfdb/device.h"

static const char peak_csv[] =
	"OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
	"Output Data Types,Output Formats\n"
	"dynamic,AI_CORE,\"\"\"2048,2048;2048,2048\"\"\",DT_FLOAT;DT_FLOAT,ND;ND,\"\"\"2048,2048\"\"\",DT_FLOAT,ND\n"
	"dynamic,AI_CORE,\"\"\"2048,2048;2048,2048\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"2048,2048\"\"\",DT_BF16,ND\n"
	"dynamic,AI_CORE,\"\"\"2048,2048;2048,2048\"\"\",DT_FLOAT16;DT_FLOAT16,ND;ND,\"\"\"2048,2048\"\"\",DT_FLOAT16,ND\n"
	"dynamic,AI_VECTOR_CORE,\"\"\"4096,8192;4096,8192\"\"\",DT_FLOAT;DT_FLOAT,ND;ND,\"\"\"4096,8192\"\"\","
	"DT_FLOAT,ND\n";

/* Row r of the peak table timed as op: its cost over its fastest sample (0: not measured). */
static double peak_of(const struct perfdb_engine_opts *o, const char *op, const struct perfdb_table *t,
		      size_t r, struct perfdb_engine_pool *pool, int bytes)
{
	const struct perfdb_op_impl *impl = o->backend->supports_op(op) ? o->backend->find_op(op) : NULL;
	struct perfdb_op_case c;
	struct case_cells cc;
	struct perfdb_op_cost w;
	struct perfdb_engine_row row;
	struct perfdb_err e;
	memset(&row, 0, sizeof(row));
	perfdb_err_clear(&e);
	if (!impl || case_from_row(o, op, impl, t, r, r + 2, &cc, &c, &e) < 0 ||
	    perfdb_case_check(c.def, impl, &c, &e) < 0 || perfdb_op_cost(&c, &w, &e) < 0 ||
	    perfdb_engine_alloc_case(pool, &c, 0x9eadULL, &e) < 0)
		return 0;
	int rc = impl->prepare ? impl->prepare(&c, &e) : 0;
	if (rc == 0)
		rc = timing_measure(o, impl, &c, NULL, 0, NULL, &row, &e);
	if (impl->release)
		impl->release(&c);
	free(row.reason);
	/* the fastest sample: a roof is what the kernel can reach, and a row measured in a quieter
	 * moment than the median must not land above it */
	if (rc < 0 || row.status != PERFDB_ENGINE_OK || !(row.min > 0))
		return 0;
	return (bytes ? w.bytes : w.flops) / (row.min * 1e-6);
}

int perfdb_engine_cpu_peaks(const struct perfdb_engine_opts *run_o, struct perfdb_device *dev,
			    struct perfdb_err *err)
{
	struct perfdb_table t;
	perfdb_table_init(&t);
	PERFDB_TRY(perfdb_table_load_mem(&t, "peaks.csv", peak_csv, sizeof(peak_csv) - 1, err));
	/* as a row is timed, but a short budget: these are four calls' worth of seconds */
	struct perfdb_engine_opts o = *run_o;
	o.repeat = 5;
	o.rsd = 0.02;
	o.budget_s = 0.5;
	o.timeout_s = 60;
	o.contention_retries = 0;
	o.ops = NULL;
	o.nops = 0;
	struct perfdb_engine_pool pool = { 0 };
	static const enum perfdb_peak dt[3] = { PERFDB_PEAK_FP32, PERFDB_PEAK_BF16, PERFDB_PEAK_FP16 };
	for (size_t i = 0; i < 3; i++)
		dev->mma_flops[dt[i]] = peak_of(&o, "MatMulV2", &t, i, &pool, 0);
	for (size_t i = 0; i < PERFDB_PEAK_COUNT_; i++)
		dev->vector_flops[i] = dev->mma_flops[PERFDB_PEAK_FP32];
	dev->memory_bandwidth = peak_of(&o, "Add", &t, 3, &pool, 1);
	perfdb_engine_pool_release(&pool);
	perfdb_table_release(&t);
	if (!(dev->memory_bandwidth > 0) || !(dev->mma_flops[PERFDB_PEAK_FP32] > 0))
		return perfdb_err_set(err, PERFDB_EIO, "could not time this CPU's peaks (MatMulV2 fp32, Add)");
	return 0;
}
