/*
 * Threads that wait in known ways under known functions, for the off-CPU
 * profile's tests (tests/sys/t_offcpu.sh):
 *
 *   sleep_in_nanosleep   nanosleep(20 ms), again and again
 *   block_in_pipe_read   read() on a pipe that pipe_writer feeds every 20 ms
 *   block_in_futex_wait  pthread_cond_timedwait(20 ms) that nobody signals
 *   short_naps           nanosleep(100 us): switches far shorter than the
 *                        sampling period, so only some are kept
 *   burn_cpu             never blocks
 *
 * for SECONDS (default 4).  Each waiting thread times its own waits: from
 * the call to its return (CLOCK_MONOTONIC), less the CPU time it used
 * meanwhile (CLOCK_THREAD_CPUTIME_ID: the system call's own microseconds,
 * which for 100 us naps on a VM are ~5% of the time).  At the end
 * it prints one line per function, "NAME NANOSECONDS", then
 * "sleep_in_nanosleep.waits N" (how many 20 ms naps it took: on a loaded
 * machine each lasts longer than asked, so time / 20 ms does not count
 * them), and "done".
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int64_t deadline;
static int pipefd[2];
static volatile uint64_t sink;
static long nanosleep_waits;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Wall time less this thread's CPU time: the clock a wait is timed by. */
static int64_t off_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return now_ns() - (ts.tv_sec * 1000000000ll + ts.tv_nsec);
}

static void nap(long ns)
{
	struct timespec ts = {0, ns};

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static int64_t sleep_in_nanosleep(void)
{
	int64_t total = 0;

	while (now_ns() < deadline) {
		int64_t t0 = off_ns();

		nap(20000000);
		total += off_ns() - t0;
		nanosleep_waits++;
	}
	return total;
}

__attribute__((noinline)) static int64_t block_in_pipe_read(void)
{
	int64_t total = 0;
	char c;

	for (;;) {
		int64_t t0 = off_ns();
		ssize_t n = read(pipefd[0], &c, 1);

		total += off_ns() - t0;
		if (n <= 0 || c == 'q')
			break;
	}
	return total;
}

__attribute__((noinline)) static int64_t block_in_futex_wait(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv;
	pthread_condattr_t ca;
	int64_t total = 0;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cv, &ca);
	pthread_mutex_lock(&m);
	while (now_ns() < deadline) {
		int64_t t0 = off_ns(), until = now_ns() + 20000000;
		struct timespec ts = {until / 1000000000, until % 1000000000};

		while (pthread_cond_timedwait(&cv, &m, &ts) != ETIMEDOUT)
			;
		total += off_ns() - t0;
	}
	pthread_mutex_unlock(&m);
	return total;
}

__attribute__((noinline)) static int64_t short_naps(void)
{
	int64_t total = 0;

	while (now_ns() < deadline) {
		int64_t t0 = off_ns();

		nap(100000);
		total += off_ns() - t0;
	}
	return total;
}

__attribute__((noinline)) static int64_t pipe_writer(void)
{
	while (now_ns() < deadline) {
		nap(20000000);
		if (write(pipefd[1], "x", 1) != 1)
			break;
	}
	if (write(pipefd[1], "q", 1) != 1)
		return -1;
	return 0;
}

__attribute__((noinline)) static int64_t burn_cpu(void)
{
	uint64_t x = 1;

	while (now_ns() < deadline)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
	return 0;
}

static const struct {
	const char *name;
	int64_t (*fn)(void);
} threads[] = {
	{"sleep_in_nanosleep", sleep_in_nanosleep},
	{"block_in_pipe_read", block_in_pipe_read},
	{"block_in_futex_wait", block_in_futex_wait},
	{"short_naps", short_naps},
	{"pipe_writer", pipe_writer},
	{"burn_cpu", burn_cpu},
};
#define NTHREADS (sizeof(threads) / sizeof(threads[0]))

static int64_t results[NTHREADS];

static void *run(void *arg)
{
	size_t i = (size_t)arg;

	results[i] = threads[i].fn();
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 4;
	pthread_t tids[NTHREADS];

	if (seconds <= 0 || seconds > 600 || pipe(pipefd)) {
		fprintf(stderr, "usage: offcpu_target [SECONDS]\n");
		return 2;
	}
	deadline = now_ns() + (int64_t)(seconds * 1e9);
	for (size_t i = 0; i < NTHREADS; i++)
		if (pthread_create(&tids[i], NULL, run, (void *)i)) {
			perror("pthread_create");
			return 1;
		}
	for (size_t i = 0; i < NTHREADS; i++)
		pthread_join(tids[i], NULL);
	for (size_t i = 0; i < NTHREADS; i++)
		printf("%s %lld\n", threads[i].name, (long long)results[i]);
	printf("sleep_in_nanosleep.waits %ld\n", nanosleep_waits);
	printf("done\n");
	return 0;
}
