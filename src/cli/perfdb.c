/*
 * perfdb: entry point and command dispatch.  Only this layer prints and
 * picks exit codes: 0 ok, 1 runtime error, 2 usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdb/fsio.h"
#include "backend/backend.h"
#include "backend/module.h"
#include "builtin.h"
#include "perfdb/env_check.h"
#include "perfdb/versions.h"
#include "perfdb_build.h"

static const struct cmd commands[] = {
	{ "check", cmd_check, &cmd_check_help, CMD_DB },
	{ "comm", cmd_comm, &cmd_comm_help, 0 },
	{ "comm-suite", cmd_comm_suite, &cmd_comm_suite_help, 0 },
	{ "devices", cmd_devices, &cmd_devices_help, 0 },
	{ "grid", cmd_grid, &cmd_grid_help, CMD_DB },
	{ "microbench", cmd_microbench, &cmd_microbench_help, CMD_DB },
	{ "parse", cmd_parse, &cmd_parse_help, CMD_DB },
	{ "path", cmd_path, &cmd_path_help, CMD_DB },
	{ "predict", cmd_predict, &cmd_predict_help, CMD_DB },
	{ "report", cmd_report, &cmd_report_help, CMD_DB },
	{ "trace-to-csv", cmd_trace_to_csv, &cmd_trace_to_csv_help, 0 },
	{ "validate", cmd_validate, &cmd_validate_help, 0 },
	{ "writeback", cmd_writeback, &cmd_writeback_help, CMD_DB },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char usage_line[] = "perfdb [--version] [--help] <command> [<args>]";

static void print_main_help(FILE *f)
{
	fprintf(f, "usage: %s\n\n", usage_line);
	fprintf(f, "Build operator performance databases for LLM inference simulators.\n\n");
	fprintf(f, "commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-13s %s\n", commands[i].name, commands[i].help->summary);
	fprintf(f, "\n'perfdb help <command>' or 'perfdb <command> --help' shows a command's options.\n");
}

static void print_version(void)
{
	printf("perfdb %s (git %s)\n", PERFDB_VERSION, PERFDB_GIT_HASH);
	/* replay backends: msprof drives Ascend's profiler found on PATH at run time */
	printf("backends: msprof");
	for (size_t i = 0; perfdb_backends[i]; i++)
		printf(", %s", perfdb_backends[i]->name);
	/* modules are named, not loaded: --version stays as quick as any command */
	if (perfdb_module_built("cuda")) {
		char path[4200];
		struct perfdb_err e;
		int there = perfdb_module_path("cuda", path, sizeof(path), &e) == 0 && access(path, R_OK) == 0;
		char *real = there ? realpath(path, NULL) : NULL;
		printf(", cuda and nccl (perfdb comm) in module %s%s", real ? real : path,
		       there ? ", loaded on use" : ": not installed");
		free(real);
	}
	/* HCCL is opened with dlopen when perfdb comm --backend hccl starts (transport_hccl.c) */
	printf(", hccl (perfdb comm; CANN's libascendcl and libhccl opened on use)\n");
	char libs[512];
	perfdb_library_versions(libs, sizeof(libs));
	printf("libraries: %s\n", libs);
#if defined(__clang__)
	printf("compiler: clang %s\n", __clang_version__);
#elif defined(__GNUC__)
	printf("compiler: gcc %s\n", __VERSION__);
#endif
#if defined(__SANITIZE_ADDRESS__)
	printf("build: AddressSanitizer\n");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	printf("build: AddressSanitizer\n");
#endif
#endif
}

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* The shared steps around a command: what its commands[] flags ask for. */
static int run_cmd(const struct cmd *c, int argc, char **argv)
{
	if (!(c->flags & CMD_DB))
		return c->fn(argc, argv, NULL);
	struct cmd_db db;
	cmd_db_init(&db);
	int rc = c->fn(argc, argv, &db);
	cmd_db_release(&db);
	return rc;
}

static int unknown_cmd(const char *name)
{
	fprintf(stderr, "usage: %s\n", usage_line);
	fprintf(stderr, "perfdb: error: '%s' is not a perfdb command (commands:", name);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(stderr, " %s", commands[i].name);
	fprintf(stderr, ")\n");
	return 2;
}

int main(int argc, char **argv)
{
	/* SIGINT, SIGTERM, SIGHUP: the table being written leaves no temporary file */
	perfdb_tmp_cleanup_on_signals();
	if (argc < 2) {
		print_main_help(stderr);
		return 2;
	}
	const char *a = argv[1];
	if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
		print_main_help(stdout);
		return 0;
	}
	if (strcmp(a, "--version") == 0 || strcmp(a, "version") == 0) {
		print_version();
		return 0;
	}
	if (strcmp(a, "help") == 0) {
		if (argc < 3) {
			print_main_help(stdout);
			return 0;
		}
		const struct cmd *c = find_cmd(argv[2]);
		if (!c)
			return unknown_cmd(argv[2]);
		char *hargv[] = { (char *)c->name, "--help", NULL };
		return run_cmd(c, 2, hargv);
	}
	if (a[0] == '-') {
		fprintf(stderr, "usage: %s\n", usage_line);
		fprintf(stderr, "perfdb: error: unknown option '%s'\n", a);
		return 2;
	}
	const struct cmd *c = find_cmd(a);
	if (!c)
		return unknown_cmd(a);
	struct perfdb_err err;
	perfdb_err_clear(&err);
	if (perfdb_env_check(&err) < 0) {
		fprintf(stderr, "perfdb %s: error: %s\n", c->name, err.msg);
		return 2;
	}
	return run_cmd(c, argc - 1, argv + 1);
}
