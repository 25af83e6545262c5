/*
 * The scheduler's accounts of this process and machine (perfdb/sched.h):
 * parsers of the /proc files, one live reading, and the judgement of a
 * block of timed work between two readings.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfdb/preflight.h"
#include "perfdb/sched.h"

int perfdb_sched_parse_schedstat(const char *text, uint64_t *run_ns, uint64_t *wait_ns)
{
	unsigned long long run, wait, slices;
	if (sscanf(text, "%llu %llu %llu", &run, &wait, &slices) != 3)
		return -PERFDB_EPARSE;
	*run_ns = run;
	*wait_ns = wait;
	return 0;
}

/* The unsigned value after "key" and any of ": \t" at the start of a line. */
static int line_value(const char *text, const char *key, uint64_t *out)
{
	size_t k = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, k) != 0)
			continue;
		const char *v = p + k;
		if (*v != ':' && *v != ' ' && *v != '\t')
			continue;   /* a longer key that starts the same */
		v += strspn(v, ": \t");
		char *end;
		errno = 0;
		unsigned long long x = strtoull(v, &end, 10);
		if (end == v || errno)
			return -PERFDB_EPARSE;
		*out = x;
		return 0;
	}
	return -PERFDB_ENOENT;
}

int perfdb_sched_parse_status(const char *text, uint64_t *nivcsw)
{
	return line_value(text, "nonvoluntary_ctxt_switches", nivcsw) < 0 ? -PERFDB_EPARSE : 0;
}

int perfdb_sched_parse_state(const char *text, char *state)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "State:", 6) != 0)
			continue;
		p += 6;
		p += strspn(p, " \t");
		if (*p < 'A' || *p > 'Z')
			return -PERFDB_EPARSE;
		*state = *p;
		return 0;
	}
	return -PERFDB_EPARSE;
}

int perfdb_sched_parse_loadavg(const char *text, uint32_t *running)
{
	double l1, l5, l15;
	unsigned long run, all;
	if (sscanf(text, "%lf %lf %lf %lu/%lu", &l1, &l5, &l15, &run, &all) != 5 || run > UINT32_MAX)
		return -PERFDB_EPARSE;
	*running = (uint32_t)run;
	return 0;
}

int perfdb_sched_parse_migrations(const char *text, uint64_t *migrations)
{
	return line_value(text, "se.nr_migrations", migrations);
}

int perfdb_sched_parse_stat(const char *text, uint64_t *steal, uint64_t *total)
{
	struct perfdb_cpu_ticks t;   /* the one reading of /proc/stat's cpu line (preflight.c) */
	PERFDB_TRY(perfdb_cpu_ticks_parse(text, &t));
	*steal = t.steal;
	*total = t.total;
	return 0;
}

/* The whole of a small /proc file into buf (NUL-terminated); -1 if it cannot be read. */
static ssize_t slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	ssize_t got;
	while (n + 1 < cap && (got = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)got;
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

/* One thread's accounts added to r; 0, or -1 when the thread has gone. */
static int read_task(const char *tid, struct perfdb_sched_reading *r)
{
	char path[320], buf[8192];
	uint64_t run, wait, nivcsw, mig;
	char state;
	snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", tid);
	if (slurp(path, buf, sizeof(buf)) < 0 || perfdb_sched_parse_schedstat(buf, &run, &wait) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	if (slurp(path, buf, sizeof(buf)) < 0 || perfdb_sched_parse_status(buf, &nivcsw) < 0)
		return -1;
	r->wait_ns += wait;
	r->nivcsw += nivcsw;
	if (perfdb_sched_parse_state(buf, &state) == 0 && state == 'R')
		r->running_ours++;
	snprintf(path, sizeof(path), "/proc/self/task/%s/sched", tid);
	if (slurp(path, buf, sizeof(buf)) >= 0 && perfdb_sched_parse_migrations(buf, &mig) == 0) {
		r->migrations += mig;
		r->has_migrations = true;
	}
	r->threads++;
	return 0;
}

int perfdb_sched_read(struct perfdb_sched_reading *r, struct perfdb_err *err)
{
	memset(r, 0, sizeof(*r));
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return perfdb_err_errno(err, errno, "cannot list /proc/self/task");
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			read_task(e->d_name, r);
	closedir(d);
	char buf[1024];
	if (slurp("/proc/stat", buf, sizeof(buf)) < 0 ||
	    perfdb_sched_parse_stat(buf, &r->steal_ticks, &r->total_ticks) < 0)
		return perfdb_err_set(err, PERFDB_EIO, "cannot read the cpu line of /proc/stat");
	uint32_t running;
	if (slurp("/proc/loadavg", buf, sizeof(buf)) >= 0 && perfdb_sched_parse_loadavg(buf, &running) == 0) {
		r->running_all = running;
		r->has_running = true;
	}
	if (!r->threads)
		return perfdb_err_set(err, PERFDB_EIO, "no thread's schedstat could be read "
				      "(/proc/self/task/*/schedstat: a kernel without schedstats?)");
	return 0;
}

/*
 * A thread's CPU-time clock, as glibc's pthread_getcpuclockid builds it
 * from the thread id (the kernel's per-thread CPUCLOCK_SCHED clock).
 * Unlike schedstat, whose count of a thread running on another CPU moves
 * only at that CPU's scheduler tick (4 ms here), reading this clock brings
 * the running thread's count up to date: a 1 ms window sees a spinner.
 */
static clockid_t thread_clock(long tid)
{
	return (clockid_t)((~(unsigned long)tid << 3) | 6);
}

int perfdb_sched_others_run_ns(uint64_t *ns, size_t *nothers)
{
	*ns = 0;
	*nothers = 0;
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	long me = (long)gettid();
	struct dirent *e;
	while ((e = readdir(d))) {
		struct timespec ts;
		long tid = strtol(e->d_name, NULL, 10);
		if (tid <= 0 || tid == me || clock_gettime(thread_clock(tid), &ts) != 0)
			continue;   /* ".", "..", the caller, or gone since the listing */
		*ns += (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		(*nothers)++;
	}
	closedir(d);
	return 0;
}

/* b - a, 0 when a thread that left took its counts with it. */
static uint64_t delta(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

/* Other processes' tasks running or runnable at reading r (0 when unread). */
static uint32_t others_at(const struct perfdb_sched_reading *r)
{
	return r->has_running && r->running_all > r->running_ours ? r->running_all - r->running_ours : 0;
}

void perfdb_sched_judge(const struct perfdb_sched_reading *a, const struct perfdb_sched_reading *b,
			double wall_s, int free_cpus, struct perfdb_sched_block *out)
{
	memset(out, 0, sizeof(*out));
	out->wall_s = wall_s;
	out->wait_ns = delta(a->wait_ns, b->wait_ns);
	out->nivcsw = delta(a->nivcsw, b->nivcsw);
	out->migrations = delta(a->migrations, b->migrations);
	uint64_t ticks = delta(a->total_ticks, b->total_ticks);
	out->steal_fraction = ticks ? (double)delta(a->steal_ticks, b->steal_ticks) / (double)ticks : 0;
	uint32_t oa = others_at(a), ob = others_at(b);
	out->others = oa > ob ? oa : ob;
	double wall_ns = wall_s > 0 ? wall_s * 1e9 : 0;
	if (out->wait_ns > PERFDB_SCHED_WAIT_MIN_NS &&
	    (double)out->wait_ns > PERFDB_SCHED_WAIT_FRACTION * wall_ns) {
		out->contaminated = true;
		out->why = "run-queue wait";
	} else if (out->steal_fraction > PERFDB_SCHED_STEAL_FRACTION) {
		out->contaminated = true;
		out->why = "steal";
	} else if (free_cpus >= 0 && out->others > (uint32_t)free_cpus) {
		out->contaminated = true;
		out->why = "other processes";
	}
}
