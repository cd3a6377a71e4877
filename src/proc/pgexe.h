/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pgexe: is a process running a postgres server binary?  Its title says
 * "postgres: alice payments [local] idle" and becomes backend_type, user
 * and database labels; but any process can set its comm and title to
 * anything.  So the labels are only believed of a process whose
 * executable is named postgres (or postmaster), as --exe postgres matches
 * it, and is a file only root can change: a user's own copy or look-alike
 * is neither.  Reads PROC_ROOT/PID/exe (tests pass a fake proc root).
 */
#ifndef PROFD_PROC_PGEXE_H
#define PROFD_PROC_PGEXE_H

#include <stdbool.h>

#include <stddef.h>
#include <stdint.h>

bool pgexe__is_postgres(const char *proc_root, int pid);

/* A postgres binary believed: its file, so that the next process running
 * it is believed after one stat() rather than the five system calls of
 * the whole check (every backend a postmaster forks runs the same file). */
struct pgexe_id {
	uint64_t dev;
	uint64_t ino;
};

/* pgexe__is_postgres(), and when true, the file's identity into id. */
bool pgexe__check(const char *proc_root, int pid, struct pgexe_id *id);

/*
 * Does pid run one of the n files in known, still a regular file of root's
 * that only root can change?  One stat() of PROC_ROOT/PID/exe.  False
 * means "not one of these", not "not postgres": ask pgexe__check then.
 * A file's identity outlives a check safely: a file with another owner,
 * or one others may write, is never taken for a known one, and the
 * filesystem (not FUSE) was checked with the device.
 */
bool pgexe__runs_known(const char *proc_root, int pid, const struct pgexe_id *known, size_t n);

/*
 * The postmasters running now: processes whose comm is postgres or
 * postmaster, whose parent's is neither, and that pgexe__is_postgres
 * believes (so look-alikes a user starts cannot crowd the real ones out),
 * up to max pids into pids.  Their count (at most max), or a negative
 * errno if PROC_ROOT cannot be listed.
 */
int pgexe__postmasters(const char *proc_root, int *pids, size_t max);

#endif
