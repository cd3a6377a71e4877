/* Prints the host's TSC frequency in kHz, measured against CLOCK_MONOTONIC_RAW
 * (median of 5 rounds of 50 ms).  tests/vm/run.sh passes it to the guest as
 * tsc_early_khz=: under TCG the guest's TSC is the host's, and a kernel
 * without ACPI (no HPET, no PM timer) whose PIT calibration fails, as it often
 * does under TCG, would otherwise mark the TSC unstable and fall back to
 * jiffies (perf sampling at 250 Hz instead of 999 Hz). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static int64_t ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The TSC and the clock read as close together as we can get them. */
static void pair(uint64_t *tsc, int64_t *t)
{
	int64_t best = INT64_MAX;
	for (int i = 0; i < 20; i++) {
		int64_t a = ns();
		uint64_t c = rdtsc();
		int64_t b = ns();
		if (b - a < best) {
			best = b - a;
			*tsc = c;
			*t = a + (b - a) / 2;
		}
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(void)
{
	double khz[5];
	for (int r = 0; r < 5; r++) {
		uint64_t c0, c1;
		int64_t t0, t1;
		pair(&c0, &t0);
		struct timespec d = {0, 50 * 1000 * 1000};
		nanosleep(&d, NULL);
		pair(&c1, &t1);
		khz[r] = (double)(c1 - c0) * 1e6 / (double)(t1 - t0);
	}
	qsort(khz, 5, sizeof(khz[0]), cmp);
	printf("%.0f\n", khz[2]);
	return 0;
}
