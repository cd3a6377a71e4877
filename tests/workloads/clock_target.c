// SPDX-License-Identifier: BSD-2-Clause
/*
 * clock_target: CPU in the vDSO, along main -> tick -> clock_gettime ->
 * __vdso_clock_gettime.  The vDSO has no file: profd must name its
 * functions from the kernel's image and unwind through them by its CFI.
 *
 *   clock_target [SECONDS]
 */
#include <stdlib.h>
#include <time.h>

static volatile long sink;

__attribute__((noinline)) static void tick(void)
{
	struct timespec ts;

	for (int i = 0; i < 1000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
}

int main(int argc, char **argv)
{
	struct timespec now, end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += argc > 1 ? atoi(argv[1]) : 1;
	do {
		tick();
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec ||
		 (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	return 0;
}
