/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stackagg: counts of identical stacks, per process, thread and thread name,
 * as a CPU session collects them.  Entries sit in one array and their
 * frames in one pool, indexed by lib/htab.
 */
#ifndef PROFD_STACKAGG_H
#define PROFD_STACKAGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/htab.h"
#include "profile/stackprof.h"

#define STACKAGG_COMM_LEN 16
/* Distinct stacks one session keeps (~1 KiB each at most); past it, new
 * stacks are counted as lost. */
#define STACKAGG_MAX_STACKS (1u << 20)

struct stackagg_entry {
	uint64_t count;
	uint64_t weight;	/* stackagg__add_weighted's */
	uint64_t tag;		/* and its tag: STACKAGG_TAG_WAIT | major << 32 | wait event,
				 * | a STACKAGG_TAG_STATE, or 0 */
	uint32_t pid;
	uint32_t tid;
	uint32_t exec_seq;
	char comm[STACKAGG_COMM_LEN];
	uint16_t nk;
	uint16_t nu;
	size_t frames;		/* position in the pool: nk kernel, then nu user frames */
	uint32_t hash;
};

struct stackagg {
	struct stackagg_entry *v;
	size_t n, cap;
	uint64_t *pool;
	size_t pool_len, pool_cap;
	struct htab index;
	/* Set by the owner: count stacks already held, take no new one
	 * (stackagg__add says -ENOSPC).  The sessions' memory bound. */
	bool frozen;
};

/* Count a stack count times.  0, -ENOMEM, -E2BIG past STACKAGG_MAX_STACKS,
 * or -ENOSPC for a new stack while frozen. */
int stackagg__add(struct stackagg *a, uint32_t pid, uint32_t tid, uint32_t exec_seq,
		  const char *comm, const uint64_t *kframes, size_t nk, const uint64_t *uframes,
		  size_t nu, uint64_t count);
/* The same, adding weight to a second value beside the count (off-CPU:
 * estimated switches, 16.16 fixed point, and nanoseconds); stacks with
 * different tags count apart. */
#define STACKAGG_TAG_WAIT (1ull << 63)	/* a PostgreSQL wait event: the label wait_event */
/* A wall-clock sample's state, the label state: on CPU, runnable but
 * waiting for one (preempted: runqueue delay), or blocked. */
#define STACKAGG_TAG_CPU (1ull << 60)
#define STACKAGG_TAG_RUNQ (2ull << 60)
#define STACKAGG_TAG_SLEEP (3ull << 60)
#define STACKAGG_TAG_STATE (3ull << 60)
int stackagg__add_weighted(struct stackagg *a, uint32_t pid, uint32_t tid, uint32_t exec_seq,
			   const char *comm, const uint64_t *kframes, size_t nk,
			   const uint64_t *uframes, size_t nu, uint64_t count, uint64_t weight,
			   uint64_t tag);
void stackagg__free(struct stackagg *a);
/* What a holds in memory: its arrays' capacity and its index. */
size_t stackagg__bytes(const struct stackagg *a);

/* For stackprof__build: values are [count, count * period]; or, weighted,
 * [count rounded from 16.16 fixed point, weight]. */
struct stackagg_iter {
	const struct stackagg *agg;
	int64_t period;
	bool weighted;
};

int stackagg__iter(void *iter, raw_stack_fn fn, void *ctx);

#endif
