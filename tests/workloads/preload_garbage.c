// SPDX-License-Identifier: BSD-2-Clause
/*
 * preload_garbage: a process that calls libprofd_heap.so's sample functions
 * (preloaded) with garbage, as a hostile or broken program could: zero and
 * absurd sizes, unknown allocator numbers, wrong means, pointers it never
 * allocated, frees of random addresses.  Waits for SIGUSR1, then makes
 * 1000 of each and prints "done".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(void)
{
	void (*sampled)(void *, size_t, int, void *, size_t) = dlsym(RTLD_DEFAULT, "profd_heap_sampled");
	void (*freed)(void *) = dlsym(RTLD_DEFAULT, "profd_heap_freed");
	size_t mean = getenv("MEAN") ? strtoull(getenv("MEAN"), NULL, 10) : 524288;

	if (!sampled || !freed) {
		puts("no libprofd_heap.so");
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	puts("ready");
	fflush(stdout);
	while (!go)
		pause();
	srand(1);
	for (int i = 0; i < 1000; i++) {
		sampled((void *)(uintptr_t)rand(), (size_t)-1, 999, (void *)0xdeadbeef, mean);
		sampled(NULL, 10, 1, NULL, mean);
		sampled((void *)(uintptr_t)(0x1000 + 64 * i), 100, 999, NULL, mean);
		sampled((void *)(uintptr_t)(0x9000000 + 64 * i), 100, 1, NULL, mean + 1);
		freed((void *)(uintptr_t)rand());
	}
	puts("done");
	fflush(stdout);
	pause();
	return 0;
}
