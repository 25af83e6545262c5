/*
 * peak_rss: run a command, then report its wall time and peak resident set
 * size (bench/parse.sh).  No dependency on GNU time: fork, exec, and wait4(),
 * whose rusage carries ru_maxrss of the child (and of any descendants it
 * waited for), in KiB on Linux.  The peak survives exec, so wrappers that
 * exec the real program (taskset) are measured with it.
 *
 * usage: peak_rss [-o FILE] COMMAND [ARG...]
 * output (one line, on stderr or appended to FILE):
 *   seconds=<wall> cpu=<user+system seconds> maxrss_kb=<KiB> status=<exit status>
 * cpu / seconds > 1 means the command ran on more than one core.  The exit
 * status is the command's (128 + signal if it was killed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const char *report = NULL;
	int first = 1;
	if (argc > 2 && strcmp(argv[1], "-o") == 0) {
		report = argv[2];
		first = 3;
	}
	if (first >= argc) {
		fprintf(stderr, "usage: peak_rss [-o FILE] COMMAND [ARG...]\n");
		return 2;
	}
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0) {
		perror("peak_rss: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[first], argv + first);
		fprintf(stderr, "peak_rss: %s: %s\n", argv[first], strerror(errno));
		_exit(127);
	}
	int st;
	struct rusage ru;
	while (wait4(pid, &st, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("peak_rss: wait4");
			return 1;
		}
	}
	double secs = now() - t0;
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;

	FILE *f = stderr;
	if (report && !(f = fopen(report, "a"))) {
		perror(report);
		return 1;
	}
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	fprintf(f, "seconds=%.6f cpu=%.6f maxrss_kb=%ld status=%d\n", secs, cpu,
		(long)ru.ru_maxrss, rc);
	if (f != stderr && fclose(f) != 0) {
		perror(report);
		return 1;
	}
	return rc;
}
