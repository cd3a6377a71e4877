// SPDX-License-Identifier: BSD-2-Clause
/*
 * alloc_swap: a process that takes its allocator away under the daemon's
 * probes (issue 26's bad input).  It keeps 64 MiB in 64 KiB blocks at
 * keep_site() and churns 64 MiB at churn_site(), then replaces the text of
 * the object named OBJECT (libc.so.6, or libprofd_heap.so when preloaded):
 *
 *   alloc_swap OBJECT unmap STOPFILE   munmap()s its executable mapping
 *   alloc_swap OBJECT FILE STOPFILE    maps FILE over it (MAP_FIXED)
 *
 * From then on it cannot call libc (or the preload), so it speaks to the
 * kernel by raw system calls only: it prints "swapped", waits for STOPFILE
 * to exist and exits 0.  It waits for SIGUSR1 before allocating and prints
 * "ready" first.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define KiB 1024L
#define MiB (1024L * 1024)

static volatile sig_atomic_t go;
static void *kept[1024];

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

/* libc's syscall() is in the text this program unmaps. */
static long raw6(long n, long a, long b, long c, long d, long e, long f)
{
	long ret;
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
	ret = x0;
#else
#error "alloc_swap: x86_64 and aarch64 only"
#endif
	return ret;
}

__attribute__((noinline)) void keep_site(void)
{
	for (int i = 0; i < 1024; i++) {
		kept[i] = malloc(64 * KiB);
		memset(kept[i], 1, 64);
	}
}

__attribute__((noinline)) void churn_site(void)
{
	for (long i = 0; i < 64 * MiB / (4 * KiB); i++) {
		char *volatile p = malloc(4 * KiB);

		p[0] = 1;
		free(p);
	}
}

/* Everything after the swap: no libc. */
__attribute__((noinline, noreturn)) static void after_swap(long start, long len, long fd, const char *stop)
{
	static const char swapped[] = "swapped\n", failed[] = "swap failed\n";
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	long r;

	if (fd < 0)
		r = raw6(SYS_munmap, start, len, 0, 0, 0, 0);
	else
		r = raw6(SYS_mmap, start, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0);
	if (r < 0 || (fd >= 0 && r != start)) {
		raw6(SYS_write, 1, (long)failed, sizeof(failed) - 1, 0, 0, 0);
		raw6(SYS_exit_group, 3, 0, 0, 0, 0, 0);
	}
	raw6(SYS_write, 1, (long)swapped, sizeof(swapped) - 1, 0, 0, 0);
	/* At most two minutes. */
	for (int i = 0; i < 6000; i++) {
		if (raw6(SYS_faccessat, AT_FDCWD, (long)stop, F_OK, 0, 0, 0) == 0)
			break;
		raw6(SYS_nanosleep, (long)&nap, 0, 0, 0, 0, 0);
	}
	raw6(SYS_exit_group, 0, 0, 0, 0, 0, 0);
	__builtin_unreachable();
}

int main(int argc, char **argv)
{
	unsigned long start = 0, end = 0;
	char line[4096];
	FILE *maps;
	int fd = -1;

	if (argc != 4) {
		fprintf(stderr, "usage: alloc_swap OBJECT unmap|FILE STOPFILE\n");
		return 2;
	}
	if (strcmp(argv[2], "unmap") != 0 && (fd = open(argv[2], O_RDONLY | O_CLOEXEC)) < 0) {
		perror(argv[2]);
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	puts("ready");
	fflush(stdout);
	while (!go)
		pause();
	keep_site();
	churn_site();

	maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long s, e;
		char perms[5];
		const char *name = strrchr(line, '/');

		if (sscanf(line, "%lx-%lx %4s", &s, &e, perms) == 3 && perms[2] == 'x' && name &&
		    strncmp(name + 1, argv[1], strlen(argv[1])) == 0) {
			start = s;
			end = e;
			break;
		}
	}
	if (!start) {
		printf("no executable mapping of %s\n", argv[1]);
		return 2;
	}
	printf("kept; replacing %lx-%lx of %s\n", start, end, argv[1]);
	fflush(stdout);
	/* A signal's return would go through libc's restorer: none from here. */
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	after_swap((long)start, (long)(end - start), fd, argv[3]);
}
