/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * offcpu: the daemon's half of off-CPU sampling (bpf/offcpu.bpf.c).  A
 * kept switch reaches it in two records: the thread's stacks at switch-out
 * (unwound as any sample, then held here by thread), and, when the thread
 * comes back on CPU, the time it was off and the probability it was kept
 * with.  offcpu_pending joins the two; the sampler adds the joined stack to
 * every off-CPU session the switch-out named, weighted by
 * offcpu__weight().  On the loop's thread.
 */
#ifndef PROFD_OFFCPU_H
#define PROFD_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profd_offcpu_end;
struct profd_sample;

/* A switch-out's stack, as held until its switch-in. */
struct offcpu_stack {
	uint32_t pid, tid, exec_seq;
	uint32_t sessions;	/* the sample's mask: definite slots, undecided ones << 16 */
	uint16_t seq;
	uint16_t nk, nu;
	bool used;
	uint64_t gen;		/* the sessions' generation when it was put */
	char comm[16];
	uint64_t *frames;	/* nk kernel frames, then nu user frames (unwound) */
	size_t cap;		/* frames' room */
};			/* 64 bytes on LP64 */

struct offcpu_pending;

/* slots: threads that can be off CPU with a kept switch at once (rounded up
 * to sets of four); a thread finds its slot among the four of its set, tid
 * modulo the sets, and takes the first of them when all four are other
 * threads' (whose time is lost, counted). */
int offcpu_pending__new(size_t slots, struct offcpu_pending **out);
void offcpu_pending__free(struct offcpu_pending *p);

/* Hold s's stacks (its kernel frames, and its user frames as unwound) until
 * its switch-in.  gen: the newest session's generation (a number each
 * session takes as it starts, greater than any before it).  0 or -ENOMEM. */
int offcpu_pending__put(struct offcpu_pending *p, const struct profd_sample *s,
			const uint64_t *uframes, size_t nu, uint64_t gen);
/* The stack e's time belongs to, or NULL (its switch-out was lost, or
 * overwritten); valid until the next put or take. */
const struct offcpu_stack *offcpu_pending__take(struct offcpu_pending *p,
						const struct profd_offcpu_end *e);
/*
 * Whether st's wait is the session's in slot whose generation is gen: its
 * mask names the slot (definite or undecided), and it went off CPU after
 * the session began.  A slot outlives its session: where the sched_switch
 * program stays attached for another session meanwhile, a wait kept for
 * the slot's earlier session ends in its later one, and must not count
 * there (its time began before that profile did).
 */
bool offcpu_stack__of(const struct offcpu_stack *st, int slot, uint64_t gen);
/* Each held stack of the session in slot whose generation is gen
 * (offcpu_stack__of), to fn, which says whether it counts (NULL: each
 * does): the kept switch-outs still waiting for their switch-in.  Returns
 * how many counted. */
size_t offcpu_pending__each(const struct offcpu_pending *p, int slot, uint64_t gen,
			    bool (*fn)(const struct offcpu_stack *st, void *ctx), void *ctx);
/* Stacks overwritten before their switch-in came. */
uint64_t offcpu_pending__overwritten(const struct offcpu_pending *p);

/* What a kept switch stands for: estimated switches in 16.16 fixed point,
 * and nanoseconds (time / p). */
void offcpu__weight(const struct profd_offcpu_end *e, uint64_t *switches_fp, uint64_t *ns);

#endif
