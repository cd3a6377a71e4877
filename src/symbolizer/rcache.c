// SPDX-License-Identifier: BSD-2-Clause
/* The per-object cache of resolved offsets (see obj.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/htab.h"
#include "symbolizer/obj.h"

static uint32_t rc_hash(uint64_t off)
{
	return hash__final(hash__u64(HASH_SEED, off));
}

static bool rc_eq(const void *ctx, size_t pos, const void *key)
{
	return ((const struct rcache *)ctx)->v[pos].off == *(const uint64_t *)key;
}

struct rc_entry *rc__find(const struct rcache *rc, uint64_t off)
{
	long pos = htab__find(&rc->index, rc_hash(off), rc_eq, rc, &off, NULL);

	return pos < 0 ? NULL : &rc->v[pos];
}

int rc__insert(struct rcache *rc, uint64_t off, const struct sym_frame *frames, int n)
{
	struct sym_frame *copy = NULL;
	struct htab_slot *slot;
	struct rc_entry *e;
	size_t oldcap = rc->cap;
	int err;

	if (n) {
		copy = malloc(n * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, frames, n * sizeof(*copy));
	}
	if (rc->n == RC_MAX) {
		/* Full: replace the entry under the clock hand. */
		e = &rc->v[rc->hand];
		rc->hand = (rc->hand + 1) % RC_MAX;
		htab__remove(&rc->index, e->hash, e - rc->v);
		rc->bytes -= e->nframes * sizeof(*e->frames);
		free(e->frames);
	} else {
		err = htab__reserve(&rc->index);
		err = err ?: array__grow(&rc->v, &rc->cap, rc->n + 1, sizeof(*rc->v));
		if (err) {
			free(copy);
			return err;
		}
		rc->bytes += (rc->cap - oldcap) * sizeof(*rc->v);
		e = &rc->v[rc->n++];
	}
	*e = (struct rc_entry){off, copy, (uint16_t)n, rc_hash(off)};
	rc->bytes += n * sizeof(*copy);
	htab__find(&rc->index, e->hash, rc_eq, rc, &off, &slot);
	htab__set(&rc->index, slot, e->hash, e - rc->v);
	return 0;
}

void rc__free(struct rcache *rc)
{
	for (size_t i = 0; i < rc->n; i++)
		free(rc->v[i].frames);
	free(rc->v);
	htab__free(&rc->index);
	memset(rc, 0, sizeof(*rc));
}


