/*
 * bench_csv: tokenize a CSV file with perfdb's reader and report throughput.
 * Reads the file PASSES times (default 3) and prints the best pass, so the
 * page cache is warm and a noisy neighbour costs at most one pass.
 *
 * usage: bench_csv FILE [PASSES] [--flags none|trim|utf8|all]
 * output (one line): bytes=<n> rows=<n> fields=<n> seconds=<best> gbps=<GB/s>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "perfdb/csv.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_csv FILE [PASSES] [--flags none|trim|utf8|all]\n");
		return 2;
	}
	int passes = 3;
	unsigned flags = PERFDB_CSV_TRIM | PERFDB_CSV_UTF8;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--flags") == 0 && i + 1 < argc) {
			const char *f = argv[++i];
			flags = strcmp(f, "none") == 0 ? 0 : strcmp(f, "trim") == 0 ? PERFDB_CSV_TRIM
				: strcmp(f, "utf8") == 0 ? PERFDB_CSV_UTF8
				: PERFDB_CSV_TRIM | PERFDB_CSV_UTF8;
		} else {
			passes = atoi(argv[i]);
		}
	}
	struct stat st;
	if (stat(argv[1], &st) < 0) {
		perror(argv[1]);
		return 1;
	}
	double best = 1e30;
	unsigned long long rows = 0, fields = 0, chk = 0;
	for (int p = 0; p < passes; p++) {
		struct perfdb_csv_reader *r;
		struct perfdb_err err;
		perfdb_err_clear(&err);
		double t = now();
		if (perfdb_csv_open(&r, argv[1], flags, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		struct perfdb_csv_row row;
		int rc;
		rows = fields = 0;
		while ((rc = perfdb_csv_next(r, &row, &err)) > 0) {
			rows++;
			fields += row.n;
			/* touch the data so nothing is optimised away */
			chk += row.n ? row.f[row.n - 1].len : 0;
		}
		perfdb_csv_close(r);
		t = now() - t;
		if (rc < 0) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		if (t < best)
			best = t;
	}
	printf("bytes=%lld rows=%llu fields=%llu seconds=%.4f gbps=%.3f check=%llu\n",
	       (long long)st.st_size, rows, fields, best, (double)st.st_size / best / 1e9, chk);
	return 0;
}
