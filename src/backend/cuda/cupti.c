/*
 * CUPTI activity records of the kernels a row's timed replays ran
 * (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), turned into perfdb_kernel_rec
 * and handed to the CUPTI-free aggregation of src/backend/kernel_report.c.
 *
 * CUPTI delivers records in buffers we give it (buffer_requested) and hands
 * them back full or on cuptiActivityFlushAll (buffer_completed), possibly
 * from its own thread: the records collected so far are guarded by a
 * mutex.  $PERFDB_CUPTI_DUMP=<file> also appends every row's records to
 * <file> in the text dump format (tests/data/cupti/ fixtures come from it).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "cuda_internal.h"

#define BUF_BYTES ((size_t)8 << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct perfdb_kernel_recs pending;   /* records of the row being collected */
static int overflow;                        /* records lost (out of memory, dropped by CUPTI) */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *p = NULL;
	if (posix_memalign(&p, 8, BUF_BYTES) != 0)
		p = NULL;
	*buffer = p;
	*size = p ? BUF_BYTES : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	(void)ctx;
	(void)stream;
	(void)size;
	CUpti_Activity *rec = NULL;
	pthread_mutex_lock(&lock);
	while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
		if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
			continue;
		const CUpti_ActivityKernel10 *kr = (const CUpti_ActivityKernel10 *)rec;
		if (perfdb_kernel_recs_add(&pending, kr->name, kr->start, kr->end) < 0)
			overflow = 1;
	}
	pthread_mutex_unlock(&lock);
	free(buffer);
}

int cu_cupti_init(char *why, size_t whylen)
{
	CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		const char *s = NULL;
		cuptiGetResultString(r, &s);
		snprintf(why, whylen, "off (cuptiActivityRegisterCallbacks: %s)", s ? s : "?");
		return -1;
	}
	return 0;
}

int cu_cupti_begin(void)
{
	pthread_mutex_lock(&lock);
	perfdb_kernel_recs_release(&pending);
	overflow = 0;
	pthread_mutex_unlock(&lock);
	return cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS ? 0 : -1;
}

void cu_cupti_discard(void)
{
	cudaDeviceSynchronize();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&lock);
	perfdb_kernel_recs_release(&pending);
	overflow = 0;
	pthread_mutex_unlock(&lock);
}

static void dump(const struct perfdb_kernel_recs *r, const char *op, size_t line)
{
	const char *path = getenv("PERFDB_CUPTI_DUMP");
	if (!path || !*path)
		return;
	FILE *f = fopen(path, "a");
	if (!f)
		return;
	struct perfdb_strbuf b = PERFDB_STRBUF_INIT;
	perfdb_kernel_recs_dump(r, &b);
	fprintf(f, "# %s line %zu\n%s", op, line, b.buf ? b.buf : "");
	perfdb_strbuf_release(&b);
	fclose(f);
}

int cu_cupti_end(const char *op, size_t line, const char *used, double op_calls, struct perfdb_err *err)
{
	cudaDeviceSynchronize();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	pthread_mutex_lock(&lock);
	struct perfdb_kernel_recs r = pending;
	memset(&pending, 0, sizeof(pending));
	int lost = overflow;
	pthread_mutex_unlock(&lock);
	dump(&r, op, line);
	int rc = lost ? perfdb_err_set(err, PERFDB_ENOMEM, "CUPTI records lost") :
		 perfdb_kernel_report_add(&cu.kernels, op, line, used, &r, op_calls, err);
	perfdb_kernel_recs_release(&r);
	return rc;
}
