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
	char comm[16];
	uint64_t *frames;	/* nk kernel frames, then nu user frames (unwound) */
	size_t cap;		/* frames' room */
};

struct offcpu_pending;

/* slots: threads that can be off CPU with a kept switch at once (rounded up
 * to sets of four); a thread finds its slot among the four of its set, tid
 * modulo the sets, and takes the first of them when all four are other
 * threads' (whose time is lost, counted). */
int offcpu_pending__new(size_t slots, struct offcpu_pending **out);
void offcpu_pending__free(struct offcpu_pending *p);

/* Hold s's stacks (its kernel frames, and its user frames as unwound) until
 * its switch-in.  0 or -ENOMEM. */
int offcpu_pending__put(struct offcpu_pending *p, const struct profd_sample *s,
			const uint64_t *uframes, size_t nu);
/* The stack e's time belongs to, or NULL (its switch-out was lost, or
 * overwritten); valid until the next put or take. */
const struct offcpu_stack *offcpu_pending__take(struct offcpu_pending *p,
						const struct profd_offcpu_end *e);
/*
 * A session's share of a kept wait, counted per window as fgprof counts
 * wall time: the part of the wait inside the session.
 *  - OFFCPU_OWN: it went off CPU in the session, kept for it (st's mask
 *    names the slot: definite, or undecided for the daemon to decide):
 *    the session counts the switch, and the wait from its switch-out.
 *  - OFFCPU_PART: it went off CPU before the session began, kept for a
 *    session running then (a slot outlives its session, and with Alloy
 *    scraping two routes at once the program stays attached from one
 *    scrape to the next): the wait from the session's start, if the
 *    session targets its process (the caller asks).
 *  - OFFCPU_NONE: neither (kept for other sessions only, since this one
 *    began: not its target).
 * start: when the session began, off_ns: when the wait did, both
 * CLOCK_MONOTONIC ns.
 */
enum offcpu_share { OFFCPU_NONE, OFFCPU_OWN, OFFCPU_PART };
enum offcpu_share offcpu__share(const struct offcpu_stack *st, int slot, int64_t start,
				uint64_t off_ns);
/* The part of a wait from off_ns to end_ns inside a window from start on:
 * 0 if none. */
uint64_t offcpu__part(int64_t start, uint64_t off_ns, uint64_t end_ns);
/* What fn says of a held stack in offcpu_pending__each. */
enum offcpu_each { OFFCPU_SKIP, OFFCPU_COUNT, OFFCPU_DROP };
/* Each held stack, to fn, which says whether it counts (NULL: each does),
 * or is to be dropped (its switch-in will never come): the kept switch-outs
 * still waiting for their switch-in.  Returns how many counted. */
size_t offcpu_pending__each(struct offcpu_pending *p,
			    enum offcpu_each (*fn)(const struct offcpu_stack *st, void *ctx),
			    void *ctx);
/* Stacks overwritten before their switch-in came. */
uint64_t offcpu_pending__overwritten(const struct offcpu_pending *p);

/* What a kept switch stands for: estimated switches in 16.16 fixed point,
 * and nanoseconds (time / p). */
void offcpu__weight(const struct profd_offcpu_end *e, uint64_t *switches_fp, uint64_t *ns);

#endif
