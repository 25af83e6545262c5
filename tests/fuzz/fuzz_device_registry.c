/*
 * Fuzz target: a device registry file (src/core/device.c
 * perfdb_device_registry_parse), what $PERFDB_DEVICES names (docs/devices.md).
 * Invariants: no crash or leak; a file that fails says why; one that loads
 * holds devices with a valid name and kind, finite non-negative figures,
 * a grid of 1..PERFDB_COMM_MAX_TIERS positive dimensions, and a default
 * that names one of them; every group size maps to a tier of that grid.
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/device.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_num(double v)
{
	if (!isfinite(v) || v < 0)
		abort();
}

static void check_device(const struct perfdb_device *d)
{
	if (!d->name || !d->name[0] || !d->kind || !d->vendor || !d->description || !d->source)
		abort();
	for (const char *c = d->name; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_-.", *c))
			abort();
	if (strcmp(d->kind, "npu") && strcmp(d->kind, "gpu") && strcmp(d->kind, "cpu") && strcmp(d->kind, "test"))
		abort();
	check_num(d->memory_bytes);
	check_num(d->memory_bandwidth);
	for (int i = 0; i < PERFDB_PEAK_COUNT_; i++) {
		check_num(d->mma_flops[i]);
		check_num(d->vector_flops[i]);
	}
	if (d->grid_ndim > PERFDB_COMM_MAX_TIERS)
		abort();
	for (size_t i = 0; i < d->grid_ndim; i++) {
		if (d->grid[i] < 1)
			abort();
		check_num(d->tiers[i].bandwidth);
		check_num(d->tiers[i].latency);
		check_num(d->tiers[i].efficiency);
	}
	for (long n = 1; n <= 1 << 12; n *= 2) {
		int t = perfdb_device_tier_of_group(d, n);
		if (d->grid_ndim ? (t < 0 || (size_t)t >= d->grid_ndim) : t != -1)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfdb_device_registry r;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	perfdb_device_registry_init(&r);
	if (perfdb_device_registry_parse(&r, "fuzz/devices.json", (const char *)data, size, &err) == 0) {
		for (size_t i = 0; i < r.n; i++)
			check_device(&r.v[i]);
		if (r.default_name && !perfdb_device_find(&r, r.default_name))
			abort();
	} else if (!err.msg[0]) {
		abort();
	}
	perfdb_device_registry_release(&r);
	return 0;
}
