/*
 * Unit tests: the comm stage's pure parts (src/comm/comm.h) — the
 * collective and dtype tables, topology tiers and groups, the run plan,
 * rows and their rounding, tables, overhead tables, the alpha-beta
 * predictions of validate, the suite's command lines and bf16/fp16.
 * Each test names the docs/spec/comm.md section it checks (§6 lists the
 * reference's scenarios).  Expected numbers were worked out by hand or with
 * Python (a second implementation of the formulas), never copied from
 * perfdb's output.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/comm.h"
#include "perfdb/fsio.h"

static const struct perfdb_comm_grid A3 = { .dim = { 48, 8, 2 }, .ndim = 3 };

static bool near(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

/* §1 "Ops": names, kernel type prefixes, table names; §6 "constant maps" */
static void test_op_tables(void **state)
{
	(void)state;
	static const char *const prefix[] = { "hcom_allReduce_", "hcom_allGather_",
					      "hcom_reduceScatter_", "hcom_alltoallv_" };
	static const char *const names[] = { "all_reduce", "all_gather", "reduce_scatter",
					     "all_to_all" };
	for (int i = 0; i < PERFDB_COMM_NOPS; i++) {
		assert_string_equal(perfdb_comm_op_name((enum perfdb_comm_op)i), names[i]);
		assert_string_equal(perfdb_comm_op_prefix((enum perfdb_comm_op)i), prefix[i]);
		char file[64];
		snprintf(file, sizeof(file), "%s.csv", prefix[i]);
		assert_string_equal(perfdb_comm_op_file((enum perfdb_comm_op)i), file);
		assert_int_equal(perfdb_comm_op_from_name(names[i]), i);
	}
	assert_int_equal(perfdb_comm_op_from_name("broadcast"), -1);
	assert_null(perfdb_comm_op_names[PERFDB_COMM_NOPS]);
}

/* §1 "dtype": sizes bf16/fp16=2, fp32=4, int8=1; labels DT_BF16/DT_FP16/DT_FLOAT/DT_INT8 */
static void test_dtype_tables(void **state)
{
	(void)state;
	static const struct { const char *name, *label; size_t size; } want[] = {
		{ "torch.bfloat16", "DT_BF16", 2 }, { "torch.float16", "DT_FP16", 2 },
		{ "torch.float32", "DT_FLOAT", 4 }, { "torch.int8", "DT_INT8", 1 },
	};
	for (int i = 0; i < 4; i++) {
		int d = perfdb_comm_dtype_from_name(want[i].name);
		assert_true(d >= 0);
		assert_string_equal(perfdb_comm_dtype((enum perfdb_comm_dtype)d)->label, want[i].label);
		assert_int_equal(perfdb_comm_dtype((enum perfdb_comm_dtype)d)->size, want[i].size);
	}
	assert_int_equal(perfdb_comm_dtype_from_name("torch.float64"), -1);
	assert_int_equal(perfdb_comm_dtype_from_name("bf16"), -1);
}

/* §1 "Default grid": 20 points 1024 … 536870912, powers of two */
static void test_default_grid(void **state)
{
	(void)state;
	assert_int_equal(PERFDB_COMM_DEFAULT_NBYTES, 20);
	for (int i = 0; i < 20; i++)
		assert_true(perfdb_comm_default_bytes[i] == 1024LL << i);
	assert_true(perfdb_comm_default_bytes[19] == 536870912LL);
}

/* §2: 15 -> [0,7,1], 16 -> [1,0,0], 767 -> [47,7,1]; ranks past the grid wrap */
static void test_coords(void **state)
{
	(void)state;
	long c[3];
	perfdb_comm_rank_coords(&A3, 15, c);
	assert_true(c[0] == 0 && c[1] == 7 && c[2] == 1);
	perfdb_comm_rank_coords(&A3, 16, c);
	assert_true(c[0] == 1 && c[1] == 0 && c[2] == 0);
	perfdb_comm_rank_coords(&A3, 767, c);
	assert_true(c[0] == 47 && c[1] == 7 && c[2] == 1);
	perfdb_comm_rank_coords(&A3, 768, c);
	assert_true(c[0] == 0 && c[1] == 0 && c[2] == 0);
	perfdb_comm_rank_coords(&A3, 769, c);
	assert_true(c[0] == 0 && c[1] == 0 && c[2] == 1);
}

/* §2 "Tier"; §6 pure: [0,1]->2, [0,2]->1, [0,16]->0, [5]->2 */
static void test_tiers(void **state)
{
	(void)state;
	long g01[] = { 0, 1 }, g02[] = { 0, 2 }, g016[] = { 0, 16 }, g5[] = { 5 };
	assert_int_equal(perfdb_comm_tier_of(&A3, g01, 2), 2);
	assert_int_equal(perfdb_comm_tier_of(&A3, g02, 2), 1);
	assert_int_equal(perfdb_comm_tier_of(&A3, g016, 2), 0);
	assert_int_equal(perfdb_comm_tier_of(&A3, g5, 1), 2);
	/* groups [0..n-1]: n=2 -> 2; n=4, 8, 16 -> 1; n>=32 -> 0 */
	assert_int_equal(perfdb_comm_tier_of_first(&A3, 1), 2);
	assert_int_equal(perfdb_comm_tier_of_first(&A3, 2), 2);
	assert_int_equal(perfdb_comm_tier_of_first(&A3, 4), 1);
	assert_int_equal(perfdb_comm_tier_of_first(&A3, 8), 1);
	assert_int_equal(perfdb_comm_tier_of_first(&A3, 16), 1);
	assert_int_equal(perfdb_comm_tier_of_first(&A3, 32), 0);
	assert_int_equal(perfdb_comm_tier_of_first(&A3, 128), 0);
	assert_int_equal(perfdb_comm_tier_of_first(&A3, 1024), 0);
	/* a one-dimensional grid: always tier 0 */
	const struct perfdb_comm_grid g8 = { .dim = { 8 }, .ndim = 1 };
	assert_int_equal(perfdb_comm_tier_of_first(&g8, 8), 0);
	assert_int_equal(perfdb_comm_tier_of_first(&g8, 1), 0);
}

/* §2 groups; §6 pure: (r16, n16, t1) = 16..31; (n64, t2) raises */
static void test_groups(void **state)
{
	(void)state;
	long g[64];
	struct perfdb_err err;
	assert_int_equal(perfdb_comm_build_group(&A3, 16, 16, 1, g, &err), 0);
	for (long i = 0; i < 16; i++)
		assert_int_equal(g[i], 16 + i);
	/* anchored at 0: the group the runs use */
	assert_int_equal(perfdb_comm_build_group(&A3, 0, 8, 1, g, &err), 0);
	for (long i = 0; i < 8; i++)
		assert_int_equal(g[i], i);
	/* the reference's docstring example: grid [3,8,2], rank 5, n 16, tier 1 */
	const struct perfdb_comm_grid g382 = { .dim = { 3, 8, 2 }, .ndim = 3 };
	assert_int_equal(perfdb_comm_build_group(&g382, 5, 16, 1, g, &err), 0);
	assert_int_equal(g[0], 0);
	assert_int_equal(g[15], 15);
	/* rank 37 = [2,2,1]: tier 2 keeps pod 2, node 2 -> 36, 37 */
	assert_int_equal(perfdb_comm_build_group(&g382, 37, 2, 2, g, &err), 0);
	assert_int_equal(g[0], 36);
	assert_int_equal(g[1], 37);
	assert_int_equal(perfdb_comm_build_group(&A3, 0, 64, 2, g, &err), -PERFDB_EINVAL);
	assert_string_equal(err.msg, "num_devices=64 exceeds span size 2 for tier=2, "
				     "grid_shape=[48, 8, 2]");
	/* §6 generate: tier round trip n=16/8/2 */
	const long nd[] = { 16, 8, 2 }, tier[] = { 1, 1, 2 };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(perfdb_comm_build_group(&A3, 0, nd[i], tier[i], g, &err), 0);
		assert_int_equal(perfdb_comm_tier_of(&A3, g, (size_t)nd[i]), tier[i]);
	}
	/* spans: 768, 16, 2; past the last dimension the span is 1 */
	assert_int_equal(perfdb_comm_span(&A3, 0), 768);
	assert_int_equal(perfdb_comm_span(&A3, 1), 16);
	assert_int_equal(perfdb_comm_span(&A3, 2), 2);
	assert_int_equal(perfdb_comm_span(&A3, 3), 1);
}

struct warnings {
	char msg[8][512];
	int n;
};

static void collect(void *ctx, const char *msg)
{
	struct warnings *w = ctx;
	if (w->n < 8)
		snprintf(w->msg[w->n++], sizeof(w->msg[0]), "%s", msg);
}

/* §2 "Configs"; §6 generate: nd[16,2] x tiers[1,2] = 6 rows (2 sizes); nd4@t2 -> 0 + WARNING */
static void test_plan(void **state)
{
	(void)state;
	struct perfdb_comm_plan p;
	struct warnings w = { .n = 0 };
	struct perfdb_err err;
	enum perfdb_comm_op ops[] = { PERFDB_COMM_ALL_REDUCE };
	long nd[] = { 16, 2 }, tiers[] = { 1, 2 };
	perfdb_comm_plan_init(&p);
	assert_int_equal(perfdb_comm_plan_build(&p, ops, 1, nd, 2, tiers, 2, &A3, collect, &w, &err), 0);
	/* (16,1) (2,1) (2,2); (16,2) skipped: 3 batches x 2 sizes = 6 rows */
	assert_int_equal(p.n, 3);
	assert_true(p.v[0].num_devices == 16 && p.v[0].tier == 1);
	assert_true(p.v[1].num_devices == 2 && p.v[1].tier == 1);
	assert_true(p.v[2].num_devices == 2 && p.v[2].tier == 2);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.msg[0], "skipping tier=2, num_devices=16: num_devices=16 exceeds span "
				      "size 2 for tier=2, grid_shape=[48, 8, 2]");
	perfdb_comm_plan_release(&p);

	long nd4[] = { 4 }, t2[] = { 2 };
	w.n = 0;
	assert_int_equal(perfdb_comm_plan_build(&p, ops, 1, nd4, 1, t2, 1, &A3, collect, &w, &err), 0);
	assert_int_equal(p.n, 0);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.msg[0], "skipping tier=2, num_devices=4: num_devices=4 exceeds span "
				      "size 2 for tier=2, grid_shape=[48, 8, 2]");
	perfdb_comm_plan_release(&p);

	/* auto tiers, loop order op -> n: (all_gather,16,1) (all_gather,2,2) (all_to_all,…) */
	enum perfdb_comm_op ops2[] = { PERFDB_COMM_ALL_GATHER, PERFDB_COMM_ALL_TO_ALL };
	long nd3[] = { 16, 2, 1024 };
	w.n = 0;
	assert_int_equal(perfdb_comm_plan_build(&p, ops2, 2, nd3, 3, NULL, 0, &A3, collect, &w, &err), 0);
	assert_int_equal(p.n, 4);
	assert_true(p.v[0].op == PERFDB_COMM_ALL_GATHER && p.v[0].num_devices == 16 && p.v[0].tier == 1);
	assert_true(p.v[1].op == PERFDB_COMM_ALL_GATHER && p.v[1].num_devices == 2 && p.v[1].tier == 2);
	assert_true(p.v[2].op == PERFDB_COMM_ALL_TO_ALL && p.v[2].num_devices == 16);
	/* §Open question 4: 1024 > 768 ranks of the grid: skipped with a warning, per op */
	assert_int_equal(w.n, 2);
	assert_string_equal(w.msg[0], "skipping tier=0, num_devices=1024: num_devices=1024 exceeds "
				      "span size 768 for tier=0, grid_shape=[48, 8, 2]");
	perfdb_comm_plan_release(&p);
}

/* Decision 3: nccl-tests factors and the bytes they count */
static void test_busbw(void **state)
{
	(void)state;
	assert_true(perfdb_comm_busbw_factor(PERFDB_COMM_ALL_REDUCE, 16) == 2.0 * 15 / 16);
	assert_true(perfdb_comm_busbw_factor(PERFDB_COMM_ALL_REDUCE, 2) == 1.0);
	assert_true(perfdb_comm_busbw_factor(PERFDB_COMM_ALL_GATHER, 8) == 7.0 / 8);
	assert_true(perfdb_comm_busbw_factor(PERFDB_COMM_REDUCE_SCATTER, 4) == 0.75);
	assert_true(perfdb_comm_busbw_factor(PERFDB_COMM_ALL_TO_ALL, 2) == 0.5);
	assert_true(perfdb_comm_busbw_factor(PERFDB_COMM_ALL_REDUCE, 1) == 0.0);
	/* 1024 bytes of bf16 = 512 elements on 4 ranks */
	assert_true(perfdb_comm_bus_bytes(PERFDB_COMM_ALL_REDUCE, 512, 4, 2) == 1024);
	assert_true(perfdb_comm_bus_bytes(PERFDB_COMM_ALL_GATHER, 512, 4, 2) == 4096);
	assert_true(perfdb_comm_bus_bytes(PERFDB_COMM_REDUCE_SCATTER, 512, 4, 2) == 4096);
	/* all_to_all on 3 ranks: max(1, 512/3) = 170 per peer, 3*170*2 bytes */
	assert_true(perfdb_comm_bus_bytes(PERFDB_COMM_ALL_TO_ALL, 512, 3, 2) == 1020);
	struct perfdb_comm_layout l;
	perfdb_comm_layout_of(PERFDB_COMM_ALL_TO_ALL, 2, 4, &l);   /* E < n: one element per peer */
	assert_int_equal(l.count, 1);
	assert_int_equal(l.send_elems, 4);
	perfdb_comm_layout_of(PERFDB_COMM_ALL_REDUCE, 100, 4, &l);
	assert_int_equal(l.send_elems, 0);  /* in place */
	assert_int_equal(l.recv_elems, 100);
	perfdb_comm_layout_of(PERFDB_COMM_REDUCE_SCATTER, 100, 4, &l);
	assert_int_equal(l.send_elems, 400);
	assert_int_equal(l.recv_elems, 100);
	assert_int_equal(l.count, 100);
}

static struct perfdb_comm_case mk_case(enum perfdb_comm_op op, long n, long long bytes, double med)
{
	struct perfdb_comm_case c = {
		.op = op, .num_devices = n, .tier = 1, .message_bytes = bytes,
		.dtype = PERFDB_COMM_BF16,
		.st = { .n = 100, .mean = med, .median = med, .min = med - 1, .max = med + 2, .std = 0.5 },
	};
	c.bus_bytes = perfdb_comm_bus_bytes(op, (size_t)bytes / 2, n, 2);
	return c;
}

/* §1 "CSV" and "bandwidth_gbps"; Decision 3 columns */
static void test_rows(void **state)
{
	(void)state;
	assert_string_equal(perfdb_comm_columns[0], "message_bytes");
	assert_string_equal(perfdb_comm_columns[5], "bandwidth_gbps");
	assert_string_equal(perfdb_comm_columns[6], "busbw_gbps");
	assert_string_equal(perfdb_comm_columns[11], "Backend");
	char cells[PERFDB_COMM_NCOLS][PERFDB_COMM_CELL_MAX];
	/* 1 MiB in 107.7049 us: 1048576/107.7049e-6/1e9 = 9.7357… -> 9.74;
	 * all_reduce busbw on 16: 9.7357 * 30/16 = 18.2544 -> 18.25 */
	struct perfdb_comm_case c = mk_case(PERFDB_COMM_ALL_REDUCE, 16, 1048576, 107.7049);
	perfdb_comm_row_cells(&c, "mpi", cells);
	const char *want[] = { "1048576", "16", "DT_BF16", "1", "107.7", "9.74", "18.25",
			       "106.7", "109.7", "0.5", "100", "mpi" };
	for (int i = 0; i < PERFDB_COMM_NCOLS; i++)
		assert_string_equal(cells[i], want[i]);
	/* "100.0": repr keeps one decimal */
	c = mk_case(PERFDB_COMM_ALL_TO_ALL, 2, 100000, 100.0);
	perfdb_comm_row_cells(&c, "mpi", cells);
	assert_string_equal(cells[4], "100.0");
	assert_string_equal(cells[5], "1.0");     /* 1e5 B / 100 us = 1 GB/s */
	assert_string_equal(cells[6], "0.5");     /* (n-1)/n of the 100000-byte send buffer */
	/* all_gather busbw counts the gathered n*m bytes: 1 MiB/rank, 8 ranks, 100 us:
	 * 8*1048576/100e-6/1e9 * 7/8 = 73.40032 -> 73.4 */
	c = mk_case(PERFDB_COMM_ALL_GATHER, 8, 1048576, 100.0);
	perfdb_comm_row_cells(&c, "mpi", cells);
	assert_string_equal(cells[5], "10.49");
	assert_string_equal(cells[6], "73.4");
	assert_true(perfdb_comm_round2(2.675) == 2.67);    /* binary 2.67499…: Python gives 2.67 */
	assert_true(perfdb_comm_round2(0.125) == 0.12);    /* exact tie: half to even */
}

/* §1 "Dispatch overhead" rule, applied only from --overhead-table (Decision 4);
 * §6 generate: "overhead is exact, bandwidth recomputed, a missing key returns the same row" */
static void test_overhead(void **state)
{
	(void)state;
	char dir[] = "/tmp/perfdb-test-comm-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/oh.csv", dir);
	FILE *f = fopen(path, "w");
	fputs("op,num_devices,overhead_us\r\nall_reduce,16,7.7\r\nall_gather,16,14.6\r\n"
	      "all_gather,8,1.2\r\nreduce_scatter,16,14.6\r\nreduce_scatter,8,2.0\r\n", f);
	fclose(f);
	struct perfdb_comm_overhead o;
	struct perfdb_err err;
	perfdb_comm_overhead_init(&o);
	assert_int_equal(perfdb_comm_overhead_load(&o, path, &err), 0);
	assert_int_equal(o.n, 5);
	const struct { enum perfdb_comm_op op; long n; double us; } want[] = {
		{ PERFDB_COMM_ALL_REDUCE, 16, 7.7 }, { PERFDB_COMM_ALL_GATHER, 16, 14.6 },
		{ PERFDB_COMM_ALL_GATHER, 8, 1.2 }, { PERFDB_COMM_REDUCE_SCATTER, 16, 14.6 },
		{ PERFDB_COMM_REDUCE_SCATTER, 8, 2.0 },
	};
	for (int i = 0; i < 5; i++) {
		double h = perfdb_comm_overhead_lookup(&o, want[i].op, want[i].n);
		assert_true(h == want[i].us);
		struct perfdb_comm_case c = mk_case(want[i].op, want[i].n, 1048576, 100.0);
		c.overhead_us = h;
		struct perfdb_comm_row r;
		perfdb_comm_row_compute(&c, &r);
		assert_true(near(r.duration_us, 100.0 + want[i].us, 1e-9));
	}
	/* the reference's example: all_gather n16, 100 us + 14.6 = 114.6 us;
	 * 1048576 / 114.6e-6 / 1e9 = 9.1499… -> 9.15 */
	struct perfdb_comm_case c = mk_case(PERFDB_COMM_ALL_GATHER, 16, 1048576, 100.0);
	c.overhead_us = perfdb_comm_overhead_lookup(&o, PERFDB_COMM_ALL_GATHER, 16);
	char cells[PERFDB_COMM_NCOLS][PERFDB_COMM_CELL_MAX];
	perfdb_comm_row_cells(&c, "mpi", cells);
	assert_string_equal(cells[4], "114.6");
	assert_string_equal(cells[5], "9.15");
	assert_string_equal(cells[7], "113.6");   /* min moves with it */
	/* a missing key adds nothing: all_to_all and (all_reduce, 4) */
	assert_true(perfdb_comm_overhead_lookup(&o, PERFDB_COMM_ALL_TO_ALL, 16) == 0);
	assert_true(perfdb_comm_overhead_lookup(&o, PERFDB_COMM_ALL_REDUCE, 4) == 0);
	assert_true(perfdb_comm_overhead_lookup(NULL, PERFDB_COMM_ALL_REDUCE, 16) == 0);
	perfdb_comm_overhead_release(&o);

	f = fopen(path, "w");
	fputs("op,num_devices,overhead_us\nbroadcast,16,7.7\n", f);
	fclose(f);
	perfdb_comm_overhead_init(&o);
	assert_int_equal(perfdb_comm_overhead_load(&o, path, &err), -PERFDB_EPARSE);
	assert_non_null(strstr(err.msg, "oh.csv:2: unknown op 'broadcast'"));
	perfdb_comm_overhead_release(&o);
	f = fopen(path, "w");
	fputs("op,n,us\nall_reduce,16,7.7\n", f);
	fclose(f);
	perfdb_comm_overhead_init(&o);
	assert_int_equal(perfdb_comm_overhead_load(&o, path, &err), -PERFDB_ESCHEMA);
	assert_non_null(strstr(err.msg, "no column 'num_devices'"));
	perfdb_comm_overhead_release(&o);
	unlink(path);
	rmdir(dir);
}

static char *slurp(const char *path)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	struct perfdb_err err;
	if (perfdb_file_read_all(path, &sb, &err) < 0)
		return NULL;
	return perfdb_strbuf_detach(&sb, NULL);
}

/* §1 "CSV": appended, header only if the file is absent, CRLF; existing tables keep their columns */
static void test_table_append(void **state)
{
	(void)state;
	char dir[] = "/tmp/perfdb-test-comm-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/hcom_allReduce_.csv", dir);
	struct perfdb_err err;
	assert_int_equal(perfdb_comm_table_check(path, &err), 0);   /* absent is fine */
	char cells[PERFDB_COMM_NCOLS][PERFDB_COMM_CELL_MAX];
	struct perfdb_comm_case c = mk_case(PERFDB_COMM_ALL_REDUCE, 2, 1024, 10.0);
	c.tier = 2;
	perfdb_comm_row_cells(&c, "mpi", cells);
	assert_int_equal(perfdb_comm_table_append(path, dir, cells, &err), 0);
	assert_int_equal(perfdb_comm_table_append(path, dir, cells, &err), 0);
	char *s = slurp(path);
	/* 1024 B / 10 us = 0.1024 GB/s -> 0.1; busbw x1 */
	const char *row = "1024,2,DT_BF16,2,10.0,0.1,0.1,9.0,12.0,0.5,100,mpi\r\n";
	char want[1024];
	snprintf(want, sizeof(want),
		 "message_bytes,num_devices,dtype,topology_tier,Duration(us),bandwidth_gbps,"
		 "busbw_gbps,Min Duration(us),Max Duration(us),Std Duration(us),Samples,Backend\r\n%s%s",
		 row, row);
	assert_string_equal(s, want);
	free(s);

	/* a reference table (six columns): our columns are added at the end */
	FILE *f = fopen(path, "w");
	fputs("message_bytes,num_devices,dtype,topology_tier,Duration(us),bandwidth_gbps\r\n"
	      "1024,16,DT_BF16,1,18.3,0.06\r\n", f);
	fclose(f);
	assert_int_equal(perfdb_comm_table_check(path, &err), 0);
	assert_int_equal(perfdb_comm_table_append(path, dir, cells, &err), 0);
	s = slurp(path);
	assert_string_equal(s, "message_bytes,num_devices,dtype,topology_tier,Duration(us),"
			       "bandwidth_gbps,busbw_gbps,Min Duration(us),Max Duration(us),"
			       "Std Duration(us),Samples,Backend\r\n"
			       "1024,16,DT_BF16,1,18.3,0.06,,,,,,\r\n"
			       "1024,2,DT_BF16,2,10.0,0.1,0.1,9.0,12.0,0.5,100,mpi\r\n");
	free(s);

	/* not a collective table: refused before and at append, file untouched */
	f = fopen(path, "w");
	fputs("Input Shapes,Duration(us)\r\n", f);
	fclose(f);
	assert_int_equal(perfdb_comm_table_check(path, &err), -PERFDB_ESCHEMA);
	assert_non_null(strstr(err.msg, "not a collective table: no column 'message_bytes'"));
	assert_int_equal(perfdb_comm_table_append(path, dir, cells, &err), -PERFDB_ESCHEMA);
	s = slurp(path);
	assert_string_equal(s, "Input Shapes,Duration(us)\r\n");
	free(s);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);   /* the lock left no file */
}

/* the "flag non-monotonic points" (docs/comm.md) */
static void test_nonmonotonic(void **state)
{
	(void)state;
	struct perfdb_comm_case c[4];
	const double med[] = { 10, 40, 20, 30 };
	for (int i = 0; i < 4; i++)
		c[i] = mk_case(PERFDB_COMM_REDUCE_SCATTER, 2, 1024LL << i, med[i]);
	assert_int_equal(perfdb_comm_flag_nonmonotonic(c, 4, 0.10), 1);
	assert_false(c[0].nonmonotonic);
	assert_true(c[1].nonmonotonic);
	assert_true(c[1].mono_bytes == 4096 && c[1].mono_us == 20);
	assert_false(c[2].nonmonotonic);
	assert_false(c[3].nonmonotonic);
	/* within the tolerance: 21.9 vs 20 is not flagged, 22.1 is */
	c[0].st.median = 21.9;
	c[1].st.median = 20;
	c[2].st.median = 25;
	c[3].st.median = 30;
	assert_int_equal(perfdb_comm_flag_nonmonotonic(c, 4, 0.10), 0);
	c[0].st.median = 22.1;
	assert_int_equal(perfdb_comm_flag_nonmonotonic(c, 4, 0.10), 1);
	/* the grid is used as given: order does not matter, sizes do */
	struct perfdb_comm_case d[2] = { mk_case(PERFDB_COMM_ALL_REDUCE, 2, 4096, 10),
					 mk_case(PERFDB_COMM_ALL_REDUCE, 2, 1024, 50) };
	assert_int_equal(perfdb_comm_flag_nonmonotonic(d, 2, 0.10), 1);
	assert_true(d[1].nonmonotonic);
}

/* §5 formulas (A3 tiers), Decision 6 for reduce_scatter; expected from Python */
static void test_predict(void **state)
{
	(void)state;
	const struct perfdb_comm_tier t0 = { "inter_pod", 196e9, 5.5e-6, 0.7 };
	const struct perfdb_comm_tier t1 = { "intra_pod", 196e9, 0.5e-6, 0.7 };
	const struct perfdb_comm_tier t2 = { "die_level", 224e9, 0.2e-6, 0.7 };
	assert_true(near(perfdb_comm_predict_us(PERFDB_COMM_ALL_REDUCE, 65536, 16, &t1),
			 4.95533527696793, 1e-9));
	assert_true(near(perfdb_comm_predict_us(PERFDB_COMM_ALL_REDUCE, 1310720, 16, &t1),
			 23.1067055393586, 1e-9));
	assert_true(near(perfdb_comm_predict_us(PERFDB_COMM_ALL_REDUCE, 1024, 16, &t1),
			 4.0149271137026235, 1e-9));                 /* tree wins */
	assert_true(near(perfdb_comm_predict_us(PERFDB_COMM_ALL_REDUCE, 128.0 * 1024 * 1024, 16, &t1),
			 1849.2437317784259, 1e-6));                 /* ring wins */
	assert_true(near(perfdb_comm_predict_us(PERFDB_COMM_ALL_GATHER, 655360, 16, &t1),
			 73.65014577259475, 1e-9));
	/* per-rank output 1310720 on 16: the input is 16x that */
	assert_true(near(perfdb_comm_predict_us(PERFDB_COMM_REDUCE_SCATTER, 1310720, 16, &t1),
			 145.3002915451895, 1e-9));
	assert_true(near(perfdb_comm_predict_us(PERFDB_COMM_ALL_TO_ALL, 262144, 8, &t1),
			 3.4106705539358604, 1e-9));
	assert_true(near(perfdb_comm_predict_us(PERFDB_COMM_ALL_REDUCE, 65536, 2, &t2),
			 0.8179591836734694, 1e-9));
	assert_true(near(perfdb_comm_predict_us(PERFDB_COMM_ALL_GATHER, 1024, 32, &t0),
			 27.73137026239067, 1e-9));
	/* n <= 1 -> 0; tier 2 beats tier 1 for the same message */
	assert_true(perfdb_comm_predict_us(PERFDB_COMM_ALL_REDUCE, 1024, 1, &t1) == 0.0);
	assert_true(perfdb_comm_predict_us(PERFDB_COMM_ALL_REDUCE, 65536, 2, &t2) <
		    perfdb_comm_predict_us(PERFDB_COMM_ALL_REDUCE, 65536, 2, &t1));
}

/* §5 status; §6 validate boundaries: 2.0 PASS, 2.01 WARN, 4.0 WARN, 4.01 FAIL */
static void test_status(void **state)
{
	(void)state;
	assert_int_equal(perfdb_comm_status_of(200.0 / 100.0, 2.0), PERFDB_COMM_PASS);
	assert_int_equal(perfdb_comm_status_of(201.0 / 100.0, 2.0), PERFDB_COMM_WARN);
	assert_int_equal(perfdb_comm_status_of(50.0 / 100.0, 2.0), PERFDB_COMM_PASS);
	assert_int_equal(perfdb_comm_status_of(49.0 / 100.0, 2.0), PERFDB_COMM_WARN);
	assert_int_equal(perfdb_comm_status_of(380.0 / 100.0, 2.0), PERFDB_COMM_WARN);
	assert_int_equal(perfdb_comm_status_of(400.0 / 100.0, 2.0), PERFDB_COMM_WARN);
	assert_int_equal(perfdb_comm_status_of(401.0 / 100.0, 2.0), PERFDB_COMM_FAIL);
	assert_int_equal(perfdb_comm_status_of(24.9 / 100.0, 2.0), PERFDB_COMM_FAIL);
	assert_int_equal(perfdb_comm_status_of(25.0 / 100.0, 2.0), PERFDB_COMM_WARN);
	assert_int_equal(perfdb_comm_status_of(INFINITY, 2.0), PERFDB_COMM_FAIL);
	assert_int_equal(perfdb_comm_status_of(NAN, 2.0), PERFDB_COMM_FAIL);
	assert_int_equal(perfdb_comm_status_of(1.4, 1.5), PERFDB_COMM_PASS);
	assert_int_equal(perfdb_comm_status_of(1.6, 1.5), PERFDB_COMM_WARN);
	assert_string_equal(perfdb_comm_status_name(PERFDB_COMM_WARN), "WARN");
}

/* §5 "Row parse: ints" as Python's int() */
static void test_pyint(void **state)
{
	(void)state;
	long long v;
	assert_int_equal(perfdb_comm_parse_pyint("16", &v), 0);
	assert_true(v == 16);
	assert_int_equal(perfdb_comm_parse_pyint(" 16\t", &v), 0);
	assert_true(v == 16);
	assert_int_equal(perfdb_comm_parse_pyint("+5", &v), 0);
	assert_true(v == 5);
	assert_int_equal(perfdb_comm_parse_pyint("-3", &v), 0);
	assert_true(v == -3);
	assert_int_equal(perfdb_comm_parse_pyint("1_048_576", &v), 0);
	assert_true(v == 1048576);
	assert_int_equal(perfdb_comm_parse_pyint("1__0", &v), -1);
	assert_int_equal(perfdb_comm_parse_pyint("_1", &v), -1);
	assert_int_equal(perfdb_comm_parse_pyint("1_", &v), -1);
	assert_int_equal(perfdb_comm_parse_pyint("16.0", &v), -1);
	assert_int_equal(perfdb_comm_parse_pyint("", &v), -1);
	assert_int_equal(perfdb_comm_parse_pyint("0x10", &v), -1);
	assert_int_equal(perfdb_comm_parse_pyint("99999999999999999999", &v), -1);
}

/* §4 multi-node device list; §6 shell: NPROC=1 x 2 nodes -> empty, NNODES=64 -> up to 1024 */
static void test_suite_nd_list(void **state)
{
	(void)state;
	long nd[64];
	assert_int_equal(perfdb_comm_suite_nd_list(2, nd), 0);
	assert_int_equal(perfdb_comm_suite_nd_list(31, nd), 0);
	assert_int_equal(perfdb_comm_suite_nd_list(32, nd), 1);
	assert_int_equal(nd[0], 32);
	const long w1024[] = { 32, 64, 128, 256, 384, 512, 768, 1024 };
	assert_int_equal(perfdb_comm_suite_nd_list(1024, nd), 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(nd[i], w1024[i]);
	const long w400[] = { 32, 64, 128, 256, 384 };
	assert_int_equal(perfdb_comm_suite_nd_list(400, nd), 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(nd[i], w400[i]);
	const long w768[] = { 32, 64, 128, 256, 384, 512, 768 };
	assert_int_equal(perfdb_comm_suite_nd_list(768, nd), 7);
	for (int i = 0; i < 7; i++)
		assert_int_equal(nd[i], w768[i]);
	assert_int_equal(PERFDB_COMM_SUITE_NBYTES, 23);
	for (int i = 0; i < 23; i++)
		assert_true(perfdb_comm_suite_bytes[i] == 128LL << i);
	const long long quick[] = { 1024, 65536, 1048576, 16777216, 268435456 };
	for (int i = 0; i < 5; i++)
		assert_true(perfdb_comm_suite_quick_bytes[i] == quick[i]);
}

static void argv_is(char **argv, const char *want)
{
	struct perfdb_strbuf sb = PERFDB_STRBUF_INIT;
	assert_int_equal(perfdb_comm_argv_format(argv, &sb), 0);
	assert_string_equal(sb.buf, want);
	perfdb_strbuf_release(&sb);
}

/* §4 command lines (Decision 5: one launch per round) */
static void test_suite_plan(void **state)
{
	(void)state;
	struct perfdb_comm_suite s;
	struct perfdb_err err;
	long nd[] = { 4, 2 };
	long long b[] = { 1024, 2048 };
	struct perfdb_comm_suite_opts o = { .perfdb = "/bin/perfdb", .num_devices = nd,
					    .nnum_devices = 2, .bytes = b, .nbytes = 2 };
	perfdb_comm_suite_init(&s);
	assert_int_equal(perfdb_comm_suite_plan(&o, &s, &err), 0);
	assert_false(s.multi_node);
	assert_int_equal(s.world, 4);
	assert_int_equal(s.nlaunch, 3);
	assert_string_equal(s.launch[1].title, "Round 2: allGather+reduceScatter");
	argv_is(s.launch[0].argv, "mpirun -np 4 /bin/perfdb comm --ops all_reduce --grid-shape 48 8 2 "
				  "--num-devices 4 2 --bytes-grid 1024 2048 --database-path "
				  "./hccl_bench_data");
	argv_is(s.launch[1].argv, "mpirun -np 4 /bin/perfdb comm --ops all_gather reduce_scatter "
				  "--grid-shape 48 8 2 --num-devices 4 2 --bytes-grid 1024 2048 "
				  "--database-path ./hccl_bench_data");
	argv_is(s.launch[2].argv, "mpirun -np 4 /bin/perfdb comm --ops all_to_all --grid-shape 48 8 2 "
				  "--num-devices 4 2 --bytes-grid 1024 2048 --database-path "
				  "./hccl_bench_data");
	perfdb_comm_suite_release(&s);

	/* single-node defaults: 16 8 4 2 devices, the 23-point grid, -np 16 */
	struct perfdb_comm_suite_opts d = { .perfdb = "perfdb", .output_dir = "out" };
	assert_int_equal(perfdb_comm_suite_plan(&d, &s, &err), 0);
	assert_int_equal(s.world, 16);
	assert_int_equal(s.nnd, 4);
	assert_int_equal(s.nbytes, 23);
	assert_string_equal(s.launch[0].argv[2], "16");
	perfdb_comm_suite_release(&s);

	/* multi-node from a hostfile of 2 hosts x 16: --topology-tier 0, QUICK grid */
	char hf[] = "/tmp/perfdb-test-hosts-XXXXXX";
	int fd = mkstemp(hf);
	assert_true(fd >= 0);
	const char *hosts = "# two nodes\nnode-a slots=16\n\n  node-b slots=16\n";
	assert_int_equal(write(fd, hosts, strlen(hosts)), (int)strlen(hosts));
	close(fd);
	const char *extra[] = { "--oversubscribe" };
	const char *cargs[] = { "--iters", "10" };
	struct perfdb_comm_suite_opts m = { .perfdb = "perfdb", .hostfile = hf, .nproc = 16,
					    .quick = true, .output_dir = "/data/out",
					    .mpirun_args = extra, .nmpirun_args = 1,
					    .comm_args = cargs, .ncomm_args = 2 };
	assert_int_equal(perfdb_comm_suite_plan(&m, &s, &err), 0);
	assert_true(s.multi_node);
	assert_int_equal(s.nhosts, 2);
	assert_int_equal(s.world, 32);
	char want[1024];
	snprintf(want, sizeof(want),
		 "mpirun --hostfile %s --map-by ppr:16:node -np 32 --oversubscribe perfdb comm "
		 "--ops all_to_all --grid-shape 48 8 2 --num-devices 32 --topology-tier 0 "
		 "--bytes-grid 1024 65536 1048576 16777216 268435456 --database-path /data/out "
		 "--iters 10", hf);
	argv_is(s.launch[2].argv, want);
	perfdb_comm_suite_release(&s);

	/* 2 hosts x 1 rank: the reference's "empty device list" */
	m.nproc = 1;
	assert_int_equal(perfdb_comm_suite_plan(&m, &s, &err), -PERFDB_EINVAL);
	assert_non_null(strstr(err.msg, "empty device list for WORLD_SIZE=2 (NNODES=2 * NPROC=1)"));
	perfdb_comm_suite_release(&s);
	unlink(hf);

	/* shell quoting of the printed command */
	char *q[] = { "a b", "it's", "plain-1.0/x:y=z", "", NULL };
	argv_is(q, "'a b' 'it'\\''s' plain-1.0/x:y=z ''");
}

/* bf16: round trip of every value; rounding against a second method (nearest by
 * exact double arithmetic, ties to even) */
static uint16_t bf16_ref(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	uint32_t lo = u & 0xffff0000u, hi = lo + 0x10000u;
	float flo, fhi;
	memcpy(&flo, &lo, 4);
	memcpy(&fhi, &hi, 4);
	double dl = fabs((double)f - (double)flo), dh = fabs((double)fhi - (double)f);
	if (dl < dh || (dl == dh && ((lo >> 16) & 1u) == 0))
		return (uint16_t)(lo >> 16);
	return (uint16_t)(hi >> 16);
}

static void test_bf16(void **state)
{
	(void)state;
	for (uint32_t h = 0; h < 65536; h++) {
		float f = perfdb_bf16_to_float((uint16_t)h);
		if (isnan(f)) {
			assert_true(isnan(perfdb_bf16_to_float(perfdb_bf16_from_float(f))));
			continue;
		}
		assert_int_equal(perfdb_bf16_from_float(f), h);
	}
	/* 1 + 2^-8 ties to 1.0; 1 + 3*2^-8 ties to 1 + 2^-6 (even) */
	assert_true(perfdb_bf16_to_float(perfdb_bf16_from_float(1.0f + 0x1p-8f)) == 1.0f);
	assert_true(perfdb_bf16_to_float(perfdb_bf16_from_float(1.0f + 3 * 0x1p-8f)) == 1.0f + 0x1p-6f);
	srand(7);
	for (int i = 0; i < 200000; i++) {
		uint32_t u = ((uint32_t)rand() << 16) ^ (uint32_t)rand();
		float f;
		memcpy(&f, &u, 4);
		if (!isfinite(f) || fabsf(f) > 3.38e38f)
			continue;
		assert_int_equal(perfdb_bf16_from_float(f), bf16_ref(f));
	}
	/* sums round once: 256 + 1 is not representable (spacing 2 above 256): ties to 256 */
	uint16_t a[2] = { perfdb_bf16_from_float(256), perfdb_bf16_from_float(3) };
	uint16_t b[2] = { perfdb_bf16_from_float(1), perfdb_bf16_from_float(4) };
	perfdb_bf16_sum(a, b, 2);
	assert_true(perfdb_bf16_to_float(b[0]) == 256.0f);
	assert_true(perfdb_bf16_to_float(b[1]) == 7.0f);
}

/* fp16 values from their definition (sign, 5-bit exponent bias 15, 10-bit fraction) */
static double fp16_value(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
	return (h & 0x8000) ? -v : v;
}

/* nearest fp16 by search over all finite values, ties to even */
static uint16_t fp16_ref(float f)
{
	double x = fabs((double)f);
	uint16_t sign = signbit(f) ? 0x8000 : 0;
	if (x >= 65520.0)
		return sign | 0x7c00;
	unsigned lo = 0, hi = 0x7bff;
	while (lo < hi) {   /* largest code with value <= x */
		unsigned mid = (lo + hi + 1) / 2;
		if (fp16_value((uint16_t)mid) <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	if (lo == 0x7bff)
		return sign | 0x7bff;
	double dl = x - fp16_value((uint16_t)lo), dh = fp16_value((uint16_t)(lo + 1)) - x;
	if (dl < dh || (dl == dh && (lo & 1) == 0))
		return (uint16_t)(sign | lo);
	return (uint16_t)(sign | (lo + 1));
}

static void test_fp16(void **state)
{
	(void)state;
	for (uint32_t h = 0; h < 65536; h++) {
		if (((h >> 10) & 31) == 31 && (h & 1023)) {
			assert_true(isnan(perfdb_fp16_to_float((uint16_t)h)));
			continue;
		}
		if (((h >> 10) & 31) != 31)
			assert_true(perfdb_fp16_to_float((uint16_t)h) == (float)fp16_value((uint16_t)h));
		assert_int_equal(perfdb_fp16_from_float(perfdb_fp16_to_float((uint16_t)h)), h);
	}
	assert_int_equal(perfdb_fp16_from_float(65504.0f), 0x7bff);
	assert_int_equal(perfdb_fp16_from_float(65519.0f), 0x7bff);
	assert_int_equal(perfdb_fp16_from_float(65520.0f), 0x7c00);       /* ties up to inf */
	assert_int_equal(perfdb_fp16_from_float(0x1p-25f), 0x0000);        /* ties to even 0 */
	assert_int_equal(perfdb_fp16_from_float(0x1.01p-25f), 0x0001);
	assert_int_equal(perfdb_fp16_from_float(3 * 0x1p-25f), 0x0002);    /* 1.5 units: even */
	assert_int_equal(perfdb_fp16_from_float(-2.0f), 0xc000);
	assert_true(isnan(perfdb_fp16_to_float(perfdb_fp16_from_float(NAN))));
	srand(11);
	for (int i = 0; i < 100000; i++) {
		/* magnitudes from 2^-27 to 2^17: subnormals, normals, overflow */
		float f = ldexpf((float)rand() / (float)RAND_MAX + 0.5f, rand() % 45 - 27);
		if (rand() & 1)
			f = -f;
		assert_int_equal(perfdb_fp16_from_float(f), fp16_ref(f));
	}
	uint16_t a[1] = { perfdb_fp16_from_float(2048) }, b[1] = { perfdb_fp16_from_float(1) };
	perfdb_fp16_sum(a, b, 1);   /* 2049 ties to 2048 (spacing 2) */
	assert_true(perfdb_fp16_to_float(b[0]) == 2048.0f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_op_tables),
		cmocka_unit_test(test_dtype_tables),
		cmocka_unit_test(test_default_grid),
		cmocka_unit_test(test_coords),
		cmocka_unit_test(test_tiers),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_busbw),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_overhead),
		cmocka_unit_test(test_table_append),
		cmocka_unit_test(test_nonmonotonic),
		cmocka_unit_test(test_predict),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_pyint),
		cmocka_unit_test(test_suite_nd_list),
		cmocka_unit_test(test_suite_plan),
		cmocka_unit_test(test_bf16),
		cmocka_unit_test(test_fp16),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
