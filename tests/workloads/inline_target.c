// SPDX-License-Identifier: BSD-2-Clause
/*
 * inline_target: a CPU workload with a known shape, and a fixture for the
 * symbolizer's tests.
 *
 *   inline_target [SECONDS]
 *
 * Burns CPU for SECONDS (default: one short round) along the call chain
 * main -> run_workload -> hot_a / hot_b, all out of line, with hot_a given
 * twice the work of hot_b (2:1 CPU).  Both call mix(), which is always
 * inlined, so every sample in them lands in inlined code.
 *
 * Tests find lines by their MARK comments with grep -n: keep each MARK on
 * the line it names, and keep the names unique.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Iterations of mix() per hot_b call; hot_a does twice as many.  A round
 * takes about 10 ms on a current x86 core, so a run stops close to on time. */
#define ROUND_ITERS (1u << 20)

/* Stores to a volatile keep the compiler from discarding the work. */
static volatile uint64_t sink;
/* Read at run time so the iteration counts aren't constants that GCC could
 * specialise hot_a/hot_b for (a .constprop clone would rename them). */
static volatile uint32_t round_iters = ROUND_ITERS;

/* A 64-bit finaliser (splitmix64's): a few multiply/shift steps that can't
 * be folded away. */
static inline __attribute__((always_inline)) uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL; /* MARK: mix-multiply */
	x ^= x >> 27;
	return x;
}

/* Out of line under their own names: noclone stops GCC from making a
 * hot_a.constprop.0 (clang has no such attribute and needs none). */
#ifdef __clang__
#define OUT_OF_LINE __attribute__((noinline))
#else
#define OUT_OF_LINE __attribute__((noinline, noclone))
#endif

/* The bodies differ (seed, + vs ^) so identical code folding can't merge
 * them, but cost the same per iteration, so CPU follows the iteration
 * counts. */
OUT_OF_LINE uint64_t hot_a(uint64_t n)
{
	uint64_t acc = 0x1234;

	for (uint64_t i = 0; i < n; i++)
		acc += mix(acc + i); /* MARK: hot_a-calls-mix */
	return acc;
}

OUT_OF_LINE uint64_t hot_b(uint64_t n)
{
	uint64_t acc = 0x5678;

	for (uint64_t i = 0; i < n; i++)
		acc ^= mix(acc + i); /* MARK: hot_b-calls-mix */
	return acc;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

OUT_OF_LINE uint64_t run_workload(double seconds)
{
	double deadline = now() + seconds;
	uint64_t rounds = 0;

	do {
		uint64_t n = round_iters;

		sink = hot_a(2 * n); /* MARK: run_workload-calls-hot_a */
		sink = hot_b(n);     /* MARK: run_workload-calls-hot_b */
		rounds++;
	} while (now() < deadline);
	return rounds;
}

int main(int argc, char **argv)
{
	double seconds = 0;

	if (argc > 1) {
		char *end;

		seconds = strtod(argv[1], &end);
		if (*end || seconds < 0) {
			fprintf(stderr, "usage: %s [SECONDS]\n", argv[0]);
			return 2;
		}
	}
	printf("inline_target: %llu rounds\n", (unsigned long long)run_workload(seconds));
	return 0;
}
