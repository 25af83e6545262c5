/*
 * DispatchFFNCombine under mpirun -np EP against a per-rank reference
 * (run by tests/mpi/microbench_dfc.sh): every rank builds the same case
 * (x (T,H), w1 (E,H,n), w2 (E,n/2,H), ids, probs), overwrites x with values
 * of its own, runs the op through the CPU backend over MPI_COMM_WORLD with
 * EP = the rank count, and checks out0 against a plain loop: token t's
 * choice j goes to global expert g (the ids prepare wrote); every rank holds
 * the same weight buffers (same fill seed), so expert g's weights are
 * w[g mod E] whichever rank owns it.  Exit 0 when every rank matches.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/cpu/cpu_internal.h"
#include "replay/engine.h"
#include "../unit/backend/cpu_test_ctx.h"

static int check(int rank, int nranks)
{
	const int t = 12, h = 32, e = 3, n = 16, k = 2;
	char ins[160];
	snprintf(ins, sizeof(ins), "%d,%d;%d,%d,%d;%d,%d,%d;%d,%d;%d;%d;%d,%d", t, h, e, h, n, e, n / 2, h, t, k, e * n,
		 e * h, t, k);
	struct perfdb_op_case c;
	struct perfdb_err err;
	struct perfdb_engine_pool pool = { 0 };
	perfdb_err_clear(&err);
	MPI_Comm comm = MPI_COMM_WORLD;
	const struct perfdb_op_impl *impl = perfdb_backend_cpu.find_op("DispatchFFNCombine");
	if (perfdb_engine_build_case("DispatchFFNCombine", ins,
				     "DT_FLOAT;DT_FLOAT;DT_FLOAT;DT_INT32;DT_FLOAT;DT_FLOAT;DT_FLOAT", "", "12,32;3",
				     "DT_FLOAT;DT_INT32", "", &c, &err) < 0)
		return fprintf(stderr, "build: %s\n", err.msg), 1;
	c.comm = &comm;
	c.rank = rank;
	c.nranks = nranks;
	c.ep_size = nranks;
	if (perfdb_case_check(perfdb_opdef_get(impl->name), impl, &c, &err) < 0 || perfdb_engine_alloc_case(&pool, &c, 5, &err) < 0)
		return fprintf(stderr, "rank %d: %s\n", rank, err.msg), 1;
	float *x = c.in[0].data;
	for (int i = 0; i < t * h; i++)
		x[i] = 0.5f * sinf((float)(i + 1000 * rank));
	int rc = 0;
	if (impl->prepare(with_ctx(&c), &err) < 0 || impl->run(&c, &err) < 0) {
		fprintf(stderr, "rank %d: %s\n", rank, err.msg);
		rc = 1;
	}
	const float *w1 = c.in[1].data, *w2 = c.in[2].data, *p = c.in[6].data, *out = c.out[0].data;
	const int32_t *id = c.in[3].data;
	double worst = 0;
	for (int tt = 0; tt < t && rc == 0; tt++) {
		double want[32] = { 0 };
		for (int j = 0; j < k; j++) {
			int g = id[tt * k + j], w = g % e;
			double y1[16], hh[8];
			for (int q = 0; q < n; q++) {
				y1[q] = 0;
				for (int a = 0; a < h; a++)
					y1[q] += (double)x[tt * h + a] * w1[(w * h + a) * n + q];
			}
			for (int q = 0; q < n / 2; q++)
				hh[q] = y1[q] / (1 + exp(-y1[q])) * y1[n / 2 + q];
			for (int a = 0; a < h; a++) {
				double y = 0;
				for (int q = 0; q < n / 2; q++)
					y += hh[q] * w2[(w * n / 2 + q) * h + a];
				want[a] += p[tt * k + j] * y;
			}
		}
		for (int a = 0; a < h; a++) {
			double d = fabs(out[tt * h + a] - want[a]) / (1 + fabs(want[a]));
			worst = d > worst ? d : worst;
		}
	}
	/* every expert of the group got rows from some rank: the balanced ids crossed ranks */
	const int32_t *cnt = c.out[1].data;
	int total = 0;
	for (int j = 0; j < e && rc == 0; j++)
		total += cnt[j];
	if (rc == 0 && worst > 1e-4) {
		fprintf(stderr, "rank %d: out0 off by %g\n", rank, worst);
		rc = 1;
	}
	int all = 0;
	MPI_Allreduce(&total, &all, 1, MPI_INT, MPI_SUM, comm);
	if (rc == 0 && all != nranks * t * k) {
		fprintf(stderr, "rank %d: %d rows reached the experts, want %d\n", rank, all, nranks * t * k);
		rc = 1;
	}
	if (impl->release)
		impl->release(&c);
	perfdb_engine_pool_release(&pool);
	if (rc == 0)
		printf("rank %d: max relative error %.2g, %d rows at its experts\n", rank, worst, total);
	return rc;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, nranks;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	int rc = check(rank, nranks), any = 0;
	MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Finalize();
	return any;
}
