// SPDX-License-Identifier: BSD-2-Clause
/*
 * qsort_target: CPU in a qsort comparator, called from libc's sort (built
 * without frame pointers), along
 *
 *   main -> sort_rounds -> qsort -> ... -> cmp_keys
 *
 * The comparator has a frame pointer, but the frames between it and
 * sort_rounds are libc's: a frame-pointer walk skips sort_rounds.
 *
 *   qsort_target [SECONDS]
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))
#define N 4096

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Slow on purpose, so the time is in here rather than in libc's moves. */
NOINLINE static int cmp_keys(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	for (int i = 0; i < 20; i++) {
		a = a * 0x9e3779b97f4a7c15ULL + 1;
		b = b * 0x9e3779b97f4a7c15ULL + 1;
	}
	return a < b ? -1 : a > b;
}

NOINLINE static void sort_rounds(uint64_t *v, uint64_t seed)
{
	for (int i = 0; i < N; i++)
		v[i] = (seed + i) * 0x2545f4914f6cdd1dULL;
	qsort(v, N, sizeof(*v), cmp_keys);
	sink = v[N / 2];
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.1, end = now() + secs;
	static uint64_t v[N];
	uint64_t seed = 1;

	do
		sort_rounds(v, seed++);
	while (now() < end);
	return 0;
}
