// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/cpu.h"
#include "daemon/procs.h"
#include "daemon/unwind.h"
#include "lib/hash.h"
#include "symbolizer/symbolizer.h"

#define LEAF_CACHE_SLOTS 16381	/* prime */

/*
 * Where, relative to the user stack pointer, the return address of the
 * function at (object, offset) is: >= 0 bytes, or -1 when the function has
 * set up its frame (the frame-pointer walk is then right) or is unknown.
 * A direct-mapped cache: bounded by construction, a miss only costs a CFI
 * lookup.
 */
struct leaf_slot {
	uint64_t dev;
	uint64_t ino;
	uint64_t off;
	int16_t ret_off;
	bool used;
};

struct unwind {
	struct symbolizer *sym;
	struct leaf_slot *leaf;
};

struct unwind *unwind__new(struct symbolizer *sym)
{
	struct unwind *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->sym = sym;
	u->leaf = calloc(LEAF_CACHE_SLOTS, sizeof(*u->leaf));
	if (!u->leaf) {
		free(u);
		return NULL;
	}
	return u;
}

void unwind__free(struct unwind *u)
{
	if (!u)
		return;
	free(u->leaf);
	free(u);
}

static int leaf_ret_offset(struct unwind *u, const struct proc_map *m, int pid, uint64_t off)
{
	uint64_t h = hash__u64(hash__u64(hash__u64(HASH_SEED, m->dev), m->ino), off);
	struct leaf_slot *slot = &u->leaf[hash__final(h) % LEAF_CACHE_SLOTS];
	struct sym_object_key key = {m->path, m->dev, m->ino, pid, m->start, m->end};
	int ret_off;

	if (slot->used && slot->dev == m->dev && slot->ino == m->ino && slot->off == off)
		return slot->ret_off;
	if (symbolizer__ret_offset(u->sym, &key, off, &ret_off) || ret_off < 0 ||
	    ret_off >= PROFD_STACK_COPY || ret_off % 8)
		ret_off = -1;
	*slot = (struct leaf_slot){m->dev, m->ino, off, (int16_t)ret_off, true};
	return ret_off;
}

/* The return address the frame-pointer walk skipped, or 0 if none was. */
static uint64_t leaf_caller(struct unwind *u, struct procs *procs, const struct profd_sample *s,
			    const uint64_t *uf, size_t nu, const uint8_t *stack)
{
	const struct proc_maps *pm;
	const struct proc_map *m;
	uint64_t ret;
	int ret_off;

	if (nu == 0 || !stack)
		return 0;
	pm = procs__maps_for(procs, s->pid, s->exec_seq, uf[0]);
	m = proc_maps__find(pm, uf[0]);
	if (!m)
		return 0;
	ret_off = leaf_ret_offset(u, m, s->pid, uf[0] - m->start + m->offset);
	if (ret_off < 0 || ret_off + 8 > (int)s->stack_len)
		return 0;
	memcpy(&ret, stack + ret_off, sizeof(ret));
	/* A return address points into code, and isn't already the next frame. */
	if (!proc_maps__find(pm, ret) || (nu > 1 && uf[1] == ret))
		return 0;
	return ret;
}

size_t unwind__user_frames(struct unwind *u, struct procs *procs, const struct profd_sample *s,
			   size_t size, uint64_t *out, size_t max)
{
	const uint64_t *frames = (const uint64_t *)(s + 1);
	size_t nk = s->nk, nu = s->nu, n = 0;
	const uint8_t *stack = NULL;
	uint64_t caller;

	if (sizeof(*s) + (nk + nu) * 8 > size)
		return 0;
	if (s->stack_len && sizeof(*s) + (nk + nu) * 8 + s->stack_len <= size)
		stack = (const uint8_t *)(frames + nk + nu);
	frames += nk;
	if (nu == 0 || max == 0)
		return 0;
	out[n++] = frames[0];
	caller = (s->flags & PROFD_SF_UREGS) ? leaf_caller(u, procs, s, frames, nu, stack) : 0;
	if (caller && n < max)
		out[n++] = caller;
	for (size_t i = 1; i < nu && n < max; i++)
		out[n++] = frames[i];
	return n;
}
