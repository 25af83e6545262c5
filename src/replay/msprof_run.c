/*
 * The msprof microbench stage (msprof_run.h; docs/spec/replay.md §1 steps
 * 3-7 and 9).
 *
 * perfdb runs `msprof --output=<db>/msprof_run_XXXXXX sh -c "<replay
 * command>"`; the replay command learns what to replay from its
 * environment: PERFDB_OPS (comma-separated, empty = all), PERFDB_DATABASE
 * (the database directory), PERFDB_UPDATE_MODE, PERFDB_EP_SIZE and
 * PERFDB_STATUS_FILE (where it may write the run_all_op_status.json of the
 * reference, read for the report), and the reference's
 * --dispatch-ffn-combine-* arguments as PERFDB_DFC_*; `{ops}` in the
 * command is replaced by the space-separated operator list.
 */
#include "replay/msprof_run.h"

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay/replay.h"
#include "perfdb/schema.h"
#include "perfdb/table.h"

/* Ops that need the vLLM-Ascend custom OPP (docs/spec/replay.md §1 step 5). */
static const char *const custom_opp_ops[] = {
	"AddRmsNormBias", "DispatchFFNCombine", "KvRmsNormRopeCache", "RINGMLAPrefillBF16Kernel",
	"split_qkv_rmsnorm_rope_kernel",
};

int perfdb_msprof_selected(const char *const *ops, size_t nops, const char *op)
{
	int sel = !nops;
	for (size_t k = 0; k < nops; k++)
		sel |= strcmp(ops[k], op) == 0;
	return sel;
}

int perfdb_msprof_all_usable(const char *dbdir, const char *const *ops, size_t nops)
{
	struct perfdb_err err;
	int found = 0, usable = 1;
	for (size_t i = 0; i < perfdb_replay_nops && usable; i++) {
		const char *op = perfdb_replay_ops[i];
		if (!perfdb_msprof_selected(ops, nops, op))
			continue;
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s.csv", dbdir, op);
		if (access(p, R_OK) != 0)
			continue;
		struct perfdb_table t;
		perfdb_table_init(&t);
		if (perfdb_table_load(&t, p, &err) < 0 || t.nrows == 0) {
			usable = 0;
		} else {
			for (size_t r = 0; r < t.nrows && usable; r++)
				usable = perfdb_schema_usable_duration(
					perfdb_table_get(&t, r, perfdb_table_col(&t, PERFDB_COL_MB_DUR)),
					perfdb_table_get(&t, r, perfdb_table_col(&t, PERFDB_COL_PROF_AVG)), false, NULL);
			found++;
		}
		perfdb_table_release(&t);
	}
	return found && usable;
}

long perfdb_msprof_visible_npus(void)
{
	long visible = 0;
	const char *vis = getenv("ASCEND_RT_VISIBLE_DEVICES");
	if (vis && *vis)
		for (visible = 1; *vis; vis++)
			visible += *vis == ',';
	return visible;
}

static int blank(const char *v)
{
	if (!v)
		return 1;
	while (*v == ' ' || *v == '\t')
		v++;
	return !*v;
}

int perfdb_msprof_custom_opp_missing(const char *const *ops, size_t nops, struct perfdb_strbuf *need)
{
	perfdb_strbuf_reset(need);
	if (!blank(getenv("ASCEND_CUSTOM_OPP_PATH")) && !blank(getenv("LD_LIBRARY_PATH")))
		return 0;
	for (size_t i = 0; i < sizeof(custom_opp_ops) / sizeof(custom_opp_ops[0]); i++)
		if (perfdb_msprof_selected(ops, nops, custom_opp_ops[i]))
			perfdb_strbuf_addf(need, "%s%s", need->len ? ", " : "", custom_opp_ops[i]);
	return need->len > 0;
}

void perfdb_msprof_expand_command(const char *cmd, const char *ops_spaced, struct perfdb_strbuf *out)
{
	perfdb_strbuf_reset(out);
	for (const char *p = cmd; *p;) {
		if (strncmp(p, "{ops}", 5) == 0) {
			perfdb_strbuf_addstr(out, ops_spaced);
			p += 5;
		} else {
			perfdb_strbuf_addch(out, *p++);
		}
	}
}

static void setenv_long(const char *name, long v)
{
	char b[32];
	snprintf(b, sizeof(b), "%ld", v);
	setenv(name, b, 1);
}

int perfdb_msprof_run(const char *outdir, const char *cmd, const char *ops_csv,
		      const struct perfdb_msprof_env *e)
{
	char out[4200];
	snprintf(out, sizeof(out), "--output=%s", outdir);
	fflush(NULL);
	int pipefd[2];
	if (pipe(pipefd) < 0)
		return -1;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* msprof ends with perfdb (SIGTERM: it may still save its data) */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
			_exit(127);
		close(pipefd[0]);
		char ep[32];
		snprintf(ep, sizeof(ep), "%ld", e->ep);
		setenv("PERFDB_OPS", ops_csv, 1);
		setenv("PERFDB_DATABASE", e->dbdir, 1);
		setenv("PERFDB_UPDATE_MODE", e->mode, 1);
		setenv("PERFDB_EP_SIZE", ep, 1);
		setenv("PERFDB_STATUS_FILE", e->status, 1);
		/* the reference's --dispatch-ffn-combine-* arguments of the DFC script */
		setenv_long("PERFDB_DFC_EP_SIZE", e->ep);
		setenv_long("PERFDB_DFC_NPROC_PER_NODE", e->nproc > 0 ? e->nproc : e->ep);
		setenv_long("PERFDB_DFC_NNODES", e->nnodes);
		setenv_long("PERFDB_DFC_NODE_RANK", e->node_rank);
		setenv("PERFDB_DFC_MASTER_ADDR", e->master_addr, 1);
		if (e->master_port > 0)
			setenv_long("PERFDB_DFC_MASTER_PORT", e->master_port);
		execlp("msprof", "msprof", out, "sh", "-c", cmd, (char *)NULL);
		int code = errno;
		(void)!write(pipefd[1], &code, sizeof(code));
		_exit(127);
	}
	close(pipefd[1]);
	int code = 0;
	ssize_t n = read(pipefd[0], &code, sizeof(code));
	close(pipefd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(code))
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void perfdb_msprof_run_remove(const char *root)
{
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
