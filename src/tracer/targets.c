// SPDX-License-Identifier: BSD-2-Clause
/*
 * targets: copy, check, apply and clear targets for CPU sessions and heap alike (the contract:
 * targets.h).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/htab.h"
#include "lib/log.h"
#include "lib/mapped_file.h"
#include "lib/parse.h"
#include "lib/strbuf.h"
#include "proc/procs.h"
#include "tracer/bpfobj.h"
#include "tracer/targets.h"

int targets__add_pid(struct targets *t, int pid)
{
	int *np;

	if (pid <= 0)
		return -EINVAL;
	np = realloc(t->pids, (t->npids + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	t->pids = np;
	t->pids[t->npids++] = pid;
	return 0;
}

int targets__add_pid_arg(struct targets *t, const char *arg)
{
	long pid;

	if (parse__int(arg, 1, INT_MAX, &pid))
		return -EINVAL;
	return targets__add_pid(t, (int)pid);
}

int targets__add_exe(struct targets *t, const char *exe)
{
	char **ne;

	if (!exe || !*exe)
		return -EINVAL;
	ne = realloc(t->exes, (t->nexes + 1) * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	t->exes = ne;
	t->exes[t->nexes] = strdup(exe);
	if (!t->exes[t->nexes])
		return -ENOMEM;
	t->nexes++;
	return 0;
}

int targets__copy(struct targets *dst, const struct targets *src)
{
	int err = 0;

	memset(dst, 0, sizeof(*dst));
	for (size_t i = 0; !err && i < src->npids; i++)
		err = targets__add_pid(dst, src->pids[i]);
	for (size_t i = 0; !err && i < src->nexes; i++)
		err = targets__add_exe(dst, src->exes[i]);
	if (err) {
		targets__free(dst);
	} else {
		dst->from_client = src->from_client;
		dst->defaults = src->defaults;
		dst->dropped = src->dropped;
	}
	return err;
}

void targets__free(struct targets *t)
{
	for (size_t i = 0; i < t->nexes; i++)
		free(t->exes[i]);
	free(t->exes);
	free(t->pids);
	free(t->exe_ids);
	memset(t, 0, sizeof(*t));
}

int targets__describe(const struct targets *t, struct strbuf *out)
{
	const char *sep = "";

	if (targets__whole_system(t))
		return strbuf__adds(out, "whole system");
	if (!t->npids && !t->nexes)
		return strbuf__adds(out, "none (every default pid is gone)");
	for (size_t i = 0; i < t->npids; i++, sep = ", ")
		strbuf__addf(out, "%spid %d", sep, t->pids[i]);
	for (size_t i = 0; i < t->nexes; i++, sep = ", ")
		strbuf__addf(out, "%sexe %s", sep, t->exes[i]);
	return strbuf__err(out);
}

/* stat(), as a user with no privilege would (nobody's filesystem ids). */
static int stat_unprivileged(const char *path, struct stat *st)
{
	struct mapped_file_ids was = mapped_file__become(65534, 65534);
	int ret = stat(path, st);

	mapped_file__restore(was);
	return ret;
}

/* Names and paths checked, and paths' identities taken, before anything is applied. */
static int check_exes(struct targets *t, char *errbuf, size_t errlen)
{
	free(t->exe_ids);
	t->exe_ids = calloc(t->nexes + 1, sizeof(*t->exe_ids));
	if (!t->exe_ids)
		return -ENOMEM;
	for (size_t i = 0; i < t->nexes; i++) {
		const char *e = t->exes[i];
		struct stat st;

		if (strchr(e, '/')) {
			if (t->defaults && !t->from_client && stat(e, &st)) {
				/* Not there yet: matched by path (match_exe) until it is. */
				t->exe_ids[i].ok = false;
				continue;
			}
			if (t->from_client ? stat_unprivileged(e, &st) : stat(e, &st)) {
				snprintf(errbuf, errlen, "no such executable%s: %.200s",
					 t->from_client ? " that every user can see" : "", e);
				return -ENOENT;
			}
			t->exe_ids[i] = (struct targets_exe_id){st.st_dev, st.st_ino, true};
		} else if (strlen(e) > TARGETS_EXE_NAME_MAX) {
			snprintf(errbuf, errlen, "an executable's name is at most %d bytes: %.64s...",
				 TARGETS_EXE_NAME_MAX, e);
			return -EINVAL;
		}
	}
	return 0;
}

#define TARGETS_GONE_HINT "name a pid or exe in the request, or restart profd with --exe NAME"

static bool pid_gone(int pid)
{
	return pid <= 0 || (kill(pid, 0) && errno == ESRCH);
}

int targets__drop_gone(struct targets *t, char *errbuf, size_t errlen)
{
	struct strbuf gone = {};
	size_t n = 0;

	for (size_t i = 0; i < t->npids; i++) {
		if (!pid_gone(t->pids[i])) {
			t->pids[n++] = t->pids[i];
			continue;
		}
		log__warn("default target pid %d is gone: dropped, still serving (a process "
			  "that comes back with a new pid needs --exe or a restart)", t->pids[i]);
		strbuf__addf(&gone, "%s%d", gone.len ? ", " : "", t->pids[i]);
		t->dropped = true;
	}
	t->npids = n;
	if (t->npids || t->nexes || !t->dropped) {
		strbuf__free(&gone);
		return 0;
	}
	if (gone.buf)
		snprintf(errbuf, errlen, "every default target is gone (pid %s exited): %s", gone.buf,
			 TARGETS_GONE_HINT);
	else
		snprintf(errbuf, errlen, "every default target is gone (their pids exited; the "
			 "log names them): %s", TARGETS_GONE_HINT);
	strbuf__free(&gone);
	return -ESRCH;
}

int targets__check(struct targets *t, char *errbuf, size_t errlen)
{
	/* Defaults: a gone pid is dropped (targets__drop_gone), or skipped at apply. */
	for (size_t i = 0; !t->defaults && i < t->npids; i++) {
		if (pid_gone(t->pids[i])) {
			snprintf(errbuf, errlen, "no process with pid %d", t->pids[i]);
			return -ESRCH;
		}
	}
	return check_exes(t, errbuf, errlen);
}

static bool match_exe(const void *ctx, const struct proc_exe *exe)
{
	return targets__match_exe(ctx, exe);
}

int targets__apply(struct targets *t, struct bpfobj *o, uint32_t bit, char *errbuf,
		   size_t errlen)
{
	int err;

	t->applied.bit = bit;
	err = targets__check(t, errbuf, errlen);
	if (err)
		return err;
	/* Executables first: a pid's child must not fork before its exe is known. */
	if (t->nexes) {
		err = bpfobj__exe_register(o, bit, match_exe, t);
		if (err) {
			snprintf(errbuf, errlen, "cannot register executable targets: %s",
				 strerror(-err));
			return err;
		}
		t->applied.exes = true;
	}
	for (size_t i = 0; i < t->npids; i++) {
		/*
		 * The pid names a process only while it lives: if it exited
		 * between the check and the map write, the entry may now
		 * select whichever process reused the pid.  A pidfd taken
		 * first tells (kernels without pidfds keep the small window).
		 */
		int pfd = (int)syscall(SYS_pidfd_open, t->pids[i], 0);

		err = pfd < 0 && errno == ESRCH ? -ESRCH : bpfobj__pid_set(o, t->pids[i], bit);
		if (!err && pfd >= 0 && syscall(SYS_pidfd_send_signal, pfd, 0, NULL, 0) &&
		    errno == ESRCH)
			err = -ESRCH;
		if (pfd >= 0)
			close(pfd);
		if (err == -ESRCH && t->defaults) {
			/* Exited since targets__drop_gone(): skipped; the next one drops it. */
			t->applied.pids = i + 1;
			err = 0;
			continue;
		}
		if (err == -ESRCH) {
			/* Recorded as applied, so that clear takes the bit back. */
			t->applied.pids = i + 1;
			snprintf(errbuf, errlen, "no process with pid %d", t->pids[i]);
			return err;
		}
		if (err) {
			snprintf(errbuf, errlen, "cannot target pid %d: %s", t->pids[i],
				 err == -E2BIG || err == -ENOSPC ? "process table full" :
				 strerror(-err));
			return err == -E2BIG ? -ENOSPC : err;
		}
		t->applied.pids = i + 1;
	}
	if (targets__whole_system(t)) {
		bpfobj__whole_system(o, 1);
		t->applied.whole = true;
	}
	return 0;
}

void targets__clear(struct targets *t, struct bpfobj *o)
{
	if (t->applied.whole)
		bpfobj__whole_system(o, -1);
	/* Children inherited the bit at fork: take it back from every process. */
	if (t->applied.pids)
		bpfobj__pid_clear_all(o, t->applied.bit);
	if (t->applied.exes)
		bpfobj__exe_unregister(o, t->applied.bit);
	memset(&t->applied, 0, sizeof(t->applied));
}

bool targets__match_exe(const struct targets *t, const struct proc_exe *exe)
{
	for (size_t i = 0; i < t->nexes; i++) {
		if (t->exe_ids && t->exe_ids[i].ok) {
			if (t->exe_ids[i].dev == exe->dev && t->exe_ids[i].ino == exe->ino)
				return true;
		} else if (!strchr(t->exes[i], '/')) {
			if (exe->name && !strcmp(exe->name, t->exes[i]))
				return true;
		} else if (t->defaults && exe->path && !strcmp(exe->path, t->exes[i])) {
			return true;	/* a default path that did not exist at apply */
		}
	}
	return false;
}
