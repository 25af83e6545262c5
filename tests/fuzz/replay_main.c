/*
 * Corpus replay driver: runs a fuzz target's LLVMFuzzerTestOneInput over
 * every file of the directories (or files) given, without libFuzzer, so the
 * committed corpora run in every CTest build (gcc, ASan) like SQLite's
 * fuzzcheck.  Exit 0 when every input ran; a target that finds a bug aborts.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		fprintf(stderr, "%s: read failed\n", path);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int run_path(const char *path, int *count)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return run_file(path);
	}
	struct dirent **names;
	int n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		perror(path);
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && rc == 0) {
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s", path, names[i]->d_name);
			rc = run_path(p, count);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int count = 0;
	for (int i = 1; i < argc; i++)
		if (run_path(argv[i], &count) < 0)
			return 1;
	if (count == 0) {
		fprintf(stderr, "no corpus inputs found\n");
		return 1;
	}
	printf("%d inputs replayed\n", count);
	return 0;
}
