// SPDX-License-Identifier: BSD-2-Clause
/*
 * sig_target: CPU in a signal handler, so that stacks pass through the
 * signal frame: main -> spin_main, interrupted every 10 ms by SIGALRM,
 * whose handler on_alarm -> handler_work burns ~5 ms.  The unwinder must
 * continue from the ucontext the kernel saved (via __restore_rt's CFI)
 * to spin_main and main.
 *
 *   sig_target [SECONDS]
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile uint64_t sink;
static volatile sig_atomic_t done;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE static void handler_work(void)
{
	double end = now() + 0.005;

	while (now() < end)
		for (int i = 0; i < 1000; i++)
			sink = sink * 31 + i;
}

NOINLINE static void on_alarm(int sig)
{
	handler_work();
}

NOINLINE static void spin_main(double secs)
{
	double end = now() + secs;

	while (now() < end)
		for (int i = 0; i < 1000; i++)
			sink = sink * 17 + i;
}

int main(int argc, char **argv)
{
	struct itimerval it = {{0, 10000}, {0, 10000}};
	struct sigaction sa = {.sa_handler = on_alarm};

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	spin_main(argc > 1 ? atof(argv[1]) : 0.1);
	return 0;
}
