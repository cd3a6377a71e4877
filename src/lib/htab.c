// SPDX-License-Identifier: BSD-2-Clause
/* htab: the one hash table: an index into the caller's own arrays (the contract: htab.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/htab.h"

int htab__reserve(struct htab *t)
{
	struct htab_slot *slots;
	size_t cap, i, j;

	if (t->used >= UINT32_MAX - 1)
		return -E2BIG;
	if ((t->used + 1) * 2 <= t->cap)
		return 0;
	cap = t->cap ? t->cap * 2 : 64;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		if (!t->slots[i].pos1)
			continue;
		for (j = t->slots[i].hash & (cap - 1); slots[j].pos1; j = (j + 1) & (cap - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

long htab__find(const struct htab *t, uint32_t hash, htab_eq_fn eq, const void *ctx,
		const void *key, struct htab_slot **slot)
{
	size_t i;

	if (slot)
		*slot = NULL;
	if (!t->cap)
		return -1;
	for (i = hash & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct htab_slot *s = &t->slots[i];

		if (!s->pos1) {
			if (slot)
				*slot = s;
			return -1;
		}
		if (s->hash == hash && eq(ctx, s->pos1 - 1, key)) {
			if (slot)
				*slot = s;
			return (long)s->pos1 - 1;
		}
	}
}

void htab__set(struct htab *t, struct htab_slot *slot, uint32_t hash, size_t pos)
{
	slot->hash = hash;
	slot->pos1 = (uint32_t)(pos + 1);
	t->used++;
}

static struct htab_slot *slot_of(const struct htab *t, uint32_t hash, size_t pos)
{
	if (!t->cap)
		return NULL;
	for (size_t i = hash & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct htab_slot *s = &t->slots[i];

		if (!s->pos1)
			return NULL;
		if (s->pos1 == pos + 1)
			return s;
	}
}

int htab__remove(struct htab *t, uint32_t hash, size_t pos)
{
	struct htab_slot *s = slot_of(t, hash, pos);
	size_t i, j, mask = t->cap - 1;

	if (!s)
		return -ENOENT;
	i = s - t->slots;
	t->slots[i].pos1 = 0;
	t->used--;
	/* Shift back every later entry of the run whose home is not in (i, j]. */
	for (j = (i + 1) & mask; t->slots[j].pos1; j = (j + 1) & mask) {
		size_t home = t->slots[j].hash & mask;

		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			t->slots[i] = t->slots[j];
			t->slots[j].pos1 = 0;
			i = j;
		}
	}
	return 0;
}

int htab__move(struct htab *t, uint32_t hash, size_t old_pos, size_t new_pos)
{
	struct htab_slot *s = slot_of(t, hash, old_pos);

	if (!s)
		return -ENOENT;
	s->pos1 = (uint32_t)(new_pos + 1);
	return 0;
}

size_t htab__count(const struct htab *t)
{
	return t->used;
}

size_t htab__bytes(const struct htab *t)
{
	return t->cap * sizeof(*t->slots);
}

void htab__clear(struct htab *t)
{
	if (t->cap)
		memset(t->slots, 0, t->cap * sizeof(*t->slots));
	t->used = 0;
}

void htab__free(struct htab *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

int array__grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
	void *arr, *nar;
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	memcpy(&arr, arrp, sizeof(arr));
	nar = realloc(arr, ncap * elem);
	if (!nar)
		return -ENOMEM;
	memcpy(arrp, &nar, sizeof(nar));
	*cap = ncap;
	return 0;
}
