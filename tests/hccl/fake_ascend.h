/*
 * What the stand-in libascendcl and libhccl share (tests/hccl/): the
 * failure switch, the call trace and the registry of "device" memory.
 *
 *   FAKE_ASCEND_FAIL=<function>  that function fails (every rank, or only
 *                                world rank FAKE_ASCEND_FAIL_RANK)
 *   FAKE_ASCEND_TRACE=<file>     each rank appends "<rank> <function> ..." per call
 *   FAKE_ASCEND_DEVICES=<n>      NPUs per host (default 8)
 *   FAKE_ASCEND_ELAPSED_MS=<ms>  every aclrtEventElapsedTime answers this
 */
#ifndef FAKE_ASCEND_H
#define FAKE_ASCEND_H

#include <stddef.h>

/* Whether fn is to fail on this rank (FAKE_ASCEND_FAIL); traces the call and its detail. */
int fake_ascend_enter(const char *fn, const char *detail_fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Whether [p, p+n) lies inside one block aclrtMalloc returned. */
int fake_ascend_is_device(const void *p, size_t n);
/* The device aclrtSetDevice chose, or -1. */
int fake_ascend_device(void);

#endif
