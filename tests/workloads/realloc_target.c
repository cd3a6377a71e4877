// SPDX-License-Identifier: BSD-2-Clause
/*
 * realloc_target: the allocator calls whose outcome decides what is live.
 * Waits for SIGUSR1, then:
 *   realloc_fails()    malloc(1 MiB), realloc to an impossible size: NULL,
 *                      the 1 MiB block stays live (at malloc)
 *   realloc_grows()    malloc(64), realloc to 3 MiB: 3 MiB live (at realloc)
 *   realloc_zero()     malloc(4 MiB), realloc(p, 0): glibc frees it
 *   calloc_overflows() calloc(2^62 + 1, 4): n * size overflows, NULL
 * prints "done" and sleeps until killed.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB (1024L * 1024)

static volatile sig_atomic_t go;
/* volatile: the compiler must neither see nor warn about the sizes. */
static volatile size_t huge = SIZE_MAX / 2, many = (1ull << 62) + 1, zero;
static void *volatile keep[2];

static void on_usr1(int sig)
{
	go = 1;
}

__attribute__((noinline)) void realloc_fails(void)
{
	char *p = malloc(MiB);

	memset(p, 1, 64);
	if (realloc(p, huge))
		abort();
	keep[0] = p;
}

__attribute__((noinline)) void realloc_grows(void)
{
	char *p = malloc(64);

	p[0] = 1;
	keep[1] = realloc(p, 3 * MiB);
}

__attribute__((noinline)) void realloc_zero(void)
{
	char *p = malloc(4 * MiB);

	p[0] = 1;
	if (realloc(p, zero))
		abort();
}

__attribute__((noinline)) void calloc_overflows(void)
{
	if (calloc(many, 4))
		abort();
}

int main(void)
{
	signal(SIGUSR1, on_usr1);
	printf("ready\n");
	fflush(stdout);
	while (!go)
		pause();
	realloc_fails();
	realloc_grows();
	realloc_zero();
	calloc_overflows();
	printf("done\n");
	fflush(stdout);
	for (;;)
		pause();
}
