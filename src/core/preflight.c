/*
 * The preflight (perfdb/preflight.h): how busy the machine is before a
 * measuring run, judged against fixed thresholds and this machine's quiet
 * bandwidth figure (quiet.c).  docs/measuring.md "The preflight" says why
 * these thresholds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "perfdb/fsio.h"
#include "perfdb/preflight.h"
#include "perfdb/probe.h"

int perfdb_cpu_ticks_parse(const char *text, struct perfdb_cpu_ticks *t)
{
	memset(t, 0, sizeof(*t));
	const char *p = strncmp(text, "cpu ", 4) == 0 ? text : strstr(text, "\ncpu ");
	if (!p)
		return -PERFDB_EPARSE;
	p += *p == '\n' ? 5 : 4;
	/* user nice system idle iowait irq softirq steal (guest is inside user) */
	uint64_t v[8] = { 0 };
	int n = 0;
	while (n < 8) {
		char *end;
		errno = 0;
		unsigned long long x = strtoull(p, &end, 10);
		if (end == p || errno)
			break;
		v[n++] = x;
		p = end;
	}
	if (n < 4)
		return -PERFDB_EPARSE;
	t->steal = v[7];
	t->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	t->total = t->busy + v[3] + v[4];
	return 0;
}

static int read_ticks(struct perfdb_cpu_ticks *t, struct perfdb_err *err)
{
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	int rc = perfdb_file_read_all("/proc/stat", &b, err);
	if (rc == 0 && perfdb_cpu_ticks_parse(b.buf ? b.buf : "", t) < 0)
		rc = perfdb_err_set(err, PERFDB_EIO, "/proc/stat: no cpu line");
	perfdb_strbuf_release(&b);
	return rc;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double own_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec * 1e-6;
}

void perfdb_preflight_judge(struct perfdb_preflight *pf)
{
	pf->quiet = true;
	pf->why[0] = '\0';
	size_t w = 0;
	if (pf->other_cpus >= PERFDB_PREFLIGHT_OTHER_CPUS) {
		w += (size_t)snprintf(pf->why + w, sizeof(pf->why) - w, "other processes used %.2f of %d CPUs",
				      pf->other_cpus, pf->ncpus);
		pf->quiet = false;
	}
	if (pf->steal >= PERFDB_PREFLIGHT_STEAL && w < sizeof(pf->why)) {
		w += (size_t)snprintf(pf->why + w, sizeof(pf->why) - w, "%sthe VM lost %.1f %% of its time to steal",
				      w ? "; " : "", 100.0 * pf->steal);
		pf->quiet = false;
	}
	if (pf->probe_gbs > 0 && pf->quiet_gbs > 0 && pf->probe_gbs < (1.0 - PERFDB_PROBE_TOLERANCE) * pf->quiet_gbs &&
	    w < sizeof(pf->why)) {
		snprintf(pf->why + w, sizeof(pf->why) - w,
			 "%smemory bandwidth %.1f GB/s is %.0f %% of this machine's quiet %.1f GB/s", w ? "; " : "",
			 pf->probe_gbs, 100.0 * pf->probe_gbs / pf->quiet_gbs, pf->quiet_gbs);
		pf->quiet = false;
	}
}

void perfdb_preflight_line(const struct perfdb_preflight *pf, char *buf, size_t cap)
{
	size_t w = (size_t)snprintf(buf, cap, "other processes %.2f of %d CPUs, steal %.1f %%", pf->other_cpus,
				    pf->ncpus, 100.0 * pf->steal);
	if (w < cap && pf->probe_gbs > 0) {
		if (pf->quiet_gbs > 0)
			w += (size_t)snprintf(buf + w, cap - w, ", memory %.1f GB/s (%.0f %% of this machine's quiet %.1f)",
					      pf->probe_gbs, 100.0 * pf->probe_gbs / pf->quiet_gbs, pf->quiet_gbs);
		else
			w += (size_t)snprintf(buf + w, cap - w, ", memory %.1f GB/s (no quiet figure yet)",
					      pf->probe_gbs);
	}
	if (w < cap)
		snprintf(buf + w, cap - w, ": %s", pf->quiet ? "quiet" : "busy");
}

int perfdb_preflight_run(bool probe, struct perfdb_preflight *pf, struct perfdb_err *err)
{
	memset(pf, 0, sizeof(*pf));
	long nc = sysconf(_SC_NPROCESSORS_ONLN), hz = sysconf(_SC_CLK_TCK);
	pf->ncpus = nc > 0 ? (int)nc : 1;
	double tick = hz > 0 ? 1.0 / (double)hz : 0.01;
	struct perfdb_cpu_ticks a, b;
	PERFDB_TRY(read_ticks(&a, err));
	double t0 = now_s(), c0 = own_cpu_s();
	const struct timespec nap = { 0, (long)(PERFDB_PREFLIGHT_WINDOW_S * 1e9) };
	nanosleep(&nap, NULL);
	PERFDB_TRY(read_ticks(&b, err));
	pf->window_s = now_s() - t0;
	double busy = (double)(b.busy - a.busy) * tick - (own_cpu_s() - c0);
	/* /proc/stat counts ticks: each CPU's count may be one off */
	pf->other_cpus = busy > tick * (double)(pf->ncpus + 1) && pf->window_s > 0 ? busy / pf->window_s : 0;
	pf->steal = b.total > a.total ? (double)(b.steal - a.steal) / (double)(b.total - a.total) : 0;
	struct perfdb_quiet q;
	perfdb_quiet_load(&q);
	pf->quiet_gbs = perfdb_quiet_figure(q.preflight_gbs, q.npreflight);
	pf->row_quiet_gbs = perfdb_quiet_figure(q.row_gbs, q.nrow);
	if (probe) {
		struct perfdb_probe p;
		PERFDB_TRY(perfdb_probe_init(&p, PERFDB_PROBE_BYTES, err));
		for (int i = 0; i < 3; i++) {
			double g = perfdb_probe_gbs(&p);
			if (g > pf->probe_gbs)
				pf->probe_gbs = g;
		}
		perfdb_probe_release(&p);
	}
	perfdb_preflight_judge(pf);
	/* the CPUs were quiet: the bandwidth now is a quiet reading (kept or not, the run goes on) */
	if (pf->other_cpus < PERFDB_PREFLIGHT_OTHER_CPUS && pf->steal < PERFDB_PREFLIGHT_STEAL && pf->probe_gbs > 0) {
		struct perfdb_err ignored;
		(void)perfdb_quiet_note(PERFDB_QUIET_PREFLIGHT, pf->probe_gbs, &ignored);
	}
	return 0;
}
