// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp_target: CPU in code built without frame pointers (the Makefile
 * builds this file with -fomit-frame-pointer), along
 *
 *   main -> outer_fn -> middle_fn -> inner_fn
 *
 * each with a kilobyte of locals, so the stack to unwind is ~3 KiB deep
 * and every frame needs CFI: a frame-pointer walk finds nothing.
 *
 *   nofp_target [SECONDS]
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Many live values at once, so GCC spends rbp as a general register too. */
NOINLINE static uint64_t inner_fn(volatile uint64_t *buf, uint64_t seed)
{
	uint64_t a = seed, b = seed * 3, c = seed ^ 0x9e37, d = seed + 7, e = seed << 3,
		 f = seed >> 2, g = ~seed, h = seed * 5;

	for (int i = 0; i < 200000; i++) {
		a = a * 6364136223846793005ULL + b;
		b ^= a >> 17;
		c += b * d;
		d ^= c << 5;
		e += d ^ f;
		f = f * 31 + e;
		g ^= f >> 11;
		h += g * a;
		buf[i & 127] = h;
	}
	return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h;
}

NOINLINE static uint64_t middle_fn(uint64_t seed)
{
	volatile uint64_t buf[128];
	uint64_t r = inner_fn(buf, seed);

	return r + buf[seed & 127];
}

NOINLINE static uint64_t outer_fn(uint64_t seed)
{
	volatile uint64_t buf[128];

	buf[seed & 127] = seed;
	return middle_fn(seed + buf[(seed + 1) & 127]) ^ buf[seed & 127];
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.1, end = now() + secs;
	uint64_t seed = 1;

	do
		sink = outer_fn(seed++);
	while (now() < end);
	return 0;
}
