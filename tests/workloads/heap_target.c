// SPDX-License-Identifier: BSD-2-Clause
/*
 * heap_target: allocations with known sizes at known sites.
 *
 *   heap_target [now|wait [CHURN_MIB]]   waits for SIGUSR1 (with "now": doesn't
 *                                       wait), then:
 *     retain_malloc()   keeps 48 MiB in 1..8 KiB malloc blocks
 *     retain_calloc()   keeps 16 MiB in 4 KiB calloc blocks
 *     retain_memalign() keeps  8 MiB in 64 KiB posix_memalign blocks
 *     churn()           mallocs and frees CHURN_MIB (default 256) MiB in 4 KiB blocks
 *   prints "churning" before churn(), "done" after, and sleeps until killed.
 * Sizes are chosen so each site's total is exact.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB (1024L * 1024)

static volatile sig_atomic_t go;
static void **keep;
static size_t nkeep;
static long churn_mib = 256;

static void on_usr1(int sig)
{
	go = 1;
}

static void hold(void *p)
{
	keep[nkeep++] = p;
}

__attribute__((noinline)) void retain_malloc(void)
{
	/* 1, 2, 3 ... 8 KiB, repeated: 36 KiB per round, 48 MiB in all. */
	long total = 0;

	while (total < 48 * MiB)
		for (int k = 1; k <= 8 && total < 48 * MiB; k++) {
			void *p = malloc(k * 1024);

			memset(p, 1, 64);
			hold(p);
			total += k * 1024;
		}
}

__attribute__((noinline)) void retain_calloc(void)
{
	for (long i = 0; i < 16 * MiB / 4096; i++)
		hold(calloc(4, 1024));
}

__attribute__((noinline)) void retain_memalign(void)
{
	for (long i = 0; i < 8 * MiB / (64 * 1024); i++) {
		void *p = NULL;

		if (posix_memalign(&p, 4096, 64 * 1024) == 0)
			hold(p);
	}
}

__attribute__((noinline)) void churn(void)
{
	for (long i = 0; i < churn_mib * MiB / 4096; i++) {
		char *volatile p = malloc(4096);

		p[0] = 1;
		free(p);
	}
}

int main(int argc, char **argv)
{
	keep = calloc(1 << 20, sizeof(*keep));
	signal(SIGUSR1, on_usr1);
	printf("ready\n");
	fflush(stdout);
	go = argc > 1 && !strcmp(argv[1], "now");
	if (argc > 2)
		churn_mib = atol(argv[2]);
	while (!go)
		pause();
	retain_malloc();
	retain_calloc();
	retain_memalign();
	printf("churning\n");
	fflush(stdout);
	churn();
	printf("done %zu\n", nkeep);
	fflush(stdout);
	for (;;)
		pause();
}
