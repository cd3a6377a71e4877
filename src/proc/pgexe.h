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

bool pgexe__is_postgres(const char *proc_root, int pid);

/*
 * The postmasters running now: processes whose comm is postgres or
 * postmaster, whose parent's is neither, and that pgexe__is_postgres
 * believes (so look-alikes a user starts cannot crowd the real ones out),
 * up to max pids into pids.  Their count (at most max), or a negative
 * errno if PROC_ROOT cannot be listed.
 */
int pgexe__postmasters(const char *proc_root, int *pids, size_t max);

#endif
