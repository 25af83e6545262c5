/*
 * The part of CANN that perfdb comm --backend hccl calls, declared here
 * from CANN's public API reference (HCCL API: hccl.h / hccl_types.h; ACL
 * runtime: acl.h) so that the build needs no CANN: libascendcl and libhccl
 * are opened with dlopen when the transport opens, and every function is
 * reached through struct perfdb_hccl_api (docs/comm.md "HCCL").
 *
 * Only what the transport uses is here, with CANN's names and values.
 */
#ifndef PERFDB_COMM_HCCL_API_H
#define PERFDB_COMM_HCCL_API_H

#include <stddef.h>
#include <stdint.h>

#include "perfdb/err.h"

/* ---- ACL runtime (acl/acl_base.h, acl/acl_rt.h) ---- */
typedef int aclError;                  /* ACL_SUCCESS = 0, else an error code */
typedef void *aclrtStream;
typedef void *aclrtEvent;
#define ACL_SUCCESS 0
#define ACL_MEM_MALLOC_HUGE_FIRST 0    /* aclrtMemMallocPolicy */
enum {                                 /* aclrtMemcpyKind */
	ACL_MEMCPY_HOST_TO_HOST = 0,
	ACL_MEMCPY_HOST_TO_DEVICE = 1,
	ACL_MEMCPY_DEVICE_TO_HOST = 2,
	ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
};

/* ---- HCCL (hccl/hccl_types.h) ---- */
typedef int HcclResult;                /* HCCL_SUCCESS = 0, HCCL_E_PARA = 1, ... HCCL_E_SUSPENDING = 22 */
typedef void *HcclComm;
#define HCCL_SUCCESS 0
typedef enum {
	HCCL_REDUCE_SUM = 0, HCCL_REDUCE_PROD = 1, HCCL_REDUCE_MAX = 2, HCCL_REDUCE_MIN = 3,
} HcclReduceOp;
typedef enum {
	HCCL_DATA_TYPE_INT8 = 0, HCCL_DATA_TYPE_INT16 = 1, HCCL_DATA_TYPE_INT32 = 2,
	HCCL_DATA_TYPE_FP16 = 3, HCCL_DATA_TYPE_FP32 = 4, HCCL_DATA_TYPE_INT64 = 5,
	HCCL_DATA_TYPE_UINT64 = 6, HCCL_DATA_TYPE_UINT8 = 7, HCCL_DATA_TYPE_UINT16 = 8,
	HCCL_DATA_TYPE_UINT32 = 9, HCCL_DATA_TYPE_FP64 = 10, HCCL_DATA_TYPE_BFP16 = 11,
} HcclDataType;
#define HCCL_ROOT_INFO_BYTES 4108
typedef struct {
	char internal[HCCL_ROOT_INFO_BYTES];
} HcclRootInfo;

/* The functions, as dlsym found them.  The optional ones may be NULL
 * (older CANN): messages and the header then say less. */
struct perfdb_hccl_api {
	void *acl_lib, *hccl_lib;                  /* dlopen handles */
	char acl_path[512], hccl_path[512];        /* where they were found */

	aclError (*aclInit)(const char *configPath);
	aclError (*aclFinalize)(void);
	aclError (*aclrtGetDeviceCount)(uint32_t *count);
	aclError (*aclrtSetDevice)(int32_t deviceId);
	aclError (*aclrtResetDevice)(int32_t deviceId);
	aclError (*aclrtMalloc)(void **devPtr, size_t size, int policy);
	aclError (*aclrtFree)(void *devPtr);
	aclError (*aclrtMemcpy)(void *dst, size_t destMax, const void *src, size_t count, int kind);
	aclError (*aclrtCreateStream)(aclrtStream *stream);
	aclError (*aclrtDestroyStream)(aclrtStream stream);
	aclError (*aclrtSynchronizeStream)(aclrtStream stream);
	aclError (*aclrtCreateEvent)(aclrtEvent *event);
	aclError (*aclrtDestroyEvent)(aclrtEvent event);
	aclError (*aclrtRecordEvent)(aclrtEvent event, aclrtStream stream);
	aclError (*aclrtEventElapsedTime)(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);
	const char *(*aclGetRecentErrMsg)(void);   /* optional */
	const char *(*aclrtGetSocName)(void);      /* optional */

	HcclResult (*HcclGetRootInfo)(HcclRootInfo *rootInfo);
	HcclResult (*HcclCommInitRootInfo)(uint32_t nRanks, const HcclRootInfo *rootInfo,
					   uint32_t rank, HcclComm *comm);
	HcclResult (*HcclAllReduce)(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
				    HcclReduceOp op, HcclComm comm, aclrtStream stream);
	HcclResult (*HcclAllGather)(void *sendBuf, void *recvBuf, uint64_t sendCount,
				    HcclDataType dataType, HcclComm comm, aclrtStream stream);
	HcclResult (*HcclReduceScatter)(void *sendBuf, void *recvBuf, uint64_t recvCount,
					HcclDataType dataType, HcclReduceOp op, HcclComm comm,
					aclrtStream stream);
	HcclResult (*HcclAlltoAll)(const void *sendBuf, uint64_t sendCount, HcclDataType sendType,
				   const void *recvBuf, uint64_t recvCount, HcclDataType recvType,
				   HcclComm comm, aclrtStream stream);
	HcclResult (*HcclCommDestroy)(HcclComm comm);
	const char *(*HcclGetErrorString)(HcclResult code);   /* optional */
};

/*
 * Find and open libascendcl.so and libhccl.so (in this order of places:
 * $PERFDB_ASCEND_LIB_DIR alone when set; else $ASCEND_HOME_PATH/lib64,
 * then the dynamic linker's own search (LD_LIBRARY_PATH, ld.so.cache),
 * then /usr/local/Ascend/ascend-toolkit/latest/lib64) and look up every
 * function.  0, or -PERFDB_ENOENT naming the library and where it was
 * looked for, or -PERFDB_EIO naming a missing function.  *api holds what
 * was opened either way, for perfdb_hccl_api_close.
 */
int perfdb_hccl_api_open(struct perfdb_hccl_api *api, struct perfdb_err *err);
void perfdb_hccl_api_close(struct perfdb_hccl_api *api);

/* One line for a failed call: "<call> failed: <CANN's name and words>". */
int perfdb_hccl_fail(const struct perfdb_hccl_api *api, HcclResult r, const char *call,
		     struct perfdb_err *err);
int perfdb_acl_fail(const struct perfdb_hccl_api *api, aclError e, const char *call,
		    struct perfdb_err *err);

#endif
