/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * builder: one thread beside the event loop for the slow half of a reply:
 * symbolizing (which may open and parse objects it has not seen, for
 * seconds under load), building and encoding a profile.  While it works the
 * loop goes on answering /health, reading the rings and taking other
 * profiles.
 *
 * Jobs run one at a time, in the order submitted, so the symbolizer they
 * use needs no lock: it is the builder thread's alone.  run() runs on that
 * thread; done() then runs on the loop's thread with run()'s result.
 */
#ifndef PROFD_BUILDER_H
#define PROFD_BUILDER_H

#include <stdint.h>

struct builder;
struct event_base;

typedef int (*builder_run_fn)(void *arg);
/* err: run()'s result, or -ECANCELED for a job that never ran (shutdown). */
typedef void (*builder_done_fn)(void *arg, int err);

struct builder_stats {
	uint64_t jobs_done;	/* over the daemon's life */
	uint64_t busy_ns;	/* time spent in run() */
	uint64_t cpu_ns;	/* the builder thread's CPU time in run() */
	int queued;		/* submitted, not yet done (the running one included) */
};

/* fault_delay_ms: each job first sleeps this long (PROFD_FAULT_BUILD_DELAY_MS,
 * for tests); 0 in production. */
int builder__new(struct event_base *base, long fault_delay_ms, struct builder **out);
/* Queue a job: 0, or negative errno (then neither callback will run). */
int builder__submit(struct builder *b, builder_run_fn run, builder_done_fn done, void *arg);
void builder__stats(struct builder *b, struct builder_stats *st);
/*
 * Wait for the job running to finish, then call done() of every job, those
 * that never ran with -ECANCELED.  From the loop's thread; NULL is fine.
 */
void builder__free(struct builder *b);

#endif
