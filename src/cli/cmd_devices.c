/*
 * perfdb devices: list the device registry (data/devices.json plus the
 * files of $PERFDB_DEVICES and the devices met under the root), optionally
 * with the detected host CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "perfdb/dbpath.h"
#include "perfdb/device.h"

const struct cmd_help cmd_devices_help = {
	.name = "devices",
	.usage = "perfdb devices [--json] [--detect] [--database-root DIR]",
	.summary = "list the devices of the registry",
	.description =
		"Lists every device perfdb knows: its database directory name, kind, memory,\n"
		"communication grid and the registry file that defines it. Add devices in a\n"
		"JSON file of your own and name it in $PERFDB_DEVICES (see docs/devices.md).\n"
		"Devices perfdb met under the database root (a trace's GPU, recorded by parse\n"
		"in <root>/<device>/perfdb-device.json) are listed too.",
};

int cmd_devices(int argc, char **argv, struct cmd_db *db)
{
	(void)db;   /* no CMD_DB: NULL */
	bool json = false, detect = false;
	const char *root = NULL;
	struct opt opts[] = {
		{ .type = OPT_FLAG, .name = "json", .dest = &json,
		  .help = "print a JSON array of devices (stable keys, see docs/devices.md)" },
		{ .type = OPT_FLAG, .name = "detect", .dest = &detect,
		  .help = "also list the devices detected on this machine (the host CPU)" },
		{ .type = OPT_STRING, .name = "database-root", .metavar = "DIR", .dest = &root,
		  .help = "root whose met devices are listed too (default: $PERFDB_DATA_ROOT, else "
			  "the nearest tensor_cast/performance_model/profiling_database/data "
			  "above the current directory, else ./profiling_database/data)" },
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
	struct perfdb_db_opts dbo = { .database_root = root };
	if (perfdb_device_registry_load(&reg, &err) < 0 || perfdb_device_met_load_flags(&reg, &dbo, &err) < 0 ||
	    (detect && perfdb_device_detect_host_cpu(&reg, &host, &err) < 0)) {
		perfdb_device_registry_release(&reg);
		return cli_error("devices", &err);
	}
	const char *def = reg.default_name ? reg.default_name : "";
	if (json) {
		struct perfdb_strbuf js = PERFDB_STRBUF_INIT;
		if (perfdb_device_registry_json(&reg, &js) < 0)
			rc = cli_oom("devices");
		fputs(js.buf, stdout);
		perfdb_strbuf_release(&js);
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
	return rc;
}
