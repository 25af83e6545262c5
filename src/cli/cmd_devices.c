/*
 * perfdb devices: list the device registry (data/devices.json plus the
 * files of $PERFDB_DEVICES), optionally with the detected host CPU.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "perfdb/device.h"

const struct cmd_help cmd_devices_help = {
	.name = "devices",
	.usage = "perfdb devices [--json] [--detect]",
	.summary = "list the devices of the registry",
	.description =
		"Lists every device perfdb knows: its database directory name, kind, memory,\n"
		"communication grid and the registry file that defines it. Add devices in a\n"
		"JSON file of your own and name it in $PERFDB_DEVICES (see docs/devices.md).",
};

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

int cmd_devices(int argc, char **argv, struct cmd_db *db)
{
	(void)db;   /* no CMD_DB: NULL */
	bool json = false, detect = false;
	struct opt opts[] = {
		{ .type = OPT_FLAG, .name = "json", .dest = &json,
		  .help = "print a JSON array of devices (stable keys, see docs/devices.md)" },
		{ .type = OPT_FLAG, .name = "detect", .dest = &detect,
		  .help = "also list the devices detected on this machine (the host CPU)" },
		{ .type = OPT_END },
	};
	const char *pos[1];
	size_t npos;
	int rc = opt_parse(argc, argv, opts, &cmd_devices_help, pos, &npos);
	if (rc)
		return rc == 1 ? 0 : rc;

	struct perfdb_device_registry reg;
	struct perfdb_err err;
	perfdb_err_clear(&err);
	perfdb_device_registry_init(&reg);
	const char *host = NULL;
	if (perfdb_device_registry_load(&reg, &err) < 0 ||
	    (detect && perfdb_device_detect_host_cpu(&reg, &host, &err) < 0)) {
		perfdb_device_registry_release(&reg);
		return cli_error("devices", &err);
	}
	const char *def = reg.default_name ? reg.default_name : "";
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < reg.n; i++)
			json_array_append_new(arr, device_json(&reg.v[i], strcmp(reg.v[i].name, def) == 0));
		char *s = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(arr);
	} else {
		printf("%-28s %-5s %9s  %-10s %s\n", "NAME", "KIND", "MEMORY", "COMM GRID", "DESCRIPTION");
		for (size_t i = 0; i < reg.n; i++) {
			const struct perfdb_device *d = &reg.v[i];
			char grid[64] = "-";
			size_t w = 0;
			for (size_t g = 0; g < d->grid_ndim && w < sizeof(grid) - 12; g++)
				w += (size_t)snprintf(grid + w, sizeof(grid) - w, "%s%d", g ? "x" : "", d->grid[g]);
			char mem[32];
			snprintf(mem, sizeof(mem), "%.0f GiB", d->memory_bytes / (1024.0 * 1024 * 1024));
			printf("%-28s %-5s %9s  %-10s %s%s\n", d->name, d->kind, mem, grid,
			       d->description, strcmp(d->name, def) == 0 ? " (default)" : "");
		}
	}
	perfdb_device_registry_release(&reg);
	return 0;
}
