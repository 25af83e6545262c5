/*
 * perfdb comm-suite (docs/spec/comm.md §4, Decision 5): the sweeps of
 * run_comm_bench.sh as a few MPI launches.
 *
 * The reference runs 12 torchrun sessions on one node (device counts
 * 16/8/4/2 x three op rounds) or 3 sessions per node in multi-node mode.
 * Since `perfdb comm` carves every group size from one world with
 * MPI_Comm_split, each round is one launch in both modes: three launches,
 * so a failed round costs only its own ops.
 *
 *   single node  mpirun -np <max nd> [args] perfdb comm --ops <round>
 *                  --grid-shape 48 8 2 --num-devices 16 8 4 2
 *                  --bytes-grid <23 sizes> --database-path OUT
 *   multi-node   mpirun --hostfile H --map-by ppr:<nproc>:node -np <world>
 *                  [args] perfdb comm --ops <round> --grid-shape 48 8 2
 *                  --num-devices <list> --topology-tier 0
 *                  --bytes-grid <23 or QUICK's 5 sizes> --database-path OUT
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "comm/comm.h"

const long long perfdb_comm_suite_bytes[PERFDB_COMM_SUITE_NBYTES] = {
	128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144,
	524288, 1048576, 2097152, 4194304, 8388608, 16777216, 33554432, 67108864,
	134217728, 268435456, 536870912,
};

const long long perfdb_comm_suite_quick_bytes[PERFDB_COMM_SUITE_NQUICK] = {
	1024, 65536, 1048576, 16777216, 268435456,
};

static const long single_node_nd[] = { 16, 8, 4, 2 };

static const struct {
	const char *title;
	const char *ops[3];
} rounds[PERFDB_COMM_SUITE_ROUNDS] = {
	{ "Round 1: allReduce", { "all_reduce", NULL } },
	{ "Round 2: allGather+reduceScatter", { "all_gather", "reduce_scatter", NULL } },
	{ "Round 3: alltoallv", { "all_to_all", NULL } },
};

void perfdb_comm_suite_init(struct perfdb_comm_suite *s)
{
	memset(s, 0, sizeof(*s));
}

void perfdb_comm_suite_release(struct perfdb_comm_suite *s)
{
	for (size_t i = 0; i < s->nlaunch; i++) {
		for (size_t k = 0; k < s->launch[i].argc; k++)
			free(s->launch[i].argv[k]);
		free(s->launch[i].argv);
	}
	free(s->nd);
	free(s->bytes);
	free(s->output_dir);
	perfdb_comm_suite_init(s);
}

int perfdb_comm_hostfile_count(const char *path, long *nhosts, struct perfdb_err *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return perfdb_err_errno(err, errno, "cannot read hostfile '%s'", path);
	char line[4096];
	long n = 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (*p && *p != '#')
			n++;
	}
	fclose(f);
	*nhosts = n;
	if (n == 0)
		return perfdb_err_set(err, PERFDB_EINVAL, "hostfile '%s' lists no hosts", path);
	return 0;
}

size_t perfdb_comm_suite_nd_list(long world, long *out)
{
	size_t n = 0;
	for (long nd = 32; nd <= world && n < 60; nd *= 2)
		out[n++] = nd;
	static const long extra[] = { 384, 768 };
	for (size_t i = 0; i < 2; i++)
		if (extra[i] <= world)
			out[n++] = extra[i];
	/* sort -n -u */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
			long t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (!w || out[w - 1] != out[i])
			out[w++] = out[i];
	return w;
}

struct argv_b {
	char **v;
	size_t n, cap;
	int oom;
};

static void add(struct argv_b *a, const char *s)
{
	if (a->oom)
		return;
	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		char **nv = realloc(a->v, cap * sizeof(*nv));
		if (!nv) {
			a->oom = 1;
			return;
		}
		a->v = nv;
		a->cap = cap;
	}
	a->v[a->n] = strdup(s);
	if (!a->v[a->n]) {
		a->oom = 1;
		return;
	}
	a->v[++a->n] = NULL;
}

static void addl(struct argv_b *a, long long v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", v);
	add(a, buf);
}

int perfdb_comm_suite_plan(const struct perfdb_comm_suite_opts *o, struct perfdb_comm_suite *s,
			   struct perfdb_err *err)
{
	s->multi_node = o->hostfile != NULL;
	s->nproc = o->nproc > 0 ? o->nproc : 16;
	long nd[64];
	size_t nnd;
	if (s->multi_node) {
		PERFDB_TRY(perfdb_comm_hostfile_count(o->hostfile, &s->nhosts, err));
		s->world = s->nhosts * s->nproc;
		nnd = perfdb_comm_suite_nd_list(s->world, nd);
		if (!nnd && !o->num_devices)
			return perfdb_err_set(err, PERFDB_EINVAL,
				"empty device list for WORLD_SIZE=%ld (NNODES=%ld * NPROC=%ld): "
				"inter-pod (tier 0) groups need a world of at least 32 ranks; "
				"group sizes up to 16 are the single-node sweep (no --hostfile)",
				s->world, s->nhosts, s->nproc);
	} else {
		s->nhosts = 1;
		nnd = sizeof(single_node_nd) / sizeof(single_node_nd[0]);
		memcpy(nd, single_node_nd, sizeof(single_node_nd));
	}
	const long *ndv = o->num_devices ? o->num_devices : nd;
	if (o->num_devices)
		nnd = o->nnum_devices;
	s->nd = malloc((nnd ? nnd : 1) * sizeof(long));
	if (!s->nd)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	memcpy(s->nd, ndv, nnd * sizeof(long));
	s->nnd = nnd;
	if (!s->multi_node) {
		s->world = 0;
		for (size_t i = 0; i < nnd; i++)
			if (s->nd[i] > s->world)
				s->world = s->nd[i];
	}

	const long long *bv = o->bytes ? o->bytes
			    : s->multi_node && o->quick ? perfdb_comm_suite_quick_bytes
			    : perfdb_comm_suite_bytes;
	size_t nb = o->bytes ? o->nbytes
		  : s->multi_node && o->quick ? PERFDB_COMM_SUITE_NQUICK : PERFDB_COMM_SUITE_NBYTES;
	s->bytes = malloc(nb * sizeof(long long));
	if (!s->bytes)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	memcpy(s->bytes, bv, nb * sizeof(long long));
	s->nbytes = nb;

	const char *out = o->output_dir ? o->output_dir
			: s->multi_node ? "./hccl_bench_inter_pod_v8.5" : "./hccl_bench_data";
	s->output_dir = strdup(out);
	if (!s->output_dir)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");

	for (size_t r = 0; r < PERFDB_COMM_SUITE_ROUNDS; r++) {
		struct argv_b a = { 0 };
		add(&a, o->mpirun ? o->mpirun : "mpirun");
		if (s->multi_node) {
			char ppr[64];
			snprintf(ppr, sizeof(ppr), "ppr:%ld:node", s->nproc);
			add(&a, "--hostfile");
			add(&a, o->hostfile);
			add(&a, "--map-by");
			add(&a, ppr);
		}
		add(&a, "-np");
		addl(&a, s->world);
		for (size_t i = 0; i < o->nmpirun_args; i++)
			add(&a, o->mpirun_args[i]);
		add(&a, o->perfdb);
		add(&a, "comm");
		add(&a, "--ops");
		for (size_t k = 0; rounds[r].ops[k]; k++)
			add(&a, rounds[r].ops[k]);
		add(&a, "--grid-shape");
		add(&a, "48");
		add(&a, "8");
		add(&a, "2");
		add(&a, "--num-devices");
		for (size_t i = 0; i < s->nnd; i++)
			addl(&a, s->nd[i]);
		if (s->multi_node) {
			add(&a, "--topology-tier");
			add(&a, "0");
		}
		add(&a, "--bytes-grid");
		for (size_t i = 0; i < s->nbytes; i++)
			addl(&a, s->bytes[i]);
		add(&a, "--database-path");
		add(&a, s->output_dir);
		for (size_t i = 0; i < o->ncomm_args; i++)
			add(&a, o->comm_args[i]);
		struct perfdb_comm_launch *l = &s->launch[s->nlaunch++];
		snprintf(l->title, sizeof(l->title), "%s", rounds[r].title);
		l->argv = a.v;
		l->argc = a.n;
		if (a.oom)
			return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	}
	return 0;
}

static int plain(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_-./:=,+@%", *s))
			return 0;
	return 1;
}

int perfdb_comm_argv_format(char *const *argv, struct perfdb_strbuf *out)
{
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			PERFDB_TRY(perfdb_strbuf_addch(out, ' '));
		if (plain(argv[i])) {
			PERFDB_TRY(perfdb_strbuf_addstr(out, argv[i]));
			continue;
		}
		PERFDB_TRY(perfdb_strbuf_addch(out, '\''));
		for (const char *p = argv[i]; *p; p++)
			PERFDB_TRY(*p == '\'' ? perfdb_strbuf_addstr(out, "'\\''")
					      : perfdb_strbuf_addch(out, *p));
		PERFDB_TRY(perfdb_strbuf_addch(out, '\''));
	}
	return 0;
}

int perfdb_comm_spawn_to(char *const *argv, bool stdout_to_stderr, int *status,
			 struct perfdb_err *err)
{
	/* A close-on-exec pipe carries exec's errno back: no output from the child. */
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return perfdb_err_errno(err, errno, "cannot start '%s'", argv[0]);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		return perfdb_err_errno(err, e, "cannot start '%s'", argv[0]);
	}
	if (pid == 0) {
		close(fds[0]);
		if (stdout_to_stderr)
			dup2(2, 1);
		execvp(argv[0], argv);
		int e = errno;
		if (write(fds[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(fds[1]);
	int child_errno = 0;
	ssize_t got;
	while ((got = read(fds[0], &child_errno, sizeof(child_errno))) < 0 && errno == EINTR)
		;
	close(fds[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return perfdb_err_errno(err, errno, "waiting for '%s'", argv[0]);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
	if (got == (ssize_t)sizeof(child_errno))
		return perfdb_err_errno(err, child_errno, "cannot run '%s'", argv[0]);
	return 0;
}
