/*
 * `perfdb microbench --backend torch` as one recipe (docs/replay.md "The
 * torch backend"): the PyTorch op tables' rows out as a request, one child
 * running data/torch_replay.py under the framework, its answers back as
 * measurements, a status file and an env record.  The writeback is the
 * caller's (perfdb_replay_finish), as for the native backends.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfdb/device.h"
#include "perfdb/env_check.h"
#include "perfdb/fsio.h"
#include "perfdb/preflight.h"
#include "perfdb/schema.h"
#include "perfdb/table.h"
#include "replay/torch_run.h"

/* A row sent out: where it goes back, and its key cells. */
struct pending {
	char *table;
	size_t line;
	char *base[PERFDB_SCHEMA_NBASE];
	int untimed;   /* run in the sequence only, not timed nor written */
};

struct trun {
	const struct perfdb_torch_opts *o;
	struct pending *v;
	size_t n, cap, ntimed;
	json_t *rows;
	size_t *steps;   /* o->sequence's steps ordered by (table, line), for in_sequence */
	char tmp[4096];
};

/*
 * Steps of the sequence and pending rows are both found by (table, line),
 * through an index array kept in that order: one comparison, one search.
 */
static int key_cmp(const char *ta, size_t la, const char *tb, size_t lb)
{
	int c = strcmp(ta, tb);
	return c ? c : la < lb ? -1 : la > lb;
}

typedef void key_at_fn(const void *v, size_t i, const char **table, size_t *line);

static void step_key(const void *v, size_t i, const char **table, size_t *line)
{
	const struct perfdb_opseq_step *s = v;
	*table = s[i].table;
	*line = s[i].line;
}

static void pending_key(const void *v, size_t i, const char **table, size_t *line);

/* The first position of ord (n indices into v, in key order) not below (table, line). */
static size_t key_lower(const void *v, key_at_fn *at, const size_t *ord, size_t n, const char *table,
			size_t line)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, l;
		const char *t;
		at(v, ord[mid], &t, &l);
		if (key_cmp(t, l, table, line) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether position pos of ord is (table, line); line 0: any row of table. */
static int key_is(const void *v, key_at_fn *at, const size_t *ord, size_t n, size_t pos, const char *table,
		  size_t line)
{
	if (pos >= n)
		return 0;
	const char *t;
	size_t l;
	at(v, ord[pos], &t, &l);
	return strcmp(t, table) == 0 && (line == 0 || l == line);
}

struct key_src {
	const void *v;
	key_at_fn *at;
};

static int by_key(const void *x, const void *y, void *arg)
{
	const struct key_src *s = arg;
	const char *ta, *tb;
	size_t la, lb;
	s->at(s->v, *(const size_t *)x, &ta, &la);
	s->at(s->v, *(const size_t *)y, &tb, &lb);
	return key_cmp(ta, la, tb, lb);
}

/* ord (n entries) as the indices 0..n-1 of v, in key order. */
static void key_sort(const void *v, key_at_fn *at, size_t *ord, size_t n)
{
	struct key_src s = { v, at };
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, n, sizeof(*ord), by_key, &s);
}

/* Whether (table, line) is a step of the sequence; line 0: whether any row of table is. */
static int in_sequence(const struct trun *x, const char *table, size_t line)
{
	const struct perfdb_opseq *s = x->o->sequence;
	if (!s)
		return 0;
	size_t pos = key_lower(s->v, step_key, x->steps, s->n, table, line);
	return key_is(s->v, step_key, x->steps, s->n, pos, table, line);
}

static const char *const base_cols[PERFDB_SCHEMA_NBASE] = { PERFDB_SCHEMA_BASE_COLS };

static int nomem(struct perfdb_err *err)
{
	return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
}

void perfdb_torch_run_release(struct perfdb_torch_run *r)
{
	perfdb_measures_release(&r->measures);
	perfdb_status_release(&r->st);
	memset(r, 0, sizeof(*r));
}

static int selected(const struct perfdb_torch_opts *o, const char *stem)
{
	if (!o->ops)
		return 1;
	for (size_t i = 0; i < o->nops; i++)
		if (strcmp(o->ops[i], stem) == 0)
			return 1;
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* One table's rows into the request: timed (those --update-mode asks for)
 * when timed is set, and untimed where the sequence runs them. */
static int add_table(struct trun *x, const char *stem, const char *path, int timed, struct perfdb_err *err)
{
	struct perfdb_table t;
	perfdb_table_init(&t);
	int rc = perfdb_table_load(&t, path, err);
	long cmb = perfdb_table_col(&t, PERFDB_COL_MB_DUR), cprof = perfdb_table_col(&t, PERFDB_COL_PROF_AVG);
	long cin = perfdb_table_col(&t, PERFDB_COL_IN_SHAPES), cdt = perfdb_table_col(&t, PERFDB_COL_IN_DTYPES);
	long cod = perfdb_table_col(&t, PERFDB_COL_OUT_DTYPES), cst = perfdb_table_col(&t, PERFDB_COL_IN_STRIDES);
	for (size_t r = 0; rc == 0 && r < t.nrows; r++) {
		int timed_row = timed && !(x->o->missing_only &&
					   perfdb_schema_usable_duration(perfdb_table_get(&t, r, cmb),
									 perfdb_table_get(&t, r, cprof), false, NULL));
		if (!timed_row && !in_sequence(x, stem, t.rows[r].line))
			continue;
		if (x->n == x->cap) {
			size_t cap = x->cap ? 2 * x->cap : 256;
			struct pending *v = realloc(x->v, cap * sizeof(*v));
			if (!v) {
				rc = nomem(err);
				break;
			}
			x->v = v;
			x->cap = cap;
		}
		struct pending *p = &x->v[x->n];
		memset(p, 0, sizeof(*p));
		x->n++;
		p->table = strdup(stem);
		p->line = t.rows[r].line;
		p->untimed = !timed_row;
		x->ntimed += timed_row;
		int ok = p->table != NULL;
		for (int b = 0; b < PERFDB_SCHEMA_NBASE; b++)
			ok &= (p->base[b] = strdup(perfdb_table_get(&t, r, perfdb_table_col(&t, base_cols[b])))) != NULL;
		json_t *j = json_pack("{s:s, s:I, s:s, s:s, s:s, s:s}", "table", stem, "line", (json_int_t)p->line,
				      "shapes", perfdb_table_get(&t, r, cin), "dtypes", perfdb_table_get(&t, r, cdt),
				      "out_dtypes", perfdb_table_get(&t, r, cod),
				      "strides", perfdb_table_get(&t, r, cst));
		if (j && p->untimed && json_object_set_new(j, "untimed", json_true()) < 0)
			ok = 0;
		if (!ok || !j || json_array_append_new(x->rows, j) < 0)
			rc = nomem(err);
	}
	perfdb_table_release(&t);
	return rc;
}

static int collect(struct trun *x, struct perfdb_err *err)
{
	struct dirent **names;
	int k = scandir(x->o->dbdir, &names, NULL, by_name);
	if (k < 0)
		return perfdb_err_errno(err, errno, "cannot list the database directory '%s'", x->o->dbdir);
	int rc = 0;
	for (int i = 0; i < k; i++) {
		const char *nm = names[i]->d_name;
		size_t len = strlen(nm);
		char stem[512];
		snprintf(stem, sizeof(stem), "%.*s", len > 4 ? (int)(len - 4) : 0, nm);
		/* the tables the native backends replay: the PyTorch ops with a
		 * lowering; in a sequence, any other table it runs rows of, untimed */
		int csv = len > 4 && strcmp(nm + len - 4, ".csv") == 0;
		int timed = csv && perfdb_replay_aten_target(stem) && selected(x->o, stem);
		if (rc == 0 && (timed || (csv && in_sequence(x, stem, 0)))) {
			char p[4200];
			snprintf(p, sizeof(p), "%s/%s", x->o->dbdir, nm);
			rc = add_table(x, stem, p, timed, err);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

static void pending_key(const void *v, size_t i, const char **table, size_t *line)
{
	const struct pending *p = v;
	*table = p[i].table;
	*line = p[i].line;
}

/* The request's "sequence": each step as the index of its row in "rows". */
static int sequence_json(const struct trun *x, json_t **out, struct perfdb_err *err)
{
	const struct perfdb_opseq *s = x->o->sequence;
	size_t *ord = malloc((x->n + 1) * sizeof(*ord));
	json_t *a = json_array();
	int rc = ord && a ? 0 : nomem(err);
	if (rc == 0)
		key_sort(x->v, pending_key, ord, x->n);
	for (size_t k = 0; rc == 0 && k < s->n; k++) {
		const char *t = s->v[k].table;
		size_t line = s->v[k].line, pos = key_lower(x->v, pending_key, ord, x->n, t, line);
		/* every step's row was collected: a step without one was a row the
		 * table no longer has (changed since the sequence was read) */
		if (key_is(x->v, pending_key, ord, x->n, pos, t, line))
			rc = json_array_append_new(a, json_integer((json_int_t)ord[pos])) < 0 ? nomem(err) : 0;
	}
	free(ord);
	if (rc < 0) {
		json_decref(a);
		return rc;
	}
	*out = a;
	return 0;
}

static const char *python_of(const struct perfdb_torch_opts *o)
{
	const char *e = getenv("PERFDB_TORCH_PYTHON");
	return o->python ? o->python : e && *e ? e : "/usr/bin/python3";
}

/*
 * Run argv; its exit status, or -1 after limit_s (killed).  The child keeps
 * perfdb's environment as it is: the replay sets torch.set_num_threads, and
 * the BLAS and OpenMP settings a model's process inherits
 * (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, ...) are the user's to give it,
 * since a fixed OMP_NUM_THREADS moved fp32 GEMMs 1.7x away from the same
 * model run without it (docs/measuring.md "Closure").
 */
static int run_child(char *const argv[], double limit_s, int quiet)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -2;
	if (pid == 0) {
		if (quiet) {
			FILE *devnull = freopen("/dev/null", "w", stderr);
			(void)devnull;
		}
		execv(argv[0], argv);
		_exit(127);
	}
	struct timespec t0, now, nap = { 0, 20 * 1000 * 1000 };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int st;
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		if (w < 0 && errno != EINTR)
			return -2;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) * 1e-9 > limit_s) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		nanosleep(&nap, NULL);
	}
}

static int add_failure(struct perfdb_status_failure **list, size_t *n, const struct pending *p,
		       const char *reason)
{
	struct perfdb_status_failure *v = realloc(*list, (*n + 1) * sizeof(*v));
	if (!v)
		return -PERFDB_ENOMEM;
	*list = v;
	char op[700];
	snprintf(op, sizeof(op), "%s.csv:%zu", p->table, p->line);
	v[*n].op = strdup(op);
	v[*n].reason = strdup(reason);
	(*n)++;
	return v[*n - 1].op && v[*n - 1].reason ? 0 : -PERFDB_ENOMEM;
}

static int add_measure(struct perfdb_measures *m, struct pending *p, json_t *row)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct perfdb_measure *v = realloc(m->v, cap * sizeof(*v));
		if (!v)
			return -PERFDB_ENOMEM;
		m->v = v;
		m->cap = cap;
	}
	struct perfdb_measure *x = &m->v[m->n++];
	memset(x, 0, sizeof(*x));
	/* the strings move from the pending row to the measurement */
	x->op = p->table;
	p->table = NULL;
	for (int b = 0; b < PERFDB_SCHEMA_NBASE; b++) {
		x->base[b] = p->base[b];
		p->base[b] = NULL;
	}
	x->samples = (size_t)json_integer_value(json_object_get(row, "samples"));
	x->mean = json_number_value(json_object_get(row, "mean_us"));
	x->median = json_number_value(json_object_get(row, "median_us"));
	x->min = json_number_value(json_object_get(row, "min_us"));
	x->std = json_number_value(json_object_get(row, "std_us"));
	return 0;
}

/* The child's answers: measurements and the status. */
static int read_answers(struct trun *x, const char *path, struct perfdb_torch_run *r,
			struct perfdb_err *err)
{
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	json_t *rows = root ? json_object_get(root, "rows") : NULL;
	if (!json_is_array(rows) || json_array_size(rows) != x->n) {
		json_decref(root);
		return perfdb_err_set(err, PERFDB_EPARSE, "%s: the torch replay's answer does not read "
				      "(%s)", path, root ? "not one row per row asked" : je.text);
	}
	r->probe_median_gbs = json_number_value(json_object_get(root, "probe_median_gbs"));
	r->probe_readings = (size_t)json_integer_value(json_object_get(root, "probe_readings"));
	r->probe_none = (size_t)json_integer_value(json_object_get(root, "probe_readings_none"));
	r->st.rows_again = (size_t)json_integer_value(json_object_get(root, "rows_measured_again"));
	r->st.rows_again_written = (size_t)json_integer_value(json_object_get(root, "rows_measured_again_written"));
	json_t *sq = json_object_get(root, "sequence");
	r->passes = (size_t)json_integer_value(json_object_get(sq, "passes"));
	r->passes_dropped = (size_t)json_integer_value(json_object_get(sq, "dropped"));
	r->passes_low = (size_t)json_integer_value(json_object_get(sq, "low_bandwidth"));
	snprintf(r->torch_version, sizeof(r->torch_version), "%s",
		 json_string_value(json_object_get(root, "torch")) ? json_string_value(json_object_get(root, "torch")) : "?");
	int rc = 0;
	size_t tbad = 0, tn = 0;
	for (size_t i = 0; rc == 0 && i < x->n; i++) {
		json_t *row = json_array_get(rows, i);
		const char *st = json_string_value(json_object_get(row, "status"));
		const char *why = json_string_value(json_object_get(row, "reason"));
		const char *ctx = json_string_value(json_object_get(row, "context"));
		struct pending *p = &x->v[i];
		char *table = strdup(p->table);
		if (!table) {
			rc = nomem(err);
			break;
		}
		tn += !p->untimed;
		if (p->untimed) {
			/* run in the sequence for its conditions: nothing to write */
		} else if (st && strcmp(st, "ok") == 0 && json_number_value(json_object_get(row, "mean_us")) > 0) {
			r->in_sequence += ctx && strcmp(ctx, "sequence") == 0;
			rc = add_measure(&r->measures, p, row) < 0 ? nomem(err) : 0;
			r->ok++;
		} else if (st && strcmp(st, "contended") == 0) {
			r->nlow += json_is_true(json_object_get(row, "low_bandwidth"));
			rc = add_failure(&r->st.contended, &r->st.ncontended, p, why ? why : "contended") < 0 ?
				nomem(err) : 0;
			r->contended++;
			tbad++;
		} else {
			rc = add_failure(&r->st.failed, &r->st.nfailed, p, why ? why : "no answer") < 0 ?
				nomem(err) : 0;
			r->failed++;
			tbad++;
		}
		/* a table's last row: success when every row was measured */
		int last = i + 1 == x->n || strcmp(x->v[i + 1].table ? x->v[i + 1].table : "", table) != 0;
		if (rc == 0 && last) {
			char ***list = tbad || !tn ? NULL : &r->st.success;
			if (list) {
				char **v = realloc(*list, (r->st.nsuccess + 1) * sizeof(*v));
				if (!v) {
					rc = nomem(err);
				} else {
					*list = v;
					v[r->st.nsuccess++] = table;
					table = NULL;
				}
			}
			tbad = tn = 0;
		}
		free(table);
	}
	json_decref(root);
	return rc;
}

/*
 * The settings the child inherited that move a framework's op times (its
 * thread pools and its allocator, docs/measuring.md "Two thread pools" and
 * "The allocator's fresh pages"): a database says what it was measured
 * under, and a model run under others is not what it describes.
 */
static const char *const inherited[] = {
	"OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OPENBLAS_NUM_THREADS",
	"MKL_NUM_THREADS", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
	"LD_PRELOAD",
};

/*
 * Whether the bandwidth probe runs: not with PERFDB_PROBE=0.  It once
 * stayed off where --threads held every CPU, because the run's own
 * workers, spinning after an op, read as a slow memory; the probe now
 * waits for them to rest and refuses a reading taken beside them
 * (data/torch_replay.py Probe.read, as src/core/probe.c).
 */
static int probe_runs(void)
{
	return !perfdb_env_off("PERFDB_PROBE");
}

static int write_env(const struct perfdb_torch_opts *o, struct perfdb_torch_run *r, struct perfdb_err *err)
{
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	size_t unrows = 0;
	for (size_t i = 0; i < r->st.nunreplayed; i++)
		unrows += r->st.unreplayed[i].rows;
	const char *rot = getenv("PERFDB_TORCH_ROTATE");
	perfdb_strbuf_addf(&b, "backend=torch\npython=%s\ntorch=%s\nthreads=%ld\nrepeat_count=%ld\n"
			   "row_budget_s=%g\nrows=%zu\nrows_ok=%zu\nrows_failed=%zu\nrows_contended=%zu\n"
			   "tables_not_replayed=%zu\nrows_not_replayed=%zu\nweights_rotated=%s\n",
			   python_of(o), r->torch_version, o->threads, o->repeat, o->budget, r->rows, r->ok,
			   r->failed, r->contended, r->st.nunreplayed, unrows,
			   rot && strcmp(rot, "0") == 0 ? "no (PERFDB_TORCH_ROTATE=0)" :
			   "a GEMM's operands after the first, below 64 MiB, rotate through ceil(64 MiB / size) copies, "
			   "at most 64");
	/* data/torch_replay.py Evict: how a row timed alone meets the caches */
	const char *ev = getenv("PERFDB_TORCH_EVICT");
	perfdb_strbuf_addf(&b, "caches_between_calls=%s\n", ev && strcmp(ev, "0") == 0 ?
			   "as the previous call left them (PERFDB_TORCH_EVICT=0)" :
			   "a row timed alone that is not a GEMM, inputs below 64 MiB: 64 MiB read and small ops of "
			   "other kinds run before each timed call");
	if (!probe_runs())
		perfdb_strbuf_addf(&b, "probe=off (PERFDB_PROBE=0)\n");
	else
		perfdb_strbuf_addf(&b, "probe=memory bandwidth read by one thread before and after each row "
				   "and each pass of the sequence; low below %.0f%% of %s\n"
				   "probe_readings=%zu\nprobe_readings_none=%zu\n"
				   "probe_quiet_gbs=%.1f\nprobe_median_gbs=%.1f\nrows_low_bandwidth=%zu\n"
				   "contention_retries=%ld\nrows_measured_again=%zu\nrows_measured_again_written=%zu\n",
				   100.0 * (1.0 - PERFDB_PROBE_TOLERANCE),
				   r->probe_quiet_gbs > 0 ? "this machine's quiet figure" : "the run's median",
				   r->probe_readings, r->probe_none, r->probe_quiet_gbs, r->probe_median_gbs, r->nlow,
				   o->retries, r->st.rows_again, r->st.rows_again_written);
	if (o->sequence)
		perfdb_strbuf_addf(&b, "sequence_trace=%s\nsequence_steps=%zu\nsequence_unplaced=%zu\n"
				   "rows_in_sequence=%zu\nsequence_passes=%zu\nsequence_passes_dropped=%zu\n"
				   "sequence_passes_low_bandwidth=%zu\n", o->sequence_trace ? o->sequence_trace : "?",
				   o->sequence->n, o->sequence->unplaced, r->in_sequence, r->passes,
				   r->passes_dropped, r->passes_low);
	for (size_t i = 0; i < sizeof(inherited) / sizeof(inherited[0]); i++) {
		const char *v = getenv(inherited[i]);
		perfdb_strbuf_addf(&b, "env.%s=%s\n", inherited[i], v ? v : "(unset)");
	}
	if (!b.buf)
		return nomem(err);
	int rc = perfdb_file_write_atomic(r->env_path, b.buf, b.len, err);
	perfdb_strbuf_release(&b);
	return rc;
}

static void rm_tmp(struct trun *x)
{
	if (!x->tmp[0])
		return;
	char p[4200];
	snprintf(p, sizeof(p), "%s/request.json", x->tmp);
	unlink(p);
	snprintf(p, sizeof(p), "%s/answer.json", x->tmp);
	unlink(p);
	rmdir(x->tmp);
}

/*
 * The torch probe's quiet figure: the highest of the last runs' medians.
 * Not their median, as for the native replay's row figure: this VM's slow
 * states last minutes and can hold several runs in a row, and a median of
 * slow runs would hold later runs to the slow state.  Each run's figure is
 * the median of all its readings, so one lucky reading does not set it;
 * every run records its own, so a machine that has become slower for good
 * is followed once the older runs have rolled out of the last
 * PERFDB_QUIET_KEEP.
 */
static double quiet_torch_figure(const struct perfdb_quiet *q)
{
	double m = 0;
	for (size_t i = 0; i < q->ntorch; i++)
		m = q->torch_gbs[i] > m ? q->torch_gbs[i] : m;
	return m;
}

static int run_replay(struct trun *x, struct perfdb_torch_run *r, struct perfdb_err *err)
{
	const struct perfdb_torch_opts *o = x->o;
	const char *py = python_of(o);
	char *check[] = { (char *)py, "-c", "import torch", NULL };
	int st = run_child(check, 120, 1);
	if (st != 0)
		return perfdb_err_set(err, PERFDB_ENOENT, "the torch backend needs PyTorch for %s: "
				      "apt-get install python3-torch (Debian), or set PERFDB_TORCH_PYTHON "
				      "to an interpreter that has it", py);
	char *script = perfdb_data_path("torch_replay.py");
	if (!script)
		return perfdb_err_set(err, PERFDB_ENOENT, "torch_replay.py not found (set PERFDB_DATA_DIR "
				      "to the directory that holds perfdb's data files)");
	snprintf(x->tmp, sizeof(x->tmp), "%s/perfdb-torch-XXXXXX", perfdb_spill_dir(NULL));
	int rc = 0;
	if (!mkdtemp(x->tmp)) {
		rc = perfdb_err_errno(err, errno, "cannot create a directory under '%s'", perfdb_spill_dir(NULL));
		x->tmp[0] = '\0';
	}
	char req[4200], ans[4200];
	snprintf(req, sizeof(req), "%s/request.json", x->tmp);
	snprintf(ans, sizeof(ans), "%s/answer.json", x->tmp);
	if (rc == 0) {
		json_t *j = json_pack("{s:I, s:I, s:f, s:O}", "threads", (json_int_t)o->threads,
				      "repeat", (json_int_t)o->repeat, "budget_s", o->budget, "rows", x->rows);
		json_t *seq = NULL;
		/* the bandwidth probe, perfdb's own replay's rule and switch, and
		 * this machine's quiet figure for it (0: none yet) */
		struct perfdb_quiet q;
		perfdb_quiet_load(&q);
		r->probe_quiet_gbs = quiet_torch_figure(&q);
		json_t *probe = !probe_runs() ? NULL :
			json_pack("{s:f, s:I, s:f}", "tolerance", PERFDB_PROBE_TOLERANCE, "retries",
				  (json_int_t)o->retries, "quiet_gbs", r->probe_quiet_gbs);
		if (!j) {
			json_decref(probe);
			rc = nomem(err);
		} else if (probe_runs() && (!probe || json_object_set_new(j, "probe", probe) < 0)) {
			rc = nomem(err);
		}
		else if (o->sequence && (rc = sequence_json(x, &seq, err)) == 0 &&
			 json_object_set_new(j, "sequence", seq) < 0)
			rc = nomem(err);
		if (rc == 0)
			rc = json_dump_file(j, req, 0) < 0 ?
			perfdb_err_set(err, PERFDB_EIO, "cannot write the torch replay's request '%s'", req) : 0;
		json_decref(j);
	}
	if (rc == 0) {
		double limit = 60.0 + (double)x->n * (4.0 * o->budget + o->row_timeout);
		char *argv[] = { (char *)py, script, req, ans, NULL };
		st = run_child(argv, limit, 0);
		if (st == -1)
			rc = perfdb_err_set(err, PERFDB_EIO, "the torch replay ran past %.0f s and was killed", limit);
		else if (st != 0)
			rc = perfdb_err_set(err, PERFDB_EIO, "the torch replay (%s %s) exited with %d", py, script, st);
	}
	if (rc == 0)
		rc = read_answers(x, ans, r, err);
	free(script);
	return rc;
}

int perfdb_torch_microbench(const struct perfdb_torch_opts *o, struct perfdb_torch_run *r,
			    struct perfdb_err *err)
{
	memset(r, 0, sizeof(*r));
	struct trun x = { .o = o, .rows = json_array() };
	if (!x.rows)
		return nomem(err);
	int rc = perfdb_is_dir(o->dbdir) ? 0 :
		perfdb_err_set(err, PERFDB_ENOENT, "database directory not found: '%s'", o->dbdir);
	const struct perfdb_opseq *sq = o->sequence;
	if (rc == 0 && sq && !(x.steps = malloc((sq->n + 1) * sizeof(*x.steps))))
		rc = nomem(err);
	if (rc == 0 && sq)
		key_sort(sq->v, step_key, x.steps, sq->n);
	if (rc == 0)
		rc = collect(&x, err);
	r->rows = x.ntimed;
	if (rc == 0 && x.ntimed)
		rc = run_replay(&x, r, err);
	if (rc == 0 && !o->ops)
		rc = perfdb_status_unreplayed(o->dbdir, &r->st, err);
	if (rc == 0)
		rc = perfdb_report_dir_prepare(o->dbdir, err);
	if (rc == 0) {
		perfdb_report_timestamp(r->ts, sizeof(r->ts));
		snprintf(r->status_path, sizeof(r->status_path), "%s/reports/run_all_op_status_%s.json",
			 o->dbdir, r->ts);
		snprintf(r->env_path, sizeof(r->env_path), "%s/reports/microbench_env_%s.txt", o->dbdir, r->ts);
		/* what happened to every timed row; a torch run skips none */
		r->st.has_rows = 1;
		r->st.rows_measured = r->ok;
		r->st.rows_failed = r->failed;
		r->st.rows_contended = r->contended;
		rc = perfdb_status_write(r->status_path, &r->st, err);
	}
	if (rc == 0)
		rc = write_env(o, r, err);
	/* every run's median reading is kept (quiet_torch_figure says why) */
	if (rc == 0 && x.ntimed && r->probe_median_gbs > 0 && probe_runs()) {
		struct perfdb_err ignored;
		(void)perfdb_quiet_note(PERFDB_QUIET_TORCH, r->probe_median_gbs, &ignored);
	}
	rm_tmp(&x);
	for (size_t i = 0; i < x.n; i++) {
		free(x.v[i].table);
		for (int b = 0; b < PERFDB_SCHEMA_NBASE; b++)
			free(x.v[i].base[b]);
	}
	free(x.v);
	free(x.steps);
	json_decref(x.rows);
	return rc;
}
