/*
 * A stand-in libascendcl.so for the tests of perfdb comm --backend hccl
 * (tests/hccl/hccl.sh): the ACL runtime calls perfdb makes, on host
 * memory.  "Device" memory is malloc'd and registered, so a host pointer
 * handed where device memory belongs is refused, as on an NPU; events
 * record the host clock (the stand-in's collectives run inside the call).
 * Signatures follow CANN's public ACL reference.  Switches: fake_ascend.h.
 */
#include "fake_ascend.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_RT_FAILURE 507899   /* the code CANN gives an internal runtime failure */

static int inited, device = -1;
static char last_msg[512];
static struct {
	void *p;
	size_t n;
} blocks[64];

static int world_rank(void)
{
	const char *r = getenv("OMPI_COMM_WORLD_RANK");
	return r ? atoi(r) : 0;
}

int fake_ascend_enter(const char *fn, const char *fmt, ...)
{
	const char *trace = getenv("FAKE_ASCEND_TRACE");
	if (trace && *trace) {
		char line[512], detail[384] = "";
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(detail, sizeof(detail), fmt, ap);
		va_end(ap);
		int n = snprintf(line, sizeof(line), "%d %s%s%s\n", world_rank(), fn,
				 detail[0] ? " " : "", detail);
		int fd = open(trace, O_WRONLY | O_APPEND | O_CREAT, 0644);
		if (fd >= 0) {
			if (write(fd, line, (size_t)n) != n)
				perror("fake ascend trace");
			close(fd);
		}
	}
	const char *f = getenv("FAKE_ASCEND_FAIL"), *only = getenv("FAKE_ASCEND_FAIL_RANK");
	const char *after = getenv("FAKE_ASCEND_FAIL_AFTER");
	int fail = f && strcmp(f, fn) == 0 && (!only || atoi(only) == world_rank());
	/* FAKE_ASCEND_FAIL_AFTER=N: the first N calls of that function succeed (a failure
	 * inside the timed loop rather than at its first call) */
	static long calls;
	if (fail && after && calls++ < atol(after))
		fail = 0;
	if (fail)
		snprintf(last_msg, sizeof(last_msg),
			 "EE9999: stand-in failure of %s (FAKE_ASCEND_FAIL)\n"
			 "        Solution: unset FAKE_ASCEND_FAIL\n", fn);
	return fail;
}

int fake_ascend_is_device(const void *p, size_t n)
{
	const char *c = p;
	for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++)
		if (blocks[i].p && c >= (const char *)blocks[i].p &&
		    c + n <= (const char *)blocks[i].p + blocks[i].n)
			return 1;
	return 0;
}

int fake_ascend_device(void)
{
	return device;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int aclInit(const char *config)
{
	if (fake_ascend_enter("aclInit", "%s", config ? config : "NULL"))
		return ACL_ERROR_RT_FAILURE;
	if (inited)
		return 100002;   /* ACL_ERROR_REPEAT_INITIALIZE */
	inited = 1;
	return 0;
}

int aclFinalize(void)
{
	fake_ascend_enter("aclFinalize", "%s", "");
	inited = 0;
	return 0;
}

const char *aclGetRecentErrMsg(void)
{
	return last_msg[0] ? last_msg : NULL;
}

const char *aclrtGetSocName(void)
{
	return "Ascend910B3 (perfdb stand-in)";
}

static uint32_t ndevices(void)
{
	const char *d = getenv("FAKE_ASCEND_DEVICES");
	return d ? (uint32_t)atoi(d) : 8;
}

int aclrtGetDeviceCount(uint32_t *count)
{
	if (fake_ascend_enter("aclrtGetDeviceCount", "%s", "") || !inited)
		return ACL_ERROR_RT_FAILURE;
	*count = ndevices();
	return 0;
}

int aclrtSetDevice(int32_t id)
{
	if (fake_ascend_enter("aclrtSetDevice", "%d", id) || !inited)
		return ACL_ERROR_RT_FAILURE;
	if (id < 0 || (uint32_t)id >= ndevices())
		return ACL_ERROR_INVALID_PARAM;
	device = id;
	return 0;
}

int aclrtResetDevice(int32_t id)
{
	fake_ascend_enter("aclrtResetDevice", "%d", id);
	if (id != device)
		return ACL_ERROR_INVALID_PARAM;
	device = -1;
	return 0;
}

int aclrtMalloc(void **p, size_t n, int policy)
{
	*p = NULL;
	if (fake_ascend_enter("aclrtMalloc", "%zu %d", n, policy) || device < 0)
		return ACL_ERROR_RT_FAILURE;
	if (n == 0)
		return ACL_ERROR_INVALID_PARAM;
	for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++)
		if (!blocks[i].p) {
			if (!(blocks[i].p = malloc(n)))
				return 207001;   /* ACL_ERROR_RT_MEMORY_ALLOCATION */
			blocks[i].n = n;
			*p = blocks[i].p;
			return 0;
		}
	return 207001;
}

int aclrtFree(void *p)
{
	fake_ascend_enter("aclrtFree", "%s", "");
	for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++)
		if (p && blocks[i].p == p) {
			free(p);
			blocks[i].p = NULL;
			return 0;
		}
	return ACL_ERROR_INVALID_PARAM;
}

int aclrtMemcpy(void *dst, size_t dst_max, const void *src, size_t count, int kind)
{
	if (fake_ascend_enter("aclrtMemcpy", "%zu %d", count, kind))
		return ACL_ERROR_RT_FAILURE;
	/* the kinds perfdb uses: host to device (1) and device to host (2) */
	int ok = count <= dst_max &&
		 ((kind == 1 && fake_ascend_is_device(dst, count) && !fake_ascend_is_device(src, count)) ||
		  (kind == 2 && fake_ascend_is_device(src, count) && !fake_ascend_is_device(dst, count)));
	if (!ok)
		return ACL_ERROR_INVALID_PARAM;
	memcpy(dst, src, count);
	return 0;
}

struct stream { int magic; };
struct event { int magic, recorded; double t; };

int aclrtCreateStream(void **s)
{
	if (fake_ascend_enter("aclrtCreateStream", "%s", "") || device < 0)
		return ACL_ERROR_RT_FAILURE;
	struct stream *st = calloc(1, sizeof(*st));
	if (!st)
		return 207001;
	st->magic = 0x57;
	*s = st;
	return 0;
}

int aclrtDestroyStream(void *s)
{
	fake_ascend_enter("aclrtDestroyStream", "%s", "");
	free(s);
	return 0;
}

int aclrtSynchronizeStream(void *s)
{
	if (fake_ascend_enter("aclrtSynchronizeStream", "%s", "") || !s)
		return ACL_ERROR_RT_FAILURE;
	return 0;   /* the collectives are done when their call returns */
}

int aclrtCreateEvent(void **e)
{
	if (fake_ascend_enter("aclrtCreateEvent", "%s", "") || device < 0)
		return ACL_ERROR_RT_FAILURE;
	struct event *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return 207001;
	ev->magic = 0xe7;
	*e = ev;
	return 0;
}

int aclrtDestroyEvent(void *e)
{
	fake_ascend_enter("aclrtDestroyEvent", "%s", "");
	free(e);
	return 0;
}

int aclrtRecordEvent(void *e, void *s)
{
	struct event *ev = e;
	if (fake_ascend_enter("aclrtRecordEvent", "%s", "") || !ev || !s)
		return ACL_ERROR_RT_FAILURE;
	ev->t = now();
	ev->recorded = 1;
	return 0;
}

int aclrtEventElapsedTime(float *ms, void *start, void *end)
{
	const struct event *a = start, *b = end;
	if (fake_ascend_enter("aclrtEventElapsedTime", "%s", "") || !a || !b || !a->recorded ||
	    !b->recorded)
		return ACL_ERROR_RT_FAILURE;
	const char *fixed = getenv("FAKE_ASCEND_ELAPSED_MS");
	*ms = fixed ? strtof(fixed, NULL) : (float)((b->t - a->t) * 1e3);
	return 0;
}
