/*
 * `perfdb devices --json` (docs/devices.md): the registry as one JSON array,
 * peaks in TFLOP/s, the comm grid and tiers where a device has them.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "perfdb/json_out.h"
#include "perfdb/device.h"
#include "perfdb/strbuf.h"

static json_t *peaks_json(const double *v)
{
	static const char *const k[PERFDB_PEAK_COUNT_] = { "fp32", "fp16", "bf16", "int8", "fp8" };
	json_t *o = json_object();
	for (int i = 0; i < PERFDB_PEAK_COUNT_; i++)
		if (v[i] > 0)
			json_object_set_new(o, k[i], json_real(v[i] / 1e12));
	return o;
}

static json_t *device_json(const struct perfdb_device *d, int is_default)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:b, s:f, s:f}",
		"name", d->name, "kind", d->kind, "vendor", d->vendor,
		"description", d->description, "default", is_default,
		"memory_gib", d->memory_bytes / (1024.0 * 1024 * 1024),
		"memory_bandwidth_gbps", d->memory_bandwidth / 1e9);
	json_object_set_new(o, "mma_tflops", peaks_json(d->mma_flops));
	json_object_set_new(o, "vector_tflops", peaks_json(d->vector_flops));
	if (d->grid_ndim) {
		json_t *grid = json_array(), *tiers = json_array();
		for (size_t i = 0; i < d->grid_ndim; i++) {
			json_array_append_new(grid, json_integer(d->grid[i]));
			json_array_append_new(tiers, json_pack("{s:s, s:f, s:f, s:f}",
				"name", d->tiers[i].name,
				"bandwidth_gbps", d->tiers[i].bandwidth / 1e9,
				"latency_us", d->tiers[i].latency * 1e6,
				"efficiency", d->tiers[i].efficiency));
		}
		json_object_set_new(o, "comm", json_pack("{s:o, s:o}", "grid", grid, "tiers", tiers));
	}
	json_object_set_new(o, "source", json_string(d->source));
	return o;
}

int perfdb_device_registry_json(const struct perfdb_device_registry *reg, struct perfdb_strbuf *out)
{
	const char *def = reg->default_name ? reg->default_name : "";
	json_t *arr = json_array();
	for (size_t i = 0; i < reg->n; i++)
		json_array_append_new(arr, device_json(&reg->v[i], strcmp(reg->v[i].name, def) == 0));
	return perfdb_json_dump(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10),
				out);
}
