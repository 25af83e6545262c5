/*
 * perfdb validate: the collective tables against an alpha-beta model
 * (docs/spec/comm.md §5, Decision 6; replaces
 * comm_bench/validate_comm_alignment.py, whose output this prints line for
 * line, with the device's name added to the header).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "comm/comm.h"
#include "perfdb/dbpath.h"
#include "perfdb/device.h"

/* the reference's flags (validate_comm_alignment.py): prefixes resolve among them first */
static const char *const reference_flags[] = {
	"csv-dir", "tolerance", "verbose", NULL
};

const struct cmd_help cmd_validate_help = {
	.name = "validate",
	.reference = reference_flags,
	.usage = "perfdb validate --csv-dir DIR [--tolerance T] [--verbose] [--device NAME] [--json]",
	.summary = "check collective tables against the alpha-beta model of a device",
	.description =
		"Compares every row of hcom_allReduce_.csv, hcom_allGather_.csv,\n"
		"hcom_reduceScatter_.csv and hcom_alltoallv_.csv in DIR with an alpha-beta\n"
		"prediction from the device's per-tier bandwidth, latency and efficiency\n"
		"(docs/comm.md). ratio = measured / predicted: PASS within [1/T, T], WARN\n"
		"within [1/2T, 2T], FAIL beyond. Exit status: 0 when no row FAILs, 1 otherwise.",
};

static void on_warn(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "perfdb validate: warning: %s\n", msg);
}

static const char rule[] = "======================================================================";

static void print_report(enum perfdb_comm_op op, const struct perfdb_comm_vreport *r, double tol,
			 bool verbose)
{
	printf("\n%s\n", rule);
	printf("  %s  (%zu rows, tolerance=%.1fx)\n", perfdb_comm_op_name(op), r->nrows, tol);
	printf("  PASS=%zu  WARN=%zu  FAIL=%zu\n", r->count[0], r->count[1], r->count[2]);
	if (r->nrows)
		printf("  ratio: mean=%.2fx  min=%.2fx  max=%.2fx\n", r->mean, r->min, r->max);
	printf("%s\n", rule);
	if (!verbose && !r->count[PERFDB_COMM_FAIL] && !r->count[PERFDB_COMM_WARN])
		return;
	char header[128];
	int len = snprintf(header, sizeof(header), "  %-6s  %12s  %5s  %4s  %10s  %10s  %6s", "status",
			   "msg_bytes", "n_dev", "tier", "measured", "predicted", "ratio");
	printf("%s\n  ", header);
	for (int i = 0; i < len - 2; i++)
		putchar('-');
	putchar('\n');
	for (size_t i = 0; i < r->nrows; i++) {
		const struct perfdb_comm_vrow *x = &r->rows[i];
		if (!verbose && x->status == PERFDB_COMM_PASS)
			continue;
		printf("  %-6s  %12lld  %5ld  %4ld  %10.2f  %10.2f  %6.2fx\n",
		       perfdb_comm_status_name(x->status), x->message_bytes, x->num_devices, x->tier,
		       x->measured_us, x->predicted_us, x->ratio);
	}
}

struct cmd_validate_args {
	const char *dir, *device;
	double tol;
	bool verbose, json;
};

/* 0, -1 after --help, or the usage status. */
static int parse_args(int argc, char **argv, struct cmd_validate_args *a)
{
	*a = (struct cmd_validate_args){ .tol = 2.0 };
	struct opt opts[] = {
		{ .type = OPT_STRING, .name = "csv-dir", .dest = &a->dir, .metavar = "DIR",
		  .required = true,
		  .help = "directory holding the hcom_*.csv tables (e.g. <root>/<device>/hccl/v8.5)" },
		{ .type = OPT_DOUBLE, .name = "tolerance", .dest = &a->tol, .metavar = "T",
		  .help = "PASS when 1/T <= measured/predicted <= T, WARN within twice that "
			  "(default: 2.0)" },
		{ .type = OPT_FLAG, .name = "verbose", .dest = &a->verbose,
		  .help = "print every row, not just WARN and FAIL rows" },
		{ .type = OPT_STRING, .name = "device", .dest = &a->device, .metavar = "NAME",
		  .help = "device whose per-tier bandwidth, latency and efficiency predict the "
			  "latencies (default: ATLAS_800_A3_752T_128G_DIE; see 'perfdb devices')" },
		{ .type = OPT_FLAG, .name = "json", .dest = &a->json,
		  .help = "print a JSON object instead (keys in docs/comm.md)" },
		{ .type = OPT_END },
	};
	const char *pos[1];
	size_t npos;
	int rc = opt_parse(argc, argv, opts, &cmd_validate_help, pos, &npos);
	return rc == 1 ? -1 : rc;
}

int cmd_validate(int argc, char **argv, struct cmd_db *db)
{
	(void)db;   /* no CMD_DB: NULL */
	const struct cmd_help *h = &cmd_validate_help;
	struct cmd_validate_args args, *a = &args;
	int rc = parse_args(argc, argv, a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (!(a->tol > 0) || !isfinite(a->tol))
		return opt_usage_error(h, "argument --tolerance: must be a positive number, got %g",
				       a->tol);
	struct perfdb_err err;
	perfdb_err_clear(&err);
	struct perfdb_device_registry reg;
	perfdb_device_registry_init(&reg);
	if (perfdb_device_registry_load(&reg, &err) < 0) {
		perfdb_device_registry_release(&reg);
		return cli_error("validate", &err);
	}
	const char *name = a->device ? a->device : PERFDB_DEFAULT_DEVICE;
	const struct perfdb_device *dev = perfdb_device_find(&reg, name);
	if (!dev) {
		perfdb_device_registry_release(&reg);
		return opt_usage_error(h, "argument --device: unknown device '%s' (see 'perfdb devices')",
				       name);
	}

	char shown[4096];
	perfdb_py_path(a->dir, shown, sizeof(shown));
	struct perfdb_comm_validation v;
	perfdb_comm_validation_init(&v);
	rc = perfdb_comm_validate_dir(a->dir, dev, a->tol, &v, on_warn, NULL, &err);
	if (rc < 0) {
		if (rc == -PERFDB_ENOENT)
			perfdb_err_set(&err, PERFDB_ENOENT, "'%s' is not a directory", shown);
		perfdb_comm_validation_release(&v);
		perfdb_device_registry_release(&reg);
		return cli_error("validate", &err);
	}
	int status = v.ok ? 0 : 1;
	if (a->json) {
		struct perfdb_strbuf js = PERFDB_STRBUF_INIT;
		if (perfdb_comm_validation_json(&v, a->dir, &js) < 0)
			status = cli_oom("validate");
		fputs(js.buf, stdout);
		perfdb_strbuf_release(&js);
	} else {
		printf("C9 Comm Alignment Validation\n");
		printf("  csv_dir   : %s\n", shown);
		printf("  tolerance : %.1fx\n", a->tol);
		printf("  device    : %s\n", dev->name);
		for (int op = 0; op < PERFDB_COMM_NOPS; op++)
			if (!v.op[op].present)
				printf("  [SKIP] %s not found in %s\n",
				       perfdb_comm_op_file((enum perfdb_comm_op)op), shown);
		for (int op = 0; op < PERFDB_COMM_NOPS; op++)
			if (v.op[op].present)
				print_report((enum perfdb_comm_op)op, &v.op[op], a->tol, a->verbose);
		printf("\n%s\n", rule);
		printf("  TOTAL: %zu rows  PASS=%zu  WARN=%zu  FAIL=%zu\n", v.rows, v.total[0],
		       v.total[1], v.total[2]);
		printf("  Result: %s\n", v.ok ? "OK" : "FAILED");
		printf("%s\n", rule);
	}
	perfdb_comm_validation_release(&v);
	perfdb_device_registry_release(&reg);
	return status;
}
