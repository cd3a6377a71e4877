/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sigbus: code that reads a mapped file survives the file shrinking under
 * the mapping.  Reading past the new end raises SIGBUS, which kills a
 * process; inside a guard, it returns to the guard's sigsetjmp instead.
 *
 *	struct sigbus_guard g;
 *
 *	if (sigsetjmp(g.env, 0)) {
 *		sigbus__leave(&g);
 *		return -EIO;		(what was being read is unusable now)
 *	}
 *	sigbus__enter(&g);
 *	...read the mapping...
 *	sigbus__leave(&g);
 *
 * Per thread, and nestable.  A SIGBUS outside any guard is fatal, as it
 * would have been.  sigbus__install() once, before the first guard.  No
 * signal mask is saved (0): that would be a system call per guard, and the
 * unwinder takes one per frame; the handler runs with SIGBUS unblocked
 * (SA_NODEFER), so there is nothing to restore.
 */
#ifndef PROFD_LIB_SIGBUS_H
#define PROFD_LIB_SIGBUS_H

#include <setjmp.h>

struct sigbus_guard {
	sigjmp_buf env;
	struct sigbus_guard *prev;
};

extern __thread struct sigbus_guard *sigbus__current;

/* The process's SIGBUS handler (idempotent): 0, or negative errno. */
int sigbus__install(void);

static inline void sigbus__enter(struct sigbus_guard *g)
{
	g->prev = sigbus__current;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sigbus__current = g;
}

static inline void sigbus__leave(struct sigbus_guard *g)
{
	sigbus__current = g->prev;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

#endif
