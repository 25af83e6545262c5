/*
 * CPUs this process may use (include/perfdb/cpus.h): the affinity mask and
 * the cgroup CPU quota, v2 and v1.
 */
#include "perfdb/cpus.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The first line of a small file, without its newline; 0, or -1 when unreadable. */
static int read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char *l = fgets(buf, (int)n, f);
	fclose(f);
	if (!l)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* ceil(quota / period) in CPUs, 0 for none or nonsense. */
static int cpus_of(long long quota, long long period)
{
	if (quota <= 0 || period <= 0)
		return 0;
	long long c = (quota + period - 1) / period;
	return c > INT_MAX ? INT_MAX : (int)c;
}

/* v2: the quota in dir/cpu.max, 0 for none. */
static int v2_limit(const char *dir)
{
	char p[PATH_MAX + 16], l[128];
	snprintf(p, sizeof(p), "%s/cpu.max", dir);
	long long q, per;
	if (read_line(p, l, sizeof(l)) < 0 || sscanf(l, "%lld %lld", &q, &per) != 2)
		return 0;   /* absent, or "max <period>" */
	return cpus_of(q, per);
}

/* v1: the quota in dir/cpu.cfs_quota_us and cpu.cfs_period_us, 0 for none. */
static int v1_limit(const char *dir)
{
	char p[PATH_MAX + 32], l[64];
	long long q, per;
	snprintf(p, sizeof(p), "%s/cpu.cfs_quota_us", dir);
	if (read_line(p, l, sizeof(l)) < 0 || sscanf(l, "%lld", &q) != 1)
		return 0;
	snprintf(p, sizeof(p), "%s/cpu.cfs_period_us", dir);
	if (read_line(p, l, sizeof(l)) < 0 || sscanf(l, "%lld", &per) != 1)
		return 0;
	return cpus_of(q, per);
}

static int tighter(int a, int b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

/*
 * The tightest quota from mount/path up to mount itself; the mount alone
 * when mount/path does not exist (a container that sees the host's path).
 */
static int walk(const char *mount, const char *path, int (*limit)(const char *dir))
{
	char d[PATH_MAX];
	struct stat st;
	if (stat(mount, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (snprintf(d, sizeof(d), "%s%s", mount, path) >= (int)sizeof(d) || stat(d, &st) < 0)
		return limit(mount);
	size_t base = strlen(mount);
	int best = 0;
	for (;;) {
		best = tighter(best, limit(d));
		char *slash = strrchr(d + base, '/');
		if (!slash)
			break;
		*slash = '\0';   /* one level up; the mount itself last */
	}
	return best;
}

int perfdb_cgroup_cpu_limit(const char *root)
{
	char p[PATH_MAX], line[4096];
	snprintf(p, sizeof(p), "%s/proc/self/cgroup", root);
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	int best = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		/* hierarchy-ID:controller-list:path */
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *ctrl = c1 + 1, *path = c2 + 1;
		if (strcmp(path, "/") == 0)
			path = "";
		if (!*ctrl) {   /* v2: the unified hierarchy */
			for (int m = 0; m < 2; m++) {
				snprintf(p, sizeof(p), "%s/sys/fs/cgroup%s", root, m ? "/unified" : "");
				best = tighter(best, walk(p, path, v2_limit));
			}
			continue;
		}
		char list[256];
		snprintf(list, sizeof(list), ",%s,", ctrl);
		if (!strstr(list, ",cpu,"))
			continue;
		for (int m = 0; m < 2; m++) {
			snprintf(p, sizeof(p), "%s/sys/fs/cgroup/%s", root, m ? "cpu" : "cpu,cpuacct");
			best = tighter(best, walk(p, path, v1_limit));
		}
	}
	fclose(f);
	return best;
}

int perfdb_cpus_usable(const char *root)
{
	int n = 0;
	/* a mask of the kernel's size: machines with more than CPU_SETSIZE CPUs need a larger one */
	for (int ncpu = CPU_SETSIZE; ncpu <= (1 << 20) && !n; ncpu *= 2) {
		cpu_set_t *set = CPU_ALLOC((size_t)ncpu);
		if (!set)
			break;
		size_t sz = CPU_ALLOC_SIZE((size_t)ncpu);
		if (sched_getaffinity(0, sz, set) == 0)
			n = CPU_COUNT_S(sz, set);
		CPU_FREE(set);
	}
	if (n < 1)
		n = 1;
	int q = perfdb_cgroup_cpu_limit(root ? root : "");
	return q > 0 && q < n ? q : n;
}
