/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sampler: CPU profiling sessions.  Several run at once, each with its own
 * perf events (its own frequency) and its own targets; the BPF program
 * tells them apart by attach cookie, and the sampler, a consumer of
 * bpfobj's samples, files each under its session.  Everything runs on the
 * loop's thread.
 */
#ifndef PROFD_SAMPLER_H
#define PROFD_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracer/targets.h"

struct bpfobj;
struct event_base;
struct pprof;
struct sampler;
struct session;
struct symbolizer;

#define SAMPLER_MIN_FREQ 1
#define SAMPLER_MAX_FREQ 1000

/*
 * Called once, from the loop, when a session ends by its timer or by
 * session__stop().  The session is still valid: build its profile, then
 * session__free() it (which may be done inside the callback).
 */
typedef void (*session_done_fn)(struct session *s, void *ctx);

/* What a session samples; sampler.c's table of kinds says what each
 * one's profile is (sample types, comments). */
enum session_kind {
	SESSION_CPU,		/* CPU time: cpu-clock samples at the session's frequency */
	/* Off-CPU time: the targets' threads' stacks where they blocked,
	 * weighted by how long (cpu/offcpu.h). */
	SESSION_OFFCPU,
	/* Wall-clock time: both in one profile, in the same sample types
	 * (samples/count, time/nanoseconds): a CPU sample weighs 1/F s, a
	 * kept switch what it stands for, and a thread's time preempted
	 * (runnable, waiting for a CPU) counts as off-CPU time too; so each
	 * thread's stacks add up to its time. */
	SESSION_WALL,
	SESSION_KINDS,
};

struct session_opts {
	enum session_kind kind;
	int frequency;		/* Hz, SAMPLER_MIN_FREQ..SAMPLER_MAX_FREQ; unused off-CPU */
	int seconds;		/* >= 1; the session ends by itself after this */
	const struct targets *targets;	/* copied; NULL: the whole system */
	unsigned labels;	/* the labels the profile's samples carry (profile/labels.h) */
	session_done_fn done;
	void *ctx;
};

struct session_stats {
	uint64_t samples;	/* samples received */
	uint64_t lost_ringbuf;
	uint64_t lost_procs;
	uint64_t lost_memory;	/* no memory to keep a sample, or past the stacks' bound */
	uint64_t compat;	/* of 32-bit processes (user frames by frame pointers only) */
	uint64_t err_ustack;
	uint64_t err_kstack;
	uint64_t no_uregs;	/* user frames from the kernel's walk */
	uint64_t not_target;	/* undecided in the kernel, not a target after all */
	uint64_t stack_bytes;	/* user stack copied by the kernel side, in all */
	int64_t start_ns;	/* CLOCK_REALTIME */
	int64_t duration_ns;	/* so far, or in all once ended */
	int frequency;
	bool running;
	enum session_kind kind;
	/* Off-CPU: the kernel side's counters while it ran (all sessions'):
	 * target switches, those kept, and those lost (ring full, the
	 * thread's slot taken by another, no user registers: kernel stack
	 * only); and kept switches whose time was lost (their stack
	 * overwritten or not seen). */
	uint64_t switches, kept, switch_lost_ringbuf, switch_lost_threads, switch_no_uregs;
	uint64_t lost_unjoined;
	/* kept waits still in progress when the session ended: each counted
	 * up to its end (its part inside the session) */
	uint64_t unended;
	uint64_t pg_no_wait;	/* kept switches of postgres whose wait event is unknown */
};

struct sampler_stats {
	uint64_t samples;	/* over the daemon's life */
	uint64_t lost;
	uint64_t sessions_started;
	int sessions_running;
	uint64_t compat;	/* samples of 32-bit processes, sessions ended */
	size_t stack_bytes;	/* the sessions' stack tables, all together */
	size_t stack_limit;	/* their bound (sampler__set_stack_limit); 0: none */
};

/* Debugging knobs (PROFD_DEBUG_UNWIND, cmd/env.h). */
struct sampler_opts {
	bool debug_unwind;	/* log why stacks end early */
	bool trace_unwind;	/* and every unwinding step */
};

/* unwind_sym: the unwinder's, used on the loop's thread as samples arrive
 * (CFI only), so never the one a build uses (a session's profile is built
 * with its taker's).  opts may be NULL. */
int sampler__new(struct event_base *base, struct bpfobj *o, struct symbolizer *unwind_sym,
		 const struct sampler_opts *opts, struct sampler **out);
void sampler__free(struct sampler *sm);

/*
 * Start a session.  Errors: -EOPNOTSUPP (off-CPU, and this kernel has no
 * usable sched_switch tracepoint), -EINVAL (bad frequency/seconds/target),
 * -ESRCH (a pid does not exist), -ENOENT (an exe path does not exist),
 * -EBUSY (PROFD_MAX_SESSIONS already running); errbuf says why.
 */
int sampler__start(struct sampler *sm, const struct session_opts *opts, struct session **out,
		   char *errbuf, size_t errlen);

/* End the session now, keeping what it collected; done runs from the loop. */
void session__stop(struct session *s);
/* Detach if running (without calling done) and free.  NULL is fine. */
void session__free(struct session *s);

void session__stats(const struct session *s, struct session_stats *st);
/*
 * A symbolized CPU profile of what an ended session collected, built in
 * two halves (see stackprof.h): session__snapshot() on the loop's thread,
 * then session__build() on any thread, with a symbolizer nobody else uses
 * meanwhile; the session must be left alone (but for session__stats())
 * until it returns.
 */
int session__snapshot(struct session *s);
int session__build(struct session *s, struct symbolizer *sym, struct pprof **out);
/* The session as a profile source (profile/source.h): the same two halves;
 * freeing the source frees the session. */
struct profile_source *session__source(struct session *s);

void sampler__stats(struct sampler *sm, struct sampler_stats *st);

/*
 * Hold the sessions' stack tables, all together, to bytes (0: no bound but
 * STACKAGG_MAX_STACKS per session): past it, samples of stacks a session
 * already holds still count, and new ones are lost (counted, and said in
 * the profile's comment), logged once per session.
 */
void sampler__set_stack_limit(struct sampler *sm, size_t bytes);
/* Mean off-CPU nanoseconds a kept switch stands for (abi/offcpu.h's
 * default unless set); for sessions started from now on. */
void sampler__set_offcpu_period(struct sampler *sm, uint64_t ns);
struct unwind_stats;
void sampler__unwind_stats(const struct sampler *sm, struct unwind_stats *st);

#endif
