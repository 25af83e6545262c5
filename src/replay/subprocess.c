/*
 * Subprocess mode of the replay engine (docs/spec/replay.md Decision 7,
 * engine.h "subprocess"): a table is replayed in a forked child that
 * journals its rows, so an operator that crashes or hangs takes only its
 * own table down.  The parent is the watchdog (it kills a child past the
 * table's limit and forwards a stop), then collects the table's rows from
 * the journal; rows the child did not journal fail with why it ended.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay/engine_internal.h"

int subprocess_run_table(struct engine_run_ctx *x, const char *op, const struct perfdb_table *t,
			 engine_table_fn *run, struct perfdb_err *err)
{
	const struct perfdb_engine_opts *o = x->o;
	size_t ord0 = x->ordinal;
	double limit = o->op_timeout_s > 0 ? o->op_timeout_s : o->timeout_s * (double)t->nrows + 30.0;
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return perfdb_err_errno(err, errno, "cannot fork the process for %s", op);
	if (pid == 0) {
		/* the operator dies with its watchdog: a killed perfdb leaves no
		 * child measuring on, unwatched (and a parent gone before the
		 * prctl took effect is caught by getppid) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(1);
		if (x->hooks->crash_op && strcmp(x->hooks->crash_op, op) == 0) {
			struct rlimit nocore = { 0, 0 };
			setrlimit(RLIMIT_CORE, &nocore);
			signal(SIGSEGV, SIG_DFL);
			raise(SIGSEGV);   /* test hook: the operator crashes */
		}
		struct perfdb_engine_result cres;
		memset(&cres, 0, sizeof(cres));
		struct engine_run_ctx cx = *x;
		cx.res = &cres;
		struct perfdb_err e;
		perfdb_err_clear(&e);
		int rc = run(&cx, op, t, ENGINE_PASS_CHILD, NULL, &e);
		_exit(rc < 0 ? 1 : 0);
	}
	double t0 = engine_now_s(CLOCK_MONOTONIC);
	int st = 0, killed = 0, forwarded = 0;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return perfdb_err_errno(err, errno, "cannot wait for the process of %s", op);
		if (!forwarded && o->stop && *o->stop) {
			kill(pid, SIGTERM);   /* the child ends after its current row */
			forwarded = 1;
		}
		if (!killed && engine_now_s(CLOCK_MONOTONIC) - t0 > limit) {
			kill(pid, SIGKILL);
			killed = 1;
		}
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	char why[200] = "";
	if (killed)
		snprintf(why, sizeof(why), "operator process killed by the watchdog after %g s", limit);
	else if (WIFSIGNALED(st))
		snprintf(why, sizeof(why), "operator process crashed: signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
		snprintf(why, sizeof(why), "operator process exited with %d", WEXITSTATUS(st));
	journal_release(x->jr);
	int rc = journal_load(x->jpath, x->jr);
	if (rc < 0)
		return perfdb_err_set(err, PERFDB_ENOMEM, "out of memory");
	x->ordinal = ord0;   /* the same rows again, now from the journal */
	return run(x, op, t, ENGINE_PASS_COLLECT, why[0] ? why : NULL, err);
}
