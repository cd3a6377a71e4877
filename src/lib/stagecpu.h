/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stagecpu: a thread's CPU time, split by the stage it was in.  Stages nest
 * (a ring drain calls the unwinder, which is its own stage): each stretch of
 * CPU time is charged to the innermost stage only, so the stages add up to
 * no more than the thread's time and can be summed.  One clock read per
 * enter or leave (CLOCK_THREAD_CPUTIME_ID, ~0.3 µs).  Not thread-safe: one
 * per thread, read from that thread.
 */
#ifndef PROFD_LIB_STAGECPU_H
#define PROFD_LIB_STAGECPU_H

#include <stdint.h>

#define STAGECPU_MAX 8		/* stages: 0 .. STAGECPU_MAX-1 */
#define STAGECPU_DEPTH 8	/* nesting; deeper enters are charged to the parent */

struct stagecpu {
	uint64_t ns[STAGECPU_MAX];	/* CPU time charged to each stage */
	int stack[STAGECPU_DEPTH];
	int depth;			/* enters not yet left, the ignored ones too */
	int64_t mark;			/* thread CPU time at the last enter or leave */
};

void stagecpu__enter(struct stagecpu *s, int stage);
void stagecpu__leave(struct stagecpu *s);

#endif
