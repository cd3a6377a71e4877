/*
 * Threads that alternate burning CPU and sleeping under known functions,
 * for the wall-clock profile's test (tests/sys/t_wall.sh):
 *
 *   thread wall_busy:   busy_burn   burns 60 ms of its CPU time, then
 *                       busy_sleep  sleeps 20 ms (nanosleep), again and again
 *   thread wall_sleepy: sleepy_burn burns 15 ms, then
 *                       sleepy_sleep sleeps 60 ms
 *
 * for SECONDS (default 4).  Each phase is timed in wall time, so a burn
 * phase on a loaded machine includes the time its thread waited for a
 * CPU, as a wall-clock profile counts it.  At the end it prints one line
 * per function, "NAME NANOSECONDS" (CLOCK_MONOTONIC), one per thread,
 * "THREAD NANOSECONDS" (from its start to its end), then when each ran,
 * "span NAME START END" (CLOCK_REALTIME nanoseconds, a profile's clock: the
 * truth within any window), and "done".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Each phase's and thread's intervals: 8 an iteration of 75 ms or more, for 600 s at most. */
#define MAX_SPANS 16384

static int64_t deadline;
static volatile uint64_t sink;

struct spans {
	int64_t start[MAX_SPANS], end[MAX_SPANS];	/* CLOCK_REALTIME */
	size_t n;
};

static void span_add(struct spans *s, int64_t start, int64_t end)
{
	if (s->n < MAX_SPANS) {
		s->start[s->n] = start;
		s->end[s->n++] = end;
	}
}

static int64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* CPU work until this thread has used ms of CPU time since the call. */
static void burn(int ms)
{
	int64_t until = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ms * 1000000ll;
	uint64_t x = sink;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < until)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

static void nap(int ms)
{
	struct timespec ts = {0, ms * 1000000l};

	nanosleep(&ts, NULL);
}

/* Code after a call, so that -O2 makes it a call, not a jump (a tail call
 * would leave the caller's frame out of the stack). */
#define NOT_A_TAIL_CALL() __asm__ volatile("" ::: "memory")

/* Each phase its own function, never inlined: the stacks the profile shows. */
__attribute__((noinline)) static void busy_burn(void)
{
	burn(60);
	NOT_A_TAIL_CALL();
}

__attribute__((noinline)) static void busy_sleep(void)
{
	nap(20);
	NOT_A_TAIL_CALL();
}

__attribute__((noinline)) static void sleepy_burn(void)
{
	burn(15);
	NOT_A_TAIL_CALL();
}

__attribute__((noinline)) static void sleepy_sleep(void)
{
	nap(60);
	NOT_A_TAIL_CALL();
}

static struct phase {
	const char *name;
	void (*fn)(void);
	int64_t ns;		/* wall time spent in it, in all */
	struct spans spans;
} phases[] = {
	{"busy_burn", busy_burn},
	{"busy_sleep", busy_sleep},
	{"sleepy_burn", sleepy_burn},
	{"sleepy_sleep", sleepy_sleep},
};

static struct thread {
	const char *name;
	struct phase *a, *b;	/* run in turn */
	int64_t ns;		/* its life, start to end */
	struct spans spans;
} threads[] = {
	{"wall_busy", &phases[0], &phases[1]},
	{"wall_sleepy", &phases[2], &phases[3]},
};
#define NTHREADS (sizeof(threads) / sizeof(threads[0]))

static void timed(struct phase *p)
{
	int64_t r0 = clock_ns(CLOCK_REALTIME), t0 = clock_ns(CLOCK_MONOTONIC);

	p->fn();
	p->ns += clock_ns(CLOCK_MONOTONIC) - t0;
	span_add(&p->spans, r0, clock_ns(CLOCK_REALTIME));
}

static void *run(void *arg)
{
	struct thread *t = arg;
	int64_t r0 = clock_ns(CLOCK_REALTIME), t0 = clock_ns(CLOCK_MONOTONIC);

	pthread_setname_np(pthread_self(), t->name);
	while (clock_ns(CLOCK_MONOTONIC) < deadline) {
		timed(t->a);
		timed(t->b);
	}
	t->ns = clock_ns(CLOCK_MONOTONIC) - t0;
	span_add(&t->spans, r0, clock_ns(CLOCK_REALTIME));
	return NULL;
}

static void print_spans(const char *name, const struct spans *s)
{
	for (size_t i = 0; i < s->n; i++)
		printf("span %s %lld %lld\n", name, (long long)s->start[i], (long long)s->end[i]);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 4;
	pthread_t tids[NTHREADS];

	if (seconds <= 0 || seconds > 600) {
		fprintf(stderr, "usage: wall_target [SECONDS]\n");
		return 2;
	}
	deadline = clock_ns(CLOCK_MONOTONIC) + (int64_t)(seconds * 1e9);
	for (size_t i = 0; i < NTHREADS; i++)
		if (pthread_create(&tids[i], NULL, run, &threads[i])) {
			perror("pthread_create");
			return 1;
		}
	for (size_t i = 0; i < NTHREADS; i++)
		pthread_join(tids[i], NULL);
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		printf("%s %lld\n", phases[i].name, (long long)phases[i].ns);
	for (size_t i = 0; i < NTHREADS; i++)
		printf("%s %lld\n", threads[i].name, (long long)threads[i].ns);
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		print_spans(phases[i].name, &phases[i].spans);
	for (size_t i = 0; i < NTHREADS; i++)
		print_spans(threads[i].name, &threads[i].spans);
	printf("done\n");
	return 0;
}
