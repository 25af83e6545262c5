/*
 * The cuda module's entry point (src/backend/module.h): the CUDA backend
 * (cuda.c) and the NCCL transport of perfdb comm (nccl.c).  This shared
 * object is the only part of perfdb that links CUDA.
 */
#include "backend/module.h"

static const struct perfdb_module cuda_module = {
	.api_version = PERFDB_MODULE_API_VERSION,
	.name = "cuda",
	.backend = &perfdb_backend_cuda,
	.nccl = &perfdb_nccl_transport,
};

__attribute__((visibility("default"))) const struct perfdb_module *perfdb_module_entry(void)
{
	return &cuda_module;
}
