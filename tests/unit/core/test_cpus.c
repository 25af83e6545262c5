/*
 * The default of --threads (src/core/cpus.c): cgroup CPU quotas read from
 * fake trees standing for / (v2 cpu.max, v1 cfs quota and period, nested
 * cgroups, a container that sees the host's path), and the usable count
 * against the affinity mask of this process.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfdb/cpus.h"
#include "perfdb/err.h"
#include "perfdb/fsio.h"

static char root[64];

/* Write text to root/rel, making its directories. */
static void put(const char *rel, const char *text)
{
	char p[512], d[512];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(d, sizeof(d), "%s", p);
	*strrchr(d, '/') = '\0';
	struct perfdb_err err;
	perfdb_err_clear(&err);
	assert_int_equal(perfdb_mkdir_p(d, &err), 0);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/perfdb-test-cpus-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_v2(void **state)
{
	(void)state;
	put("proc/self/cgroup", "0::/a/b\n");
	put("sys/fs/cgroup/a/b/cpu.max", "max 100000\n");
	assert_int_equal(perfdb_cgroup_cpu_limit(root), 0);          /* no quota anywhere */
	put("sys/fs/cgroup/a/cpu.max", "250000 100000\n");
	assert_int_equal(perfdb_cgroup_cpu_limit(root), 3);          /* 2.5 CPUs, rounded up, from the parent */
	put("sys/fs/cgroup/a/b/cpu.max", "50000 100000\n");
	assert_int_equal(perfdb_cgroup_cpu_limit(root), 1);          /* the tightest wins */
	/* a container: its own cgroup is the mount's root, the path names the host's */
	put("proc/self/cgroup", "0::/docker/xyz\n");
	put("sys/fs/cgroup/cpu.max", "400000 100000\n");
	assert_int_equal(perfdb_cgroup_cpu_limit(root), 4);
}

static void test_v1(void **state)
{
	(void)state;
	put("proc/self/cgroup", "4:memory:/m\n3:cpu,cpuacct:/job\n0::/\n");
	put("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "-1\n");
	put("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
	assert_int_equal(perfdb_cgroup_cpu_limit(root), 0);
	put("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "600000\n");
	assert_int_equal(perfdb_cgroup_cpu_limit(root), 6);
	/* the controller mounted alone, a period other than 100 ms */
	put("proc/self/cgroup", "2:cpu:/j2\n");
	put("sys/fs/cgroup/cpu/j2/cpu.cfs_quota_us", "150000\n");
	put("sys/fs/cgroup/cpu/j2/cpu.cfs_period_us", "50000\n");
	assert_int_equal(perfdb_cgroup_cpu_limit(root), 3);
	/* no cgroup file at all: no quota */
	assert_int_equal(perfdb_cgroup_cpu_limit("/nonexistent-perfdb-root"), 0);
}

/* Affinity alone where no quota applies, the quota where it is tighter. */
static void test_usable(void **state)
{
	(void)state;
	cpu_set_t set;
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	int mask = CPU_COUNT(&set);
	assert_int_equal(perfdb_cpus_usable("/nonexistent-perfdb-root"), mask);
	put("proc/self/cgroup", "0::/q\n");
	put("sys/fs/cgroup/q/cpu.max", "100000 100000\n");
	assert_int_equal(perfdb_cpus_usable(root), 1);
	put("sys/fs/cgroup/q/cpu.max", "100000000 100000\n");       /* 1000 CPUs of quota: the mask */
	assert_int_equal(perfdb_cpus_usable(root), mask);
	/* held to one CPU by the mask itself */
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &set);
	cpu_set_t old;
	assert_int_equal(sched_getaffinity(0, sizeof(old), &old), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
	assert_int_equal(perfdb_cpus_usable("/nonexistent-perfdb-root"), 1);
	assert_int_equal(sched_setaffinity(0, sizeof(old), &old), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_v2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_usable, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
