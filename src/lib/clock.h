/* SPDX-License-Identifier: BSD-2-Clause */
/* clock: nanoseconds from clock_gettime(), the one time helper. */
#ifndef PROFD_LIB_CLOCK_H
#define PROFD_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t clock__ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Intervals and deadlines: never jumps. */
static inline int64_t clock__mono_ns(void)
{
	return clock__ns(CLOCK_MONOTONIC);
}

/* Wall-clock time, for timestamps in profiles. */
static inline int64_t clock__real_ns(void)
{
	return clock__ns(CLOCK_REALTIME);
}

/* CPU time this process has used, for costs in the log. */
static inline int64_t clock__cpu_ns(void)
{
	return clock__ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* CPU time the calling thread has used: a build's cost, whatever the
 * loop's thread does meanwhile. */
static inline int64_t clock__thread_cpu_ns(void)
{
	return clock__ns(CLOCK_THREAD_CPUTIME_ID);
}

#endif
