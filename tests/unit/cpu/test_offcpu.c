// SPDX-License-Identifier: BSD-2-Clause
/*
 * Off-CPU's daemon half: a switch-out's stack joined to its switch-in's
 * time (and nothing else's), the weights time / p and 1 / p, and weighted
 * stacks kept apart by their wait event.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/abi/cpu.h"
#include "bpf/abi/offcpu.h"
#include "bpf/abi/targets.h"
#include "cpu/offcpu.h"
#include "cpu/stackagg.h"
#include "profile/stackprof.h"

/* A switch-out sample of tid with nk kernel frames (100, 101, ...). */
static struct profd_sample *sample(uint32_t tid, uint16_t seq, uint16_t nk, uint32_t sessions)
{
	struct profd_sample *s = calloc(1, sizeof(*s) + nk * 8);
	uint64_t *k = (uint64_t *)(s + 1);

	cr_assert_not_null(s);
	s->type = PROFD_EV_SAMPLE;
	s->session = sessions;
	s->pid = 1000;
	s->tid = tid;
	s->nk = nk;
	s->flags = PROFD_SF_OFFCPU;
	s->pad = seq;
	strcpy(s->comm, "waiter");
	for (uint16_t i = 0; i < nk; i++)
		k[i] = 100 + i;
	return s;
}

static struct profd_offcpu_end end(uint32_t tid, uint16_t seq, uint32_t p, uint64_t ns)
{
	return (struct profd_offcpu_end){.type = PROFD_EV_OFFCPU, .tid = tid, .pid = 1000,
					 .seq = seq, .p = p, .ns = ns};
}

Test(offcpu, join)
{
	struct offcpu_pending *p;
	struct profd_sample *a = sample(7, 3, 2, 1), *b = sample(7 + 16, 1, 1, 2);
	uint64_t user[] = {0x401000, 0x401100};
	struct profd_offcpu_end e;
	const struct offcpu_stack *st;

	cr_assert_eq(offcpu_pending__new(16, &p), 0);
	cr_assert_eq(offcpu_pending__put(p, a, user, 2), 0);
	/* Another switch of the thread, or another thread: not its time. */
	e = end(7, 2, PROFD_OFFCPU_P_ONE, 5);
	cr_expect_null(offcpu_pending__take(p, &e));
	e = end(8, 3, PROFD_OFFCPU_P_ONE, 5);
	cr_expect_null(offcpu_pending__take(p, &e));
	e = end(7, 3, PROFD_OFFCPU_P_ONE, 5);
	st = offcpu_pending__take(p, &e);
	cr_assert_not_null(st);
	cr_expect_eq(st->nk, 2);
	cr_expect_eq(st->nu, 2);
	cr_expect_eq(st->frames[0], 100);
	cr_expect_eq(st->frames[1], 101);
	cr_expect_eq(st->frames[2], 0x401000);
	cr_expect_eq(st->sessions, 1);
	cr_expect_str_eq(st->comm, "waiter");
	/* Taken once. */
	cr_expect_null(offcpu_pending__take(p, &e));
	/* Threads whose tids share a set (4 apart here: 16 slots, sets of
	 * four) take its other slots: four wait at once, each joined to its
	 * own time. */
	cr_assert_eq(offcpu_pending__put(p, a, user, 2), 0);
	cr_assert_eq(offcpu_pending__put(p, b, NULL, 0), 0);
	for (uint32_t tid = 7 + 32; tid <= 7 + 48; tid += 16) {
		struct profd_sample *c = sample(tid, 1, 1, 1);

		cr_assert_eq(offcpu_pending__put(p, c, NULL, 0), 0);
		free(c);
	}
	cr_expect_eq(offcpu_pending__overwritten(p), 0);
	e = end(7 + 16, 1, PROFD_OFFCPU_P_ONE, 5);
	st = offcpu_pending__take(p, &e);
	cr_assert_not_null(st);
	cr_expect_eq(st->tid, 7 + 16);
	/* A fifth takes the first's slot: its time is lost, counted. */
	cr_assert_eq(offcpu_pending__put(p, b, NULL, 0), 0);
	{
		struct profd_sample *c = sample(7 + 64, 1, 1, 1);

		cr_assert_eq(offcpu_pending__put(p, c, NULL, 0), 0);
		free(c);
	}
	cr_expect_eq(offcpu_pending__overwritten(p), 1);
	e = end(7, 3, PROFD_OFFCPU_P_ONE, 5);
	cr_expect_null(offcpu_pending__take(p, &e));
	e = end(7 + 64, 1, PROFD_OFFCPU_P_ONE, 5);
	cr_expect_not_null(offcpu_pending__take(p, &e));
	/* A thread's own earlier switch-out, never ended, is replaced. */
	cr_assert_eq(offcpu_pending__put(p, b, NULL, 0), 0);
	cr_expect_eq(offcpu_pending__overwritten(p), 1);
	offcpu_pending__free(p);
	free(a);
	free(b);
}

static enum offcpu_each count_tid(const struct offcpu_stack *st, void *ctx)
{
	*(uint32_t *)ctx += st->tid;
	if (st->tid == 666)
		return OFFCPU_SKIP;
	return st->tid == 8 ? OFFCPU_DROP : OFFCPU_COUNT;
}

/* What is still waiting at a session's end: every held stack, to fn,
 * which says which count, and which go; a taken one is not held. */
Test(offcpu, unended)
{
	struct offcpu_pending *p;
	struct profd_sample *a = sample(7, 1, 1, 1), *b = sample(8, 1, 1, 2 << 16),
			    *c = sample(9, 1, 1, 4), *d = sample(666, 1, 1, 4);
	struct profd_offcpu_end e = end(9, 1, PROFD_OFFCPU_P_ONE, 5);
	uint32_t tids = 0;

	cr_assert_eq(offcpu_pending__new(16, &p), 0);
	cr_assert_eq(offcpu_pending__put(p, a, NULL, 0), 0);
	cr_assert_eq(offcpu_pending__put(p, b, NULL, 0), 0);
	cr_assert_eq(offcpu_pending__put(p, c, NULL, 0), 0);
	cr_assert_eq(offcpu_pending__put(p, d, NULL, 0), 0);
	cr_expect_eq(offcpu_pending__each(p, count_tid, &tids), 2, "666 skipped, 8 dropped");
	cr_expect_eq(tids, 7 + 8 + 9 + 666);
	cr_expect_eq(offcpu_pending__each(p, NULL, NULL), 3, "8 is gone");
	e = end(8, 1, PROFD_OFFCPU_P_ONE, 5);
	cr_expect_null(offcpu_pending__take(p, &e), "dropped");
	e = end(9, 1, PROFD_OFFCPU_P_ONE, 5);
	cr_assert_not_null(offcpu_pending__take(p, &e));
	cr_expect_eq(offcpu_pending__each(p, NULL, NULL), 2);
	offcpu_pending__free(p);
	free(a);
	free(b);
	free(c);
	free(d);
}

/*
 * A session's share of a kept wait, per window: its own where the switch-out
 * was in it with its slot in the mask (definite or undecided); a part where
 * the wait began before it, whatever the mask (a slot outlives its session:
 * the bit may be an earlier session's); none where it began in the session
 * kept for others only.  The part is the wait's overlap with the window.
 */
Test(offcpu, share)
{
	struct offcpu_pending *p;
	struct profd_sample *a = sample(7, 1, 1, 1u << 1), *b = sample(8, 1, 1, (1u << 1) << 16);
	struct profd_offcpu_end e = end(7, 1, PROFD_OFFCPU_P_ONE, 5);
	const struct offcpu_stack *st;

	cr_assert_eq(offcpu_pending__new(16, &p), 0);
	cr_assert_eq(offcpu_pending__put(p, a, NULL, 0), 0);
	cr_assert_eq(offcpu_pending__put(p, b, NULL, 0), 0);
	st = offcpu_pending__take(p, &e);
	cr_assert_not_null(st);
	cr_expect_eq(offcpu__share(st, 1, 1000, 1000), OFFCPU_OWN, "off CPU as it began");
	cr_expect_eq(offcpu__share(st, 1, 1000, 5000), OFFCPU_OWN);
	cr_expect_eq(offcpu__share(st, 1, 1000, 999), OFFCPU_PART, "its slot's earlier session's");
	cr_expect_eq(offcpu__share(st, 0, 1000, 999), OFFCPU_PART, "before it: any slot");
	cr_expect_eq(offcpu__share(st, 0, 1000, 5000), OFFCPU_NONE, "in it, not kept for it");
	e = end(8, 1, PROFD_OFFCPU_P_ONE, 5);
	st = offcpu_pending__take(p, &e);
	cr_assert_not_null(st);
	cr_expect_eq(offcpu__share(st, 1, 1000, 5000), OFFCPU_OWN, "undecided");
	/* The overlap of [off, end) with [start, ...). */
	cr_expect_eq(offcpu__part(1000, 1500, 4000), 2500, "inside: all of it");
	cr_expect_eq(offcpu__part(1000, 200, 4000), 3000, "from the start");
	cr_expect_eq(offcpu__part(1000, 200, 900), 0, "ended before it");
	cr_expect_eq(offcpu__part(1000, 200, 1000), 0);
	offcpu_pending__free(p);
	free(a);
	free(b);
}

Test(offcpu, weight)
{
	struct profd_offcpu_end e = end(1, 1, PROFD_OFFCPU_P_ONE, 20000000);
	uint64_t sw, ns;

	offcpu__weight(&e, &sw, &ns);
	cr_expect_eq(sw, 1ull << 16, "one switch, 16.16");
	cr_expect_eq(ns, 20000000);
	e.p = PROFD_OFFCPU_P_ONE / 4;
	offcpu__weight(&e, &sw, &ns);
	cr_expect_eq(sw, 4ull << 16);
	cr_expect_eq(ns, 80000000);
	/* Never below the kernel's floor, whatever the record says. */
	e.p = 0;
	offcpu__weight(&e, &sw, &ns);
	cr_expect_eq(sw, (1ull << 32) / PROFD_OFFCPU_P_MIN);
	/* A wait of days does not overflow. */
	e.p = PROFD_OFFCPU_P_MIN;
	e.ns = 3ull * 24 * 3600 * 1000000000;
	offcpu__weight(&e, &sw, &ns);
	cr_expect_eq(ns, e.ns / PROFD_OFFCPU_P_MIN * PROFD_OFFCPU_P_ONE);
}

struct seen {
	int n;
	int64_t sw, ns;
	char wait[4][64];
};

static int visit(const struct raw_stack *st, void *ctx)
{
	struct seen *s = ctx;

	s->sw += st->values[0];
	s->ns += st->values[1];
	strcpy(s->wait[s->n++], st->wait_event ? st->wait_event : "-");
	return 0;
}

Test(offcpu, weighted_stacks_by_wait_event)
{
	struct stackagg a = {};
	uint64_t k[] = {1, 2};
	uint64_t lock = STACKAGG_TAG_WAIT | 15ull << 32 | 0x03000005;
	struct seen s = {};

	/* Two kept switches of one stack in one wait, one in another, one in none. */
	cr_assert_eq(stackagg__add_weighted(&a, 1, 2, 0, "w", k, 2, NULL, 0, 1 << 16, 100, lock), 0);
	cr_assert_eq(stackagg__add_weighted(&a, 1, 2, 0, "w", k, 2, NULL, 0, 3 << 15, 50, lock), 0);
	cr_assert_eq(stackagg__add_weighted(&a, 1, 2, 0, "w", k, 2, NULL, 0, 1 << 16, 7,
					    STACKAGG_TAG_WAIT | 15ull << 32 | 0x09000002), 0);
	cr_assert_eq(stackagg__add_weighted(&a, 1, 2, 0, "w", k, 2, NULL, 0, 1 << 16, 1, 0), 0);
	cr_expect_eq(a.n, 3);
	stackagg__iter(&(struct stackagg_iter){&a, 1, true}, visit, &s);
	cr_expect_eq(s.n, 3);
	cr_expect_eq(s.ns, 158);
	/* 1 + 1.5 rounds to 3 (2.5), then 1 and 1. */
	cr_expect_eq(s.sw, 5);
	cr_expect_str_eq(s.wait[0], "Lock:transactionid");
	cr_expect_str_eq(s.wait[1], "Timeout:PgSleep");
	cr_expect_str_eq(s.wait[2], "-");
	stackagg__free(&a);
}
