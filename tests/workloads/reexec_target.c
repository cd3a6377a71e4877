// SPDX-License-Identifier: BSD-2-Clause
/*
 * A process that re-execs itself every millisecond of CPU: each exec
 * generation burns ~1 ms in reexec_burn() and execs the next, N times in
 * all, then exits.  Every generation gets new mappings (ASLR), which live
 * too briefly to be read from /proc most of the time.  The last one
 * burns 300 ms: long enough to be read, so its samples are symbolized.
 *
 *   reexec_target N    N generations, then exit printing "done"
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Process CPU time: it carries on across exec, so each generation gets
 * its millisecond of CPU however loaded the machine is. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long reexec_burn(double seconds)
{
	volatile unsigned long x = 0;
	double end = now() + seconds;

	while (now() < end)
		for (int i = 0; i < 1000; i++)
			x += i * 2654435761u;
	return x;
}

int main(int argc, char **argv)
{
	long left = argc > 1 ? atol(argv[1]) : 0;
	char next[32], self[4096];
	ssize_t len;

	reexec_burn(left <= 1 ? 0.3 : 0.001);
	if (left <= 1) {
		puts("done");
		return 0;
	}
	snprintf(next, sizeof(next), "%ld", left - 1);
	/* By its path, not /proc/self/exe: the kernel names a process after
	 * the last component of the path it was exec'd by ("exe"). */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 1;
	self[len] = '\0';
	execl(self, argv[0], next, (char *)NULL);
	perror("execl");
	return 1;
}
