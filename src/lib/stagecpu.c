// SPDX-License-Identifier: BSD-2-Clause
#include <string.h>

#include "lib/clock.h"
#include "lib/stagecpu.h"

/* Charge the monotonic time since the last mark to the stage on top. */
static void charge(struct stagecpu *s)
{
	int64_t now = clock__mono_ns();
	int top = s->depth < STAGECPU_DEPTH ? s->depth : STAGECPU_DEPTH;

	if (top > 0 && now > s->mark)
		s->wall[s->stack[top - 1]] += (uint64_t)(now - s->mark);
	s->mark = now;
}

/* The span is over: share its CPU time out by its stages' wall time; what
 * rounding leaves goes to the outermost stage, so the stages sum to it. */
static void close_span(struct stagecpu *s, int outer)
{
	int64_t now = clock__thread_cpu_ns();
	uint64_t cpu = now > s->span_cpu ? (uint64_t)(now - s->span_cpu) : 0, wall = 0, given = 0;

	for (int i = 0; i < STAGECPU_MAX; i++)
		wall += s->wall[i];
	for (int i = 0; wall && i < STAGECPU_MAX; i++) {
		uint64_t part = (uint64_t)((unsigned __int128)cpu * s->wall[i] / wall);

		s->ns[i] += part;
		given += part;
	}
	s->ns[outer] += cpu - given;
	memset(s->wall, 0, sizeof(s->wall));
}

void stagecpu__enter(struct stagecpu *s, int stage)
{
	charge(s);
	/* wall is zero here: close_span clears it. */
	if (s->depth == 0)
		s->span_cpu = clock__thread_cpu_ns();
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
	if (s->depth == 0)
		close_span(s, s->stack[0]);
}
