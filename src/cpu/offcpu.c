// SPDX-License-Identifier: BSD-2-Clause
/* offcpu: switch-out stacks joined to their switch-in times (the contract: offcpu.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/abi/cpu.h"
#include "bpf/abi/offcpu.h"
#include "cpu/offcpu.h"

/*
 * A thread's stack lives in one of the WAYS slots of its set, tid modulo
 * the sets: tids that share a set (n / WAYS apart) keep their own until
 * more than WAYS of them wait at once.  Sets, not the next slots on:
 * consecutive tids (a process's threads) would crowd those.
 */
#define WAYS 4

struct offcpu_pending {
	struct offcpu_stack *v;	/* by tid (slot()): a thread has one switch in progress */
	size_t n;
	uint64_t overwritten;
};

int offcpu_pending__new(size_t slots, struct offcpu_pending **out)
{
	struct offcpu_pending *p = calloc(1, sizeof(*p));

	/* Whole sets of WAYS. */
	slots = (slots + WAYS - 1) / WAYS * WAYS;
	if (!p || !slots)
		goto fail;
	p->v = calloc(slots, sizeof(*p->v));
	if (!p->v)
		goto fail;
	p->n = slots;
	*out = p;
	return 0;
fail:
	free(p);
	return -ENOMEM;
}

void offcpu_pending__free(struct offcpu_pending *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].frames);
	free(p->v);
	free(p);
}

static struct offcpu_stack *slot(struct offcpu_pending *p, uint32_t tid, size_t i)
{
	return &p->v[tid % (p->n / WAYS) * WAYS + i];
}

/* tid's held stack, or NULL. */
static struct offcpu_stack *find(struct offcpu_pending *p, uint32_t tid)
{
	for (size_t i = 0; i < WAYS; i++) {
		struct offcpu_stack *e = slot(p, tid, i);

		if (e->used && e->tid == tid)
			return e;
	}
	return NULL;
}

int offcpu_pending__put(struct offcpu_pending *p, const struct profd_sample *s,
			const uint64_t *uframes, size_t nu)
{
	struct offcpu_stack *e = find(p, s->tid);
	size_t need = (size_t)s->nk + nu;

	/* Its own earlier one (whose switch-in never came) goes; else a free
	 * slot; else the first, another thread's, whose time is lost. */
	for (size_t i = 0; !e && i < WAYS; i++) {
		struct offcpu_stack *c = slot(p, s->tid, i);

		if (!c->used)
			e = c;
	}
	if (!e) {
		e = slot(p, s->tid, 0);
		p->overwritten++;
	}
	e->used = false;
	if (need > e->cap) {
		uint64_t *f = realloc(e->frames, need * sizeof(*f));

		if (!f)
			return -ENOMEM;
		e->frames = f;
		e->cap = need;
	}
	if (s->nk)
		memcpy(e->frames, s + 1, (size_t)s->nk * 8);
	if (nu)
		memcpy(e->frames + s->nk, uframes, nu * 8);
	e->pid = s->pid;
	e->tid = s->tid;
	e->exec_seq = s->exec_seq;
	e->sessions = s->session;
	e->seq = s->pad;
	e->nk = s->nk;
	e->nu = (uint16_t)nu;
	memcpy(e->comm, s->comm, sizeof(e->comm));
	e->used = true;
	return 0;
}

const struct offcpu_stack *offcpu_pending__take(struct offcpu_pending *p,
						const struct profd_offcpu_end *e)
{
	struct offcpu_stack *s = find(p, e->tid);

	if (!s || s->pid != e->pid || s->seq != e->seq)
		return NULL;
	s->used = false;
	return s;
}

enum offcpu_share offcpu__share(const struct offcpu_stack *st, int slot, int64_t start,
				uint64_t off_ns)
{
	uint32_t bit = 1u << slot;

	/* The session's bit goes to the kernel after its start is read: a
	 * switch-out with it is no earlier.  One before the start, with the
	 * bit, was kept for the slot's session before (whose records were all
	 * read as it ended, but whose waits end later). */
	if ((int64_t)off_ns >= start)
		return (st->sessions & (bit | bit << 16)) ? OFFCPU_OWN : OFFCPU_NONE;
	return OFFCPU_PART;
}

uint64_t offcpu__part(int64_t start, uint64_t off_ns, uint64_t end_ns)
{
	uint64_t from = (int64_t)off_ns > start ? off_ns : (uint64_t)start;

	return end_ns > from ? end_ns - from : 0;
}

size_t offcpu_pending__each(struct offcpu_pending *p,
			    enum offcpu_each (*fn)(const struct offcpu_stack *st, void *ctx),
			    void *ctx)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++) {
		if (!p->v[i].used)
			continue;
		switch (fn ? fn(&p->v[i], ctx) : OFFCPU_COUNT) {
		case OFFCPU_COUNT:
			n++;
			break;
		case OFFCPU_DROP:
			p->v[i].used = false;
			break;
		case OFFCPU_SKIP:
			break;
		}
	}
	return n;
}

uint64_t offcpu_pending__overwritten(const struct offcpu_pending *p)
{
	return p->overwritten;
}

void offcpu__weight(const struct profd_offcpu_end *e, uint64_t *switches_fp, uint64_t *ns)
{
	uint64_t p = e->p;

	/* The kernel never sends less; a hostile ring is not a thing, but
	 * a division by zero is never right. */
	if (p < PROFD_OFFCPU_P_MIN)
		p = PROFD_OFFCPU_P_MIN;
	if (p > PROFD_OFFCPU_P_ONE)
		p = PROFD_OFFCPU_P_ONE;
	*switches_fp = (1ull << 32) / p;
	/* ns < 2^47 (39 hours) keeps ns << 16 in 64 bits; longer is cut. */
	*ns = e->ns < (1ull << 47) ? (e->ns << 16) / p : e->ns / p * PROFD_OFFCPU_P_ONE;
}
