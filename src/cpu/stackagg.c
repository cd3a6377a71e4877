// SPDX-License-Identifier: BSD-2-Clause
/* stackagg: a session's counts of identical stacks (the contract: stackagg.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/stackagg.h"
#include "lib/hash.h"
#include "proc/pgwait.h"
#include "profile/stackprof.h"

struct stack_key {
	uint64_t tag;
	uint32_t pid, tid, exec_seq;
	const char *comm;
	const uint64_t *kf, *uf;
	size_t nk, nu;
};

static bool stack_eq(const void *ctx, size_t pos, const void *key)
{
	const struct stackagg *a = ctx;
	const struct stackagg_entry *e = &a->v[pos];
	const struct stack_key *k = key;
	const uint64_t *f = a->pool + e->frames;

	return e->pid == k->pid && e->tid == k->tid && e->exec_seq == k->exec_seq &&
	       e->tag == k->tag &&
	       e->nk == k->nk && e->nu == k->nu &&
	       !strncmp(e->comm, k->comm, STACKAGG_COMM_LEN) &&
	       /* an empty side may be NULL, which memcmp must not be given */
	       (!k->nk || !memcmp(f, k->kf, k->nk * 8)) &&
	       (!k->nu || !memcmp(f + k->nk, k->uf, k->nu * 8));
}

int stackagg__add(struct stackagg *a, uint32_t pid, uint32_t tid, uint32_t exec_seq,
		  const char *comm, const uint64_t *kframes, size_t nk, const uint64_t *uframes,
		  size_t nu, uint64_t count)
{
	return stackagg__add_weighted(a, pid, tid, exec_seq, comm, kframes, nk, uframes, nu, count,
				      0, 0);
}

int stackagg__add_weighted(struct stackagg *a, uint32_t pid, uint32_t tid, uint32_t exec_seq,
			   const char *comm, const uint64_t *kframes, size_t nk,
			   const uint64_t *uframes, size_t nu, uint64_t count, uint64_t weight,
			   uint64_t tag)
{
	struct stack_key k = {tag, pid, tid, exec_seq, comm, kframes, uframes, nk, nu};
	struct stackagg_entry *e;
	struct htab_slot *slot;
	uint64_t h = HASH_SEED;
	size_t clen = strnlen(comm, STACKAGG_COMM_LEN);
	long pos;
	int err;

	if (nk > UINT16_MAX || nu > UINT16_MAX)
		return -EINVAL;
	h = hash__u64(h, ((uint64_t)pid << 32) | tid);
	h = hash__u64(h, exec_seq);
	h = hash__u64(h, tag);
	h = hash__bytes(h, comm, clen);
	h = hash__u64(h, nk);
	h = hash__bytes(h, kframes, nk * 8);
	h = hash__bytes(h, uframes, nu * 8);
	err = htab__reserve(&a->index);
	if (err)
		return err;
	pos = htab__find(&a->index, hash__final(h), stack_eq, a, &k, &slot);
	if (pos >= 0) {
		a->v[pos].count += count;
		a->v[pos].weight += weight;
		return 0;
	}
	if (a->frozen)
		return -ENOSPC;
	if (a->n >= STACKAGG_MAX_STACKS)
		return -E2BIG;
	err = array__grow(&a->v, &a->cap, a->n + 1, sizeof(*a->v));
	err = err ?: array__grow(&a->pool, &a->pool_cap, a->pool_len + nk + nu, sizeof(*a->pool));
	if (err)
		return err;
	e = &a->v[a->n];
	memset(e, 0, sizeof(*e));
	e->count = count;
	e->weight = weight;
	e->tag = tag;
	e->pid = pid;
	e->tid = tid;
	e->exec_seq = exec_seq;
	memcpy(e->comm, comm, clen);
	e->nk = nk;
	e->nu = nu;
	e->frames = a->pool_len;
	e->hash = hash__final(h);
	/* Either side may be empty and NULL, which memcpy must not be given. */
	if (nk)
		memcpy(a->pool + a->pool_len, kframes, nk * 8);
	if (nu)
		memcpy(a->pool + a->pool_len + nk, uframes, nu * 8);
	a->pool_len += nk + nu;
	htab__set(&a->index, slot, e->hash, a->n++);
	return 0;
}

size_t stackagg__bytes(const struct stackagg *a)
{
	return a->cap * sizeof(*a->v) + a->pool_cap * sizeof(*a->pool) + htab__bytes(&a->index);
}

void stackagg__free(struct stackagg *a)
{
	free(a->v);
	free(a->pool);
	htab__free(&a->index);
	memset(a, 0, sizeof(*a));
}

int stackagg__iter(void *iter, raw_stack_fn fn, void *ctx)
{
	const struct stackagg_iter *it = iter;
	const struct stackagg *a = it->agg;

	for (size_t i = 0; i < a->n; i++) {
		const struct stackagg_entry *e = &a->v[i];
		char comm[STACKAGG_COMM_LEN + 1], wait[64];
		struct raw_stack st = {
			.pid = e->pid, .tid = e->tid, .exec_seq = e->exec_seq, .comm = comm,
			.kframes = a->pool + e->frames, .uframes = a->pool + e->frames + e->nk,
			.nk = e->nk, .nu = e->nu,
			.values = {(int64_t)e->count, (int64_t)e->count * it->period},
		};
		int err;

		static const char *const states[] = {NULL, "cpu", "runqueue", "sleep"};

		st.state = states[(e->tag & STACKAGG_TAG_STATE) >> 60];
		if (e->tag & STACKAGG_TAG_WAIT) {
			pgwait__format((uint32_t)e->tag, (uint32_t)(e->tag >> 32) & 0xffff, wait,
				       sizeof(wait));
			st.wait_event = wait;
		}
		if (it->weighted) {
			st.values[0] = (int64_t)((e->count + (1u << 15)) >> 16);
			st.values[1] = (int64_t)e->weight;
		}
		memcpy(comm, e->comm, STACKAGG_COMM_LEN);
		comm[STACKAGG_COMM_LEN] = '\0';
		err = fn(&st, ctx);
		if (err)
			return err;
	}
	return 0;
}
