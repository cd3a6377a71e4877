// SPDX-License-Identifier: BSD-2-Clause
#include "lib/clock.h"
#include "lib/stagecpu.h"

/* Charge the time since the last mark to the stage on top, if any. */
static void charge(struct stagecpu *s)
{
	int64_t now = clock__thread_cpu_ns();
	int top = s->depth < STAGECPU_DEPTH ? s->depth : STAGECPU_DEPTH;

	if (top > 0 && now > s->mark)
		s->ns[s->stack[top - 1]] += (uint64_t)(now - s->mark);
	s->mark = now;
}

void stagecpu__enter(struct stagecpu *s, int stage)
{
	charge(s);
	if (s->depth < STAGECPU_DEPTH)
		s->stack[s->depth] = stage >= 0 && stage < STAGECPU_MAX ? stage : 0;
	s->depth++;
}

void stagecpu__leave(struct stagecpu *s)
{
	if (s->depth <= 0)
		return;
	charge(s);
	s->depth--;
}
