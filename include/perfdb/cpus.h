/*
 * How many CPUs this process may use: the default of --threads for the
 * native backends (docs/replay.md "Threads and libraries").
 */
#ifndef PERFDB_CPUS_H
#define PERFDB_CPUS_H

/*
 * The CPUs of this process's affinity mask (sched_getaffinity), held down
 * to its cgroup CPU quota where one is set (perfdb_cgroup_cpu_limit); at
 * least 1.  root: as for perfdb_cgroup_cpu_limit.
 */
int perfdb_cpus_usable(const char *root);

/*
 * The cgroup CPU quota of this process in whole CPUs (rounded up), or 0
 * when none applies: cgroup v2 cpu.max ("<quota> <period>", "max" for
 * none) and cgroup v1 cpu.cfs_quota_us / cpu.cfs_period_us (-1 for none),
 * read at the process's own cgroup (/proc/self/cgroup) and every cgroup
 * above it (the tightest wins), in the usual mount points: /sys/fs/cgroup
 * and /sys/fs/cgroup/unified for v2, /sys/fs/cgroup/cpu,cpuacct and
 * /sys/fs/cgroup/cpu for v1.  Inside a container whose cgroup path is not
 * under the mount (the host's path), the mount's root is the process's.
 * root: "" for this system, or a directory that stands for / (the tests'
 * fake trees).
 */
int perfdb_cgroup_cpu_limit(const char *root);

#endif
