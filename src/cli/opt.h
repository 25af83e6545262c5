/*
 * Command-line options as data (the git parse-options idea): one table per
 * command drives both parsing and --help.
 *
 * Accepted forms: `--name value`, `--name=value`, unique prefixes of long
 * names (as Python's argparse), `-x value` for options with a short name,
 * `--` to end options.  List options (OPT_LIST) take one or more values up
 * to the next token starting with "--" (argparse nargs='+') and may repeat.
 * Errors print the usage line and "perfdb <cmd>: error: <reason>" and make
 * opt_parse return 2; --help prints the help and returns 1 (caller exits 0).
 */
#ifndef PERFDB_CLI_OPT_H
#define PERFDB_CLI_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "perfdb/err.h"
#include "perfdb/strbuf.h"

enum opt_type {
	OPT_END = 0,
	OPT_GROUP,     /* a heading in --help; name is the heading text */
	OPT_STRING,    /* const char ** */
	OPT_INT,       /* long * */
	OPT_DOUBLE,    /* double * */
	OPT_FLAG,      /* bool * */
	OPT_LIST,      /* struct opt_list * (strings) */
};

struct opt_list {
	const char **v;
	size_t n;
};

/* Extra check of a value; return 0 or fill err (its message is printed). */
typedef int (*opt_check_fn)(const char *value, struct perfdb_err *err);

struct opt {
	enum opt_type type;
	const char *name;          /* long name without "--" */
	char short_name;           /* 0 = none */
	void *dest;
	const char *metavar;       /* "PATH"; NULL for flags */
	const char *help;          /* one line; "(default: …)" written by hand */
	const char *const *choices;/* NULL-terminated, or NULL */
	opt_check_fn check;
	long min;                  /* OPT_INT: minimum accepted when has_min */
	bool has_min;
	bool required;
	bool seen;                 /* set by the parser */
};

struct cmd_help {
	const char *name;          /* "parse" */
	const char *usage;         /* "perfdb parse --profiling-path PATH [options]" */
	const char *summary;       /* one line, for the command list */
	const char *description;   /* paragraphs after the usage line, may be NULL */
	const char *positional;    /* description of positional args, may be NULL */
	size_t max_positional;     /* 0 = none accepted */
	/*
	 * The long flags of the reference tool this command re-implements
	 * (NULL-terminated; NULL when there is none).  A prefix is resolved
	 * among these first, exactly as the reference's argparse resolves it;
	 * perfdb's own flags are candidates only when no reference flag
	 * matches, so they never make a reference prefix ambiguous
	 * (`--database` is `--database-path`, not also `--database-root`).
	 */
	const char *const *reference;
};

/* The database-location flags every reference tool has. */
#define OPT_REFERENCE_DB "database-path", "device", "vllm-version", "torch-version", "cann-version"

/*
 * Parse argv[1..argc-1] (argv[0] is the command name).  Positional
 * arguments are collected in order into pos (array of argc pointers
 * provided by the caller), *npos set.  Returns 0 ok, 1 help printed,
 * 2 usage error printed.
 */
int opt_parse(int argc, char **argv, struct opt *opts, const struct cmd_help *h,
	      const char **pos, size_t *npos);

/* Print the full help of a command to f. */
void opt_print_help(FILE *f, const struct opt *opts, const struct cmd_help *h);

/* Print "usage: …" and "perfdb <cmd>: error: <msg>" to stderr; returns 2. */
int opt_usage_error(const struct cmd_help *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Report a runtime error ("perfdb <cmd>: error: msg") to stderr; returns 1. */
int cli_error(const char *cmd, const struct perfdb_err *err);
/* "perfdb CMD: error: out of memory" on stderr; returns 1. */
int cli_oom(const char *cmd);
/*
 * Print what a stage worded for people (its *_text.c function returned rc
 * and filled sb) on f, flush, and empty sb for the next piece.  Returns 0,
 * or cli_oom's status when the stage ran out of memory (what it had worded
 * is printed first).
 */
int cli_print_text(const char *cmd, FILE *f, int rc, struct perfdb_strbuf *sb);

/*
 * After a failed run: "perfdb <cmd>: N table(s) had been replaced before
 * the error: a.csv, b.csv, ..." (the first 20 named), so that no partial
 * success goes unsaid.  path(ctx, i) gives the i-th of n tables or NULL
 * when that one was not replaced.  Prints nothing when none was.
 */
void cli_replaced(const char *cmd, const char *(*path)(const void *ctx, size_t i),
		  const void *ctx, size_t n);

#endif
