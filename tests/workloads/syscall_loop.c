// SPDX-License-Identifier: BSD-2-Clause
/*
 * syscall_loop [N]: N getppid() syscalls (default 5,000,000) as fast as
 * it can, then "ns_per_syscall X".  What a hook that puts every syscall
 * on the kernel's traced path costs a process that is not profiled
 * (bench/syscall_cost.sh).  syscall(2), not getppid(3): libc may cache.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	struct timespec a, b;

	if (n <= 0)
		n = 5000000;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ns_per_syscall %.1f\n",
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)n);
	return 0;
}
