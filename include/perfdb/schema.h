/*
 * The database schema: every column name of the database format, the rule
 * for a row's usable duration, and the band in which a replayed duration
 * agrees with profiling (docs/database.md, docs/spec/parse.md §4,
 * docs/spec/replay.md §2-§3, docs/spec/comm.md §1).
 *
 * The spellings are the reference's, byte for byte: the simulator finds
 * columns by these names, and the tests compare written files.  Code that
 * reads or writes a table names a column through this header, never by a
 * literal of its own, so that a spelling lives in one place.
 */
#ifndef PERFDB_SCHEMA_H
#define PERFDB_SCHEMA_H

#include <stdbool.h>

/* ---- kernel tables: the descriptive columns (BASE_COLS, in order) ---- */

#define PERFDB_COL_OP_STATE "OP State"
#define PERFDB_COL_ACCEL_CORE "Accelerator Core"
#define PERFDB_COL_IN_SHAPES "Input Shapes"
#define PERFDB_COL_IN_DTYPES "Input Data Types"
#define PERFDB_COL_IN_FORMATS "Input Formats"
#define PERFDB_COL_OUT_SHAPES "Output Shapes"
#define PERFDB_COL_OUT_DTYPES "Output Data Types"
#define PERFDB_COL_OUT_FORMATS "Output Formats"
/* the eight above, in table order: an initializer list */
#define PERFDB_SCHEMA_NBASE 8
#define PERFDB_SCHEMA_BASE_COLS                                                  \
	PERFDB_COL_OP_STATE, PERFDB_COL_ACCEL_CORE, PERFDB_COL_IN_SHAPES,          \
	PERFDB_COL_IN_DTYPES, PERFDB_COL_IN_FORMATS, PERFDB_COL_OUT_SHAPES,        \
	PERFDB_COL_OUT_DTYPES, PERFDB_COL_OUT_FORMATS
/* DispatchFFNCombine's extra key column (part of its signature) */
#define PERFDB_COL_EP_SIZE "EP Size"
/* a CPU trace's strided inputs (docs/chrome_trace.md "Input strides"): not
 * a key column; the torch replay lays its inputs out so */
#define PERFDB_COL_IN_STRIDES "Input Strides"

/* ---- kernel tables: durations (spec/replay.md §2, Decision 2) -------- */

#define PERFDB_COL_MB_DUR "Average Duration(us)"          /* the microbench mean */
#define PERFDB_COL_MB_LEGACY "MicroBench Duration(us)"    /* renamed to MB_DUR on writeback */
#define PERFDB_COL_MB_MIN "MicroBench Min Duration(us)"
#define PERFDB_COL_MB_MEDIAN "MicroBench Median Duration(us)"
#define PERFDB_COL_MB_STD "MicroBench Std Duration(us)"
#define PERFDB_COL_MB_SAMPLES "MicroBench Samples"
/* columns of older replays that writeback drops and never writes */
#define PERFDB_COL_MB_TASK_DUR "MicroBench Task Duration(us)"
#define PERFDB_COL_MB_KERNEL_DUR "MicroBench Kernel Duration(us)"
#define PERFDB_COL_PROF_AVG "Profiling Average Duration(us)"
#define PERFDB_COL_PROF_MEDIAN "Profiling Median Duration(us)"
#define PERFDB_COL_PROF_STD "Profiling Std Duration(us)"
#define PERFDB_COL_PROF_COUNT "Profiling Count"                /* Decision 5 */

/*
 * The 25 profiler counters, in output order (spec/parse.md §1).  A table
 * holds each as PERFDB_COL_PROF_COUNTER_PREFIX <name> (parse) and
 * PERFDB_COL_MB_COUNTER_PREFIX <name> (writeback).  X(name) is expanded
 * once per counter, so every list of them is built from this one.
 */
#define PERFDB_SCHEMA_COUNTERS(X)                                                  \
	X("aicore_time(us)") X("aic_total_cycles") X("aic_mac_time(us)")           \
	X("aic_mac_ratio") X("aic_scalar_time(us)") X("aic_scalar_ratio")          \
	X("aic_mte1_time(us)") X("aic_mte1_ratio") X("aic_mte2_time(us)")          \
	X("aic_mte2_ratio") X("aic_fixpipe_time(us)") X("aic_fixpipe_ratio")       \
	X("aic_icache_miss_rate") X("aiv_time(us)") X("aiv_total_cycles")          \
	X("aiv_vec_time(us)") X("aiv_vec_ratio") X("aiv_scalar_time(us)")          \
	X("aiv_scalar_ratio") X("aiv_mte2_time(us)") X("aiv_mte2_ratio")           \
	X("aiv_mte3_time(us)") X("aiv_mte3_ratio") X("aiv_icache_miss_rate")       \
	X("cube_utilization(%)")
/* The 25 profiler counters, in output order (docs/spec/parse.md §1). */
#define PERFDB_NCOUNTERS 25
extern const char *const perfdb_counter_names[PERFDB_NCOUNTERS];
#define PERFDB_COL_PROF_COUNTER_PREFIX "Profiling Average "
#define PERFDB_COL_MB_COUNTER_PREFIX "MicroBench "

/* ---- FusedInferAttentionScore metadata (spec/parse.md §4) ------------ */

#define PERFDB_COL_RT_SOURCE_PROFILE "Runtime source_profile"
#define PERFDB_COL_RT_SEQ_SHAPE "Runtime actual_seq_lengths_shape"
#define PERFDB_COL_RT_SEQ_VALUES "Runtime actual_seq_lengths_values"
#define PERFDB_COL_RT_SEQ_KV_SHAPE "Runtime actual_seq_lengths_kv_shape"
#define PERFDB_COL_RT_SEQ_KV_VALUES "Runtime actual_seq_lengths_kv_values"
#define PERFDB_COL_RT_AVG_SEQ_LEN "Runtime avg_seq_len"
#define PERFDB_COL_RT_BLOCK_TABLE_SHAPE "Runtime block_table_shape"
#define PERFDB_COL_RT_BLOCK_TABLE_VALID "Runtime block_table_valid_blocks"
#define PERFDB_COL_RT_NUM_HEADS "Runtime num_heads"
#define PERFDB_COL_RT_NUM_KV_HEADS "Runtime num_key_value_heads"
#define PERFDB_COL_RT_SPARSE_MODE "Runtime sparse_mode"
#define PERFDB_COL_RT_INPUT_LAYOUT "Runtime input_layout"
#define PERFDB_COL_RT_BLOCK_SIZE "Runtime block_size"
#define PERFDB_COL_RT_ATTN_STATE "Runtime attn_state"
#define PERFDB_COL_RT_KV_CACHE_MODE "Runtime kv_cache_mode"
#define PERFDB_COL_RT_COMPLETENESS "Runtime metadata_completeness"
/* written by grid's FIA rows only (the raw shapes the row was built from) */
#define PERFDB_COL_RT_INPUT_SHAPES_RAW "Runtime operator_input_shapes_raw"

/* ---- collective tables hcom_*.csv (spec/comm.md §1, Decision 6) ------ */

#define PERFDB_COL_MESSAGE_BYTES "message_bytes"
#define PERFDB_COL_NUM_DEVICES "num_devices"
#define PERFDB_COL_DTYPE "dtype"
#define PERFDB_COL_TOPOLOGY_TIER "topology_tier"
#define PERFDB_COL_DURATION "Duration(us)"     /* also kernel_details' duration */
#define PERFDB_COL_BANDWIDTH "bandwidth_gbps"
#define PERFDB_COL_BUSBW "busbw_gbps"
#define PERFDB_COL_MIN_DURATION "Min Duration(us)"
#define PERFDB_COL_MAX_DURATION "Max Duration(us)"
#define PERFDB_COL_STD_DURATION "Std Duration(us)"
#define PERFDB_COL_SAMPLES "Samples"
#define PERFDB_COL_BACKEND "Backend"

/* ---- profiler input that the tables are made from (spec/parse.md §1) - */

#define PERFDB_COL_KD_TYPE "Type"                      /* kernel_details */
#define PERFDB_COL_KD_NAME "Name"
#define PERFDB_COL_OPS_TYPE "OP Type"                  /* op_summary */
#define PERFDB_COL_OPS_NAME "Op Name"
#define PERFDB_COL_OPS_TASK_TYPE "Task Type"
#define PERFDB_COL_OPS_TASK_DUR "Task Duration(us)"

/* ---- the usable duration (spec/replay.md §2 "Validity") -------------- */

/*
 * True when a cell holds a valid duration: it reads as a number > 0 by
 * Python's float() rules (perfdb_stats_parse_double); empty, `N/A`, junk,
 * zero, negatives and NaN do not.  finite: infinity does not either (what
 * a simulator can use: check, the report); otherwise it does, as in the
 * reference (writeback, missing-only, prune).  A NULL cell counts as empty.
 * Sets *us (may be NULL) to the value when valid.
 */
bool perfdb_schema_duration(const char *cell, bool finite, double *us);

/*
 * A row's usable duration: its microbench duration (PERFDB_COL_MB_DUR) when
 * valid, else its profiling average (PERFDB_COL_PROF_AVG) when valid
 * (perfdb_schema_duration with the same finite).  Returns true and sets
 * *us (may be NULL) to that value; false when neither cell is valid.
 */
bool perfdb_schema_usable_duration(const char *mb_cell, const char *prof_cell, bool finite,
				   double *us);

/* ---- the hotspot band (spec/replay.md §3) ----------------------------- */

/* microbench/profiling ratios in [LO, HI] agree; the rest are hotspots */
#define PERFDB_SCHEMA_BAND_LO 0.8
#define PERFDB_SCHEMA_BAND_HI 1.2

/* True when ratio lies in [PERFDB_SCHEMA_BAND_LO, PERFDB_SCHEMA_BAND_HI];
 * a NaN ratio is not outside the band, so it is no hotspot. */
bool perfdb_schema_in_band(double ratio);

/* ---- the run records (docs/replay.md "Contention") --------------------- */

/*
 * A row was measured under contention when its probe reading
 * (`Probe(GB/s)` of microbench_rows_<ts>.csv) is below (1 - this) x the
 * run's reference (`probe_median_gbs=` of microbench_env_<ts>.txt): the
 * engine's judgement (src/replay/probe.c) and the report's.
 */
#define PERFDB_PROBE_TOLERANCE 0.20

#endif
