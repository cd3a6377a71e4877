// SPDX-License-Identifier: BSD-2-Clause
/*
 * mallocbench [SECONDS [SIZE]]: malloc(SIZE) + free pairs in a loop for
 * SECONDS (default 2), then prints "ns_per_pair N cpu_ns C": wall-clock
 * and CPU time (its own, traps included; time other processes took the
 * CPU is not) per pair.  Waits for SIGUSR1 first if PAUSE is set in the
 * environment, so a profiler can attach.  With FORK set, a child it forks
 * runs the loop, and it waits for the child.  With FORKS=N set, it forks N
 * children that exit at once, one at a time, and prints "us_per_fork W
 * cpu_us C" instead: what a fork costs it (a postmaster's, per backend).
 */
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	go = 1;
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

__attribute__((noinline)) static void pairs(long n, size_t size)
{
	for (long i = 0; i < n; i++) {
		char *volatile p = malloc(size);

		p[0] = 1;
		free(p);
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2, t0, t, c0;
	size_t size = argc > 2 ? strtoul(argv[2], NULL, 0) : 64;
	long n = 0, batch = 1000;

	if (getenv("PAUSE")) {
		signal(SIGUSR1, on_usr1);
		printf("ready\n");
		fflush(stdout);
		while (!go)
			pause();
	}
	if (getenv("FORKS")) {
		long forks = atol(getenv("FORKS"));
		double c1;

		t0 = now();
		c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
		for (long i = 0; i < forks; i++) {
			pid_t child = fork();

			if (child < 0)
				return 1;
			if (child == 0)
				_exit(0);
			waitpid(child, NULL, 0);
		}
		t = now();
		c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
		printf("us_per_fork %.1f cpu_us %.1f\n", (t - t0) * 1e6 / (forks ? forks : 1),
		       (c1 - c0) * 1e6 / (forks ? forks : 1));
		return 0;
	}
	if (getenv("FORK")) {
		pid_t child = fork();
		int status;

		if (child < 0)
			return 1;
		if (child > 0)
			return waitpid(child, &status, 0) == child && WIFEXITED(status) ?
				       WEXITSTATUS(status) : 1;
	}
	t0 = now();
	c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	do {
		pairs(batch, size);
		n += batch;
		t = now();
	} while (t - t0 < secs);
	printf("ns_per_pair %.1f cpu_ns %.1f\n", (t - t0) * 1e9 / n,
	       (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e9 / n);
	return 0;
}
