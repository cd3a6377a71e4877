/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stagecpu: a thread's CPU time, split by the stage it was in.  Stages nest
 * (a ring drain calls the unwinder, which is its own stage): each stretch of
 * CPU time is charged to the innermost stage only, so the stages add up to
 * no more than the thread's time and can be summed.
 *
 * The thread's CPU clock is read at the outermost enter and leave only (a
 * span: a drain, a timer's work).  Inside a span the monotonic clock, read
 * from the vDSO, times each stage, and at the span's end its CPU time is
 * shared out in proportion.  Why: CLOCK_THREAD_CPUTIME_ID is a system call
 * (~1 µs on the development VM, with an irq-restore the hypervisor
 * charges), and the unwinder and title stages are entered once per sample:
 * read there, it was a third of the daemon's CPU under an off-CPU profile
 * of pgbench (docs/benchmarks.md).  A span is short and does not block, so
 * its wall time is its CPU time but for preemption, which falls on its
 * stages alike.  Not thread-safe: one per thread, read from that thread.
 */
#ifndef PROFD_LIB_STAGECPU_H
#define PROFD_LIB_STAGECPU_H

#include <stdint.h>

#define STAGECPU_MAX 8		/* stages: 0 .. STAGECPU_MAX-1 */
#define STAGECPU_DEPTH 8	/* nesting; deeper enters are charged to the parent */

struct stagecpu {
	uint64_t ns[STAGECPU_MAX];	/* CPU time charged to each stage, whole spans */
	uint64_t wall[STAGECPU_MAX];	/* the open span's monotonic time per stage */
	int stack[STAGECPU_DEPTH];
	int depth;			/* enters not yet left, the ignored ones too */
	int64_t mark;			/* monotonic time at the last enter or leave */
	int64_t span_cpu;		/* thread CPU time at the span's enter */
};

void stagecpu__enter(struct stagecpu *s, int stage);
void stagecpu__leave(struct stagecpu *s);

#endif
