// SPDX-License-Identifier: BSD-2-Clause
/*
 * Short-lived processes: the parent fork+execs itself N times; each child
 * burns CPU for ~20 ms in child_burn() and exits.  At most two run at once.
 *
 *   forker N      parent: start N children, print their count, exit
 *   forker child  one child
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* CPU time, not wall-clock: a child gets its 20 ms of CPU, and so its
 * samples, however loaded the machine is. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long child_burn(double seconds)
{
	volatile unsigned long x = 0;
	double end = now() + seconds;

	while (now() < end)
		for (int i = 0; i < 10000; i++)
			x += i * 2654435761u;
	return x;
}

int main(int argc, char **argv)
{
	int n, running = 0, started = 0;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		child_burn(0.020);
		return 0;
	}
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len <= 0)
		return 1;
	self[len] = '\0';
	n = argc > 1 ? atoi(argv[1]) : 100;
	while (started < n || running > 0) {
		if (started < n && running < 2) {
			pid_t pid = fork();

			if (pid == 0) {
				execl(self, argv[0], "child", (char *)NULL);
				_exit(127);
			}
			if (pid > 0) {
				started++;
				running++;
			}
			continue;
		}
		if (wait(NULL) > 0)
			running--;
	}
	printf("%d\n", started);
	return 0;
}
