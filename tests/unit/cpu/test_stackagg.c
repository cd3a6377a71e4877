// SPDX-License-Identifier: BSD-2-Clause
/* A CPU session's aggregation of stacks. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/stackagg.h"
#include "profile/stackprof.h"

struct seen {
	int n;
	int64_t total, total_ns;
	int64_t hot;		/* value of the stack with user frames {1, 2, 3} */
};

static int visit(const struct raw_stack *st, void *ctx)
{
	struct seen *s = ctx;
	static const uint64_t hot[] = {1, 2, 3};

	s->n++;
	s->total += st->values[0];
	s->total_ns += st->values[1];
	cr_assert_eq(st->values[1], st->values[0] * 10101010, "cpu = samples * period");
	if (st->nu == 3 && !memcmp(st->uframes, hot, sizeof(hot)) && st->tid == 7 && !st->nk &&
	    !strcmp(st->comm, "worker"))
		s->hot = st->values[0];
	return 0;
}

Test(stackagg, merges_equal_stacks_and_keeps_others_apart)
{
	static const uint64_t u1[] = {1, 2, 3}, u2[] = {1, 2, 4}, k1[] = {0xffffffff81000000};
	struct stackagg a = {};
	struct seen s = {};

	for (int i = 0; i < 5; i++)
		cr_assert_eq(stackagg__add(&a, 100, 7, 0, "worker", NULL, 0, u1, 3, 1), 0);
	/* A different user frame, thread, thread name or kernel stack is another entry. */
	stackagg__add(&a, 100, 7, 0, "worker", NULL, 0, u2, 3, 1);
	stackagg__add(&a, 100, 8, 0, "worker", NULL, 0, u1, 3, 1);
	stackagg__add(&a, 100, 7, 0, "other", NULL, 0, u1, 3, 1);
	stackagg__add(&a, 100, 7, 0, "worker", k1, 1, u1, 3, 2);
	/* A comm that fills all 16 bytes has no NUL and is still compared right. */
	stackagg__add(&a, 100, 7, 0, "0123456789abcdef", NULL, 0, u1, 3, 1);
	stackagg__add(&a, 100, 7, 0, "0123456789abcdef", NULL, 0, u1, 3, 1);
	cr_assert_eq(a.n, 6);
	stackagg__iter(&(struct stackagg_iter){&a, 10101010, false}, visit, &s);
	cr_assert_eq(s.n, 6);
	cr_assert_eq(s.total, 5 + 1 + 1 + 1 + 2 + 2);
	cr_assert_eq(s.hot, 5);
	stackagg__free(&a);
}

Test(stackagg, many_distinct_stacks)
{
	struct stackagg a = {};
	uint64_t u[8];

	for (uint64_t i = 0; i < 20000; i++) {
		for (int k = 0; k < 8; k++)
			u[k] = i * 8 + k;
		cr_assert_eq(stackagg__add(&a, (uint32_t)(i % 50), 1, 0, "x", NULL, 0, u, 8, 1), 0);
	}
	cr_assert_eq(a.n, 20000);
	cr_assert_eq(a.pool_len, 20000 * 8);
	stackagg__free(&a);
}

/* Frozen (the sessions' memory bound): stacks it holds still count, a new
 * one is -ENOSPC and takes nothing; its bytes follow what it holds. */
Test(stackagg, frozen_counts_known_stacks_only)
{
	static const uint64_t u1[] = {1, 2, 3}, u2[] = {4, 5, 6};
	struct stackagg a = {};
	struct seen s = {};
	size_t b0 = stackagg__bytes(&a), b1;

	cr_assert_eq(stackagg__add(&a, 100, 7, 0, "worker", NULL, 0, u1, 3, 1), 0);
	b1 = stackagg__bytes(&a);
	cr_assert_gt(b1, b0);
	a.frozen = true;
	cr_assert_eq(stackagg__add(&a, 100, 7, 0, "worker", NULL, 0, u1, 3, 4), 0);
	cr_assert_eq(stackagg__add(&a, 100, 7, 0, "worker", NULL, 0, u2, 3, 1), -ENOSPC);
	cr_assert_eq(a.n, 1);
	cr_assert_eq(stackagg__bytes(&a), b1);
	stackagg__iter(&(struct stackagg_iter){&a, 10101010, false}, visit, &s);
	cr_assert_eq(s.total, 5);
	stackagg__free(&a);
	cr_assert_eq(stackagg__bytes(&a), 0);
}
