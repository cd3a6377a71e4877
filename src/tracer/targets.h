/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * targets: which processes a consumer (a CPU session, heap tracking)
 * profiles: pids (with the children they fork later), executables (by path
 * or by file name, now or started later), or, with neither, the whole
 * system.  A struct targets owns its lists.
 *
 * targets__apply() makes the kernel side filter for them under one mask
 * bit and records what it did; targets__clear() undoes exactly that, so a
 * half-failed apply tears down cleanly.
 */
#ifndef PROFD_TARGETS_H
#define PROFD_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpfobj;
struct proc_exe;
struct strbuf;

#define TARGETS_EXE_NAME_MAX 255	/* a file name */

struct targets {
	int *pids;
	size_t npids;
	char **exes;		/* a path (has a '/') or an executable's file name */
	size_t nexes;
	/* The paths are a client's (an HTTP request, which any local user
	 * can send): looked up as a user with no privilege would, so that a
	 * file in a directory only root can search is "no such executable"
	 * too, and the answer tells nothing of what root can see. */
	bool from_client;
	/*
	 * The daemon's defaults (serve's --pid, --exe, "pids", "exes"), which
	 * must not make it fail or restart in a loop: a pid that is gone is
	 * dropped by targets__drop_gone() with a log line, and a path that
	 * does not exist yet is waited for (a process running it is matched by
	 * its path until the file exists, then by its identity).
	 */
	bool defaults;
	/* Pids were dropped: an empty list now selects nothing, not the whole system. */
	bool dropped;
	/* Set by targets__apply(), read by targets__clear(). */
	struct {
		uint32_t bit;
		size_t pids;	/* pids[0..pids) have the bit set */
		bool exes;	/* registered for executable matching */
		bool whole;	/* counted as a whole-system consumer */
	} applied;
	/* Executables given by path: their identity, taken at apply. */
	struct targets_exe_id {
		uint64_t dev, ino;
		bool ok;
	} *exe_ids;
};

/* Append one pid / one executable (copied).  -EINVAL for a bad one. */
int targets__add_pid(struct targets *t, int pid);
int targets__add_exe(struct targets *t, const char *exe);
/* Append a decimal pid given as text (a command-line argument). */
int targets__add_pid_arg(struct targets *t, const char *arg);
/* dst = a deep copy of src (without what was applied). */
int targets__copy(struct targets *dst, const struct targets *src);
void targets__free(struct targets *t);

static inline bool targets__whole_system(const struct targets *t)
{
	return !t->npids && !t->nexes && !t->dropped;
}

/*
 * Drop the pids that are gone, logging each once (defaults only; it is what
 * makes a stale "pids" entry harmless).  0 when some target is left;
 * -ESRCH, with errbuf saying which pids went, when none is.
 */
int targets__drop_gone(struct targets *t, char *errbuf, size_t errlen);

/* "whole system", "pid 12, exe postgres", ... */
int targets__describe(const struct targets *t, struct strbuf *out);

/* Check the targets without applying them: pids exist, paths exist, names
 * are file names.  0, or negative errno with errbuf saying why. */
int targets__check(struct targets *t, char *errbuf, size_t errlen);

/*
 * Check the targets (as targets__check), then
 * make the kernel side select them with mask bit `bit`.  On error,
 * errbuf says why, and what was applied stays recorded for clear.
 * -ESRCH: no such pid; -ENOENT: no such executable; -EINVAL: a bad name;
 * -ENOSPC: the kernel's process table is full.
 */
int targets__apply(struct targets *t, struct bpfobj *o, uint32_t bit, char *errbuf,
		   size_t errlen);
void targets__clear(struct targets *t, struct bpfobj *o);

/* Does the executable exe match one of t's --exe targets? */
bool targets__match_exe(const struct targets *t, const struct proc_exe *exe);

#endif
