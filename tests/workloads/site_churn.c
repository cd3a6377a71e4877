// SPDX-License-Identifier: BSD-2-Clause
/*
 * site_churn: many heap allocation sites, made by processes that exit or
 * by one that stays.  A heap site is (process, stack, call site, thread
 * name): make_sites() allocates K blocks from one call site, renaming the
 * thread before each, so K sites per process.
 *
 *   site_churn fork N K MS   forks N children, which wait; prints "waiting N"
 *                            and, at a second SIGUSR1, lets them go one
 *                            after another, MS ms apart: each makes K sites
 *                            and exits.  Prints "forked N" when the last has
 *                            been reaped.  (A target's child gets its heap
 *                            probes some milliseconds after its fork: the
 *                            test lets them go once the daemon says all
 *                            have them, profd_heap_fork_attached_total.)
 *   site_churn hold K        makes K sites, prints "held K", sleeps until killed.
 *   site_churn zombies N K   forks N children, which make K sites each and
 *                            exit; prints "exited N" once all have, still
 *                            unreaped (zombies), and at a second SIGUSR1
 *                            reaps them and prints "reaped N".
 *
 * Each waits for SIGUSR1 first, so that a profiler can be given its pid.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;
static volatile sig_atomic_t go, go_child;

static void on_usr1(int sig)
{
	(void)sig;
	go++;
}

static void on_usr2(int sig)
{
	(void)sig;
	go_child = 1;
}

__attribute__((noinline)) void make_sites(int k)
{
	char name[16];

	for (int i = 0; i < k; i++) {
		snprintf(name, sizeof(name), "site%d", i);
		prctl(PR_SET_NAME, name);
		sink = malloc(4096);
	}
	prctl(PR_SET_NAME, "site_churn");
}

int main(int argc, char **argv)
{
	sigset_t block, old;

	/* No SIGUSR1 lost between the check and the wait. */
	signal(SIGUSR1, on_usr1);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old);
	while (!go)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (argc == 5 && !strcmp(argv[1], "fork")) {
		int n = atoi(argv[2]), k = atoi(argv[3]), ms = atoi(argv[4]);
		struct timespec gap = {ms / 1000, (ms % 1000) * 1000000L};

		pid_t *kids = calloc(n > 0 ? n : 1, sizeof(*kids));
		sigset_t both;

		if (!kids)
			return 1;
		signal(SIGUSR2, on_usr2);
		sigemptyset(&both);
		sigaddset(&both, SIGUSR1);
		sigaddset(&both, SIGUSR2);
		sigprocmask(SIG_BLOCK, &both, NULL);
		for (int i = 0; i < n; i++) {
			kids[i] = fork();
			if (kids[i] < 0)
				return 1;
			if (kids[i] == 0) {
				while (!go_child)
					sigsuspend(&old);
				make_sites(k);
				_exit(0);
			}
		}
		printf("waiting %d\n", n);
		fflush(stdout);
		while (go < 2)
			sigsuspend(&old);
		for (int i = 0; i < n; i++) {
			kill(kids[i], SIGUSR2);
			waitpid(kids[i], NULL, 0);
			nanosleep(&gap, NULL);
		}
		free(kids);
		printf("forked %d\n", n);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "zombies")) {
		int n = atoi(argv[2]), k = atoi(argv[3]);
		siginfo_t info;

		sigprocmask(SIG_BLOCK, &block, NULL);
		for (int i = 0; i < n; i++) {
			pid_t kid = fork();

			if (kid < 0)
				return 1;
			if (kid == 0) {
				make_sites(k);
				_exit(0);
			}
			/* Exited, and left a zombie: WNOWAIT does not reap. */
			if (waitid(P_PID, kid, &info, WEXITED | WNOWAIT))
				return 1;
		}
		printf("exited %d\n", n);
		fflush(stdout);
		while (go < 2)
			sigsuspend(&old);
		for (int i = 0; i < n; i++)
			if (wait(NULL) < 0)
				return 1;
		printf("reaped %d\n", n);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "hold")) {
		make_sites(atoi(argv[2]));
		printf("held %s\n", argv[2]);
		fflush(stdout);
		for (;;)
			pause();
	}
	fprintf(stderr, "usage: site_churn fork N K MS | hold K | zombies N K\n");
	return 2;
}
