// SPDX-License-Identifier: BSD-2-Clause
/*
 * sigbus: SIGBUS inside a guard returns to it (the contract: sigbus.h).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "lib/sigbus.h"

__thread struct sigbus_guard *sigbus__current;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct sigbus_guard *g = sigbus__current;

	(void)si;
	(void)uc;
	if (g)
		siglongjmp(g->env, 1);
	/* Not ours: the default action, when the faulting access runs again. */
	signal(sig, SIG_DFL);
}

static int install_err;

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;	/* see sigbus.h */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		install_err = -errno;
}

int sigbus__install(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, install);
	return install_err;
}
