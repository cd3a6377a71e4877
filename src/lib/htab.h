/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * htab: the one hash table.  It is an index, not a container: entries live
 * in the caller's own array (or arrays), and the table maps a 32-bit hash to
 * an entry's position in it.  That keeps entries contiguous and typed, lets
 * ids be array positions (pprof's ids are position + 1), and leaves
 * lifetimes to the owner of the array.
 *
 * Open addressing with linear probing over a power-of-two array kept at
 * most half full; removal shifts later entries back, so there are no
 * tombstones and lookups stay short however many removals happen.
 *
 * Usage:
 *	if (htab__reserve(&t))			// room for one more, before a lookup that may insert
 *		return -ENOMEM;
 *	pos = htab__find(&t, h, eq, ctx, key, &slot);
 *	if (pos < 0) {				// not there: append to the array, then
 *		arr[n] = ...;
 *		htab__set(&t, slot, h, n++);
 *	}
 */
#ifndef PROFD_LIB_HTAB_H
#define PROFD_LIB_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct htab_slot {
	uint32_t hash;
	uint32_t pos1;		/* the entry's position + 1; 0: empty */
};

struct htab {
	struct htab_slot *slots;
	size_t cap;		/* 0 or a power of two */
	size_t used;
};

/* Does the entry at pos, in the array ctx describes, equal key? */
typedef bool (*htab_eq_fn)(const void *ctx, size_t pos, const void *key);

/* Room for one more entry: a following htab__find() ends, and its slot can
 * take an htab__set().  0, -ENOMEM, or -E2BIG past 2^32 - 2 entries. */
int htab__reserve(struct htab *t);

/*
 * The position of the entry equal to key, or -1.  *slot (if not NULL) is
 * the slot holding it or, when absent, the empty slot where it belongs,
 * valid until the next change to the table.  Needs a reserved table for a
 * slot to exist; on an empty, never-reserved table it returns -1 and NULL.
 */
long htab__find(const struct htab *t, uint32_t hash, htab_eq_fn eq, const void *ctx,
		const void *key, struct htab_slot **slot);

/* Fill an empty slot returned by htab__find(). */
void htab__set(struct htab *t, struct htab_slot *slot, uint32_t hash, size_t pos);

/* Forget the entry at pos (whose hash is hash).  -ENOENT if not indexed. */
int htab__remove(struct htab *t, uint32_t hash, size_t pos);

/* The entry at old_pos moved to new_pos (e.g. a swap-remove in the array). */
int htab__move(struct htab *t, uint32_t hash, size_t old_pos, size_t new_pos);

size_t htab__count(const struct htab *t);
/* Bytes the index holds, for memory accounting. */
size_t htab__bytes(const struct htab *t);
void htab__clear(struct htab *t);
void htab__free(struct htab *t);

/*
 * Makes *(T **)arrp hold at least need elements of elem bytes, doubling.
 * The pointer goes through memcpy so one helper serves every element type.
 * 0 or -ENOMEM (the array is left as it was).
 */
int array__grow(void *arrp, size_t *cap, size_t need, size_t elem);

#endif
