/*
 * The CUDA backend's device names (perfdb_device_gpu_name): model
 * upper-cased with `_` for other characters, then the memory in GiB rounded
 * up.  Sizes are what the CUDA runtime reports (totalGlobalMem); names
 * worked out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "perfdb/device.h"

static void test_names(void **state)
{
	(void)state;
	char n[128];
	/* H200: 143771 MiB = 140.4 GiB -> 141, the 141 GB it is sold as */
	perfdb_device_gpu_name("NVIDIA H200", 143771.0 * 1048576.0, n, sizeof(n));
	assert_string_equal(n, "NVIDIA_H200_141G");
	/* H100 SXM: 81559 MiB = 79.6 GiB -> 80 */
	perfdb_device_gpu_name("NVIDIA H100 80GB HBM3", 81559.0 * 1048576.0, n, sizeof(n));
	assert_string_equal(n, "NVIDIA_H100_80GB_HBM3_80G");
	/* exactly 16 GiB stays 16; runs of other characters are one '_', none at the ends */
	perfdb_device_gpu_name("  tesla--v100 (PCIe) ", 16.0 * 1073741824.0, n, sizeof(n));
	assert_string_equal(n, "TESLA_V100_PCIE_16G");
	perfdb_device_gpu_name("", 1073741824.0, n, sizeof(n));
	assert_string_equal(n, "NVIDIA_GPU_1G");
	/* a short buffer truncates, never overflows */
	char s[8];
	perfdb_device_gpu_name("NVIDIA H200", 143771.0 * 1048576.0, s, sizeof(s));
	assert_string_equal(s, "NVIDIA_");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
