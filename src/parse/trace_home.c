/*
 * Where a PyTorch trace's tables go (docs/database.md "Layout"): traces
 * describe the machine they were recorded on, not an Ascend stack, so
 * their tables live in the device's native home <root>/<device>/torch/
 * torch<T>/.  The device is the trace's GPU (Kineto's deviceProperties
 * name, as a directory name) or, for a CPU-only trace, this host's CPU.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "parse/parse.h"
#include "perfdb/dbpath.h"
#include "perfdb/device.h"

int perfdb_parse_trace_device(const struct perfdb_parse_db *db,
			      struct perfdb_device_registry *reg, char *dev, size_t cap,
			      struct perfdb_err *err)
{
	if (db->gpu && !db->device[0]) {
		/* no deviceProperties block (older Kineto): docs/chrome_trace.md */
		snprintf(dev, cap, "UNKNOWN_GPU");
	} else if (db->gpu) {
		/* upper case, runs of anything else one '_', none at the ends */
		size_t w = 0;
		int us = 1;
		for (const char *p = db->device; *p && w + 1 < cap; p++) {
			unsigned char ch = (unsigned char)*p;
			if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) {
				dev[w++] = (char)(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
				us = 0;
			} else if (!us) {
				dev[w++] = '_';
				us = 1;
			}
		}
		while (w && dev[w - 1] == '_')
			w--;
		dev[w] = '\0';
		/* a name of punctuation only ("..", "/", "-") names no directory */
		if (!w)
			snprintf(dev, cap, "UNKNOWN_GPU");
	} else {
		const char *name;
		PERFDB_TRY(perfdb_device_detect_host_cpu(reg, &name, err));
		snprintf(dev, cap, "%s", name);
	}
	return 0;
}

int perfdb_parse_trace_device_given(const struct perfdb_parse_db *db, const char *given,
				    struct perfdb_device_registry *reg, char *dev, size_t cap,
				    struct perfdb_err *err)
{
	PERFDB_TRY(perfdb_parse_trace_device(db, reg, dev, cap, err));
	if (!given)
		return 0;
	const struct perfdb_device *g = perfdb_device_find(reg, given);
	const char *want = db->gpu ? "gpu" : "cpu";
	if (db->gpu && strcmp(dev, "UNKNOWN_GPU") != 0 && strcmp(dev, given) != 0)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "the trace names its device '%s' (database %s); --device %s names "
				      "another: leave --device out, or use --database-path to put the tables "
				      "elsewhere", db->device, dev, given);
	if (g && strcmp(g->kind, want) != 0)
		return perfdb_err_set(err, PERFDB_EINVAL,
				      "--device %s is a device of kind %s; this trace's %s ran on a %s "
				      "(use --database-path to put the tables elsewhere)", given, g->kind,
				      db->gpu ? "kernels" : "ops", db->gpu ? "GPU" : "CPU");
	snprintf(dev, cap, "%s", given);
	return 0;
}

int perfdb_parse_trace_note_device(const struct perfdb_parse_db *db,
				   const struct perfdb_device_registry *reg, struct perfdb_err *err)
{
	char devdir[4096];
	const char *name;
	if (perfdb_db_device_dir(db->outdir, devdir, sizeof(devdir), &name) < 0)
		return 0;   /* not the layout: nothing to record */
	const struct perfdb_device *known = reg ? perfdb_device_find(reg, name) : NULL;
	if (known && strcmp(known->source, "detected") != 0)
		return 0;   /* defined by a registry file: nothing to add */
	char desc[300];
	if (db->gpu && db->device[0])
		snprintf(desc, sizeof(desc), "met by perfdb parse: a PyTorch trace's GPU '%.200s'", db->device);
	else if (db->gpu)
		snprintf(desc, sizeof(desc), "met by perfdb parse: PyTorch traces whose GPU is not named "
			 "(no deviceProperties)");
	else
		snprintf(desc, sizeof(desc), "met by perfdb parse: a PyTorch trace of CPU ops");
	struct perfdb_device d = { .name = (char *)name, .kind = db->gpu ? "gpu" : "cpu",
				   .vendor = known ? known->vendor : "", .description = desc,
				   .memory_bytes = known ? known->memory_bytes : 0 };
	return perfdb_device_met_note(devdir, &d, err);
}

bool perfdb_parse_trace_device_named(const char *name)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
			return true;
	return false;
}

int perfdb_parse_trace_kind(const char *path)
{
	struct perfdb_inputs in;
	struct perfdb_err e;
	perfdb_inputs_init(&in);
	size_t traces = 0;
	if (perfdb_parse_find_inputs(path, &in, &e) == 0)
		for (size_t i = 0; i < in.n; i++)
			traces += in.v[i].kind == PERFDB_INPUT_CHROME_TRACE;
	int kind = !traces ? 0 : traces == in.n ? 1 : 2;
	perfdb_inputs_release(&in);
	return kind;
}
