/*
 * Temporary files removed on SIGINT, SIGTERM and SIGHUP (docs/reliability.md
 * guarantee 3): perfdb_file_write_atomic names the temporary file it is
 * writing here, and the handler the CLI installs unlinks every named one
 * before the process dies of the signal as it would have (exit status
 * 128+n).  Only SIGKILL, which no handler sees, leaves one behind; the
 * next writer under the lock removes it.
 *
 * This is process state, the one kind a signal handler can reach: a fixed
 * table of slots, claimed with an atomic exchange so that writer threads
 * need no lock, and read by the handler with async-signal-safe calls only
 * (unlink, signal, raise).
 */
#include "perfdb/fsio.h"

#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 16
#define NAME_MAX_LEN 4352

static struct {
	volatile sig_atomic_t used;
	char name[NAME_MAX_LEN];
} slot[SLOTS];

int perfdb_tmp_claim(const char *name)
{
	if (strlen(name) >= NAME_MAX_LEN)
		return -1;
	for (int i = 0; i < SLOTS; i++) {
		sig_atomic_t free_ = 0;
		/* claimed empty, then named, then marked named: the handler skips a half-written name */
		if (__atomic_compare_exchange_n(&slot[i].used, &free_, 2, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			memcpy(slot[i].name, name, strlen(name) + 1);
			__atomic_store_n(&slot[i].used, 1, __ATOMIC_RELEASE);
			return i;
		}
	}
	return -1;   /* more writers than slots: that file is left to the next writer */
}

void perfdb_tmp_rename(int i, const char *name)
{
	if (i < 0 || strlen(name) >= NAME_MAX_LEN)
		return;
	__atomic_store_n(&slot[i].used, 2, __ATOMIC_RELEASE);
	memcpy(slot[i].name, name, strlen(name) + 1);
	__atomic_store_n(&slot[i].used, 1, __ATOMIC_RELEASE);
}

void perfdb_tmp_release(int i)
{
	if (i >= 0)
		__atomic_store_n(&slot[i].used, 0, __ATOMIC_RELEASE);
}

static void on_fatal_signal(int sig)
{
	for (int i = 0; i < SLOTS; i++)
		if (__atomic_load_n(&slot[i].used, __ATOMIC_ACQUIRE) == 1)
			(void)unlink(slot[i].name);
	signal(sig, SIG_DFL);
	raise(sig);
}

void perfdb_tmp_cleanup_on_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	for (size_t k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++) {
		struct sigaction old;
		/* a signal the process was started ignoring stays ignored (nohup) */
		if (sigaction(sigs[k], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fatal_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[k], &sa, NULL);
	}
}
