// SPDX-License-Identifier: BSD-2-Clause
/* sitekeep: sites pinned to the identity first served, retired sites (the contract: sitekeep.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heap/sitekeep.h"
#include "lib/hash.h"

/* What identifies an identity: everything but its reference count. */
static uint32_t ident_hash(const struct sitekeep_ident *i)
{
	uint64_t h = hash__u64(HASH_SEED, (uint64_t)i->pid << 32 | 1);

	h = hash__u64(h, (uintptr_t)i->maps);
	h = hash__bytes(h, i->name, sizeof(i->name));
	h = hash__bytes(h, &i->title, sizeof(i->title));
	return hash__final(h);
}

static bool ident_same(const struct sitekeep_ident *a, const struct sitekeep_ident *b)
{
	return a->pid == b->pid && a->maps == b->maps && !memcmp(a->name, b->name, sizeof(a->name)) &&
	       !memcmp(&a->title, &b->title, sizeof(a->title));
}

static bool ident_eq(const void *ctx, size_t pos, const void *key)
{
	return ident_same(&((const struct sitekeep *)ctx)->idents[pos], key);
}

static uint32_t site_hash(const struct profd_heap_site *s, uint32_t ident)
{
	return hash__final(hash__u64(hash__bytes(HASH_SEED, s, sizeof(*s)), ident));
}

static bool pin_eq(const void *ctx, size_t pos, const void *key)
{
	return !memcmp(&((const struct sitekeep *)ctx)->pins[pos].site, key,
		       sizeof(struct profd_heap_site));
}

static bool retired_eq(const void *ctx, size_t pos, const void *key)
{
	const struct sitekeep_retired *r = &((const struct sitekeep *)ctx)->retired[pos];
	const struct sitekeep_retired *k = key;

	return r->ident == k->ident && !memcmp(&r->site, &k->site, sizeof(r->site));
}

void sitekeep__init(struct sitekeep *k, size_t max)
{
	memset(k, 0, sizeof(*k));
	k->max = max ? max : SITEKEEP_RETIRED_MAX;
}

void sitekeep__free(struct sitekeep *k)
{
	for (size_t i = 0; i < k->nidents; i++)
		if (k->idents[i].refs)
			proc_maps__put(k->idents[i].maps);
	free(k->idents);
	free(k->free_ids);
	free(k->pins);
	free(k->retired);
	htab__free(&k->ident_index);
	htab__free(&k->pin_index);
	htab__free(&k->retired_index);
	memset(k, 0, sizeof(*k));
}

/* now's id, interned with one more reference. */
static int ident_ref(struct sitekeep *k, const struct sitekeep_ident *now, uint32_t *id)
{
	uint32_t hash = ident_hash(now);
	struct htab_slot *slot;
	long pos;
	int err;

	err = htab__reserve(&k->ident_index);
	err = err ?: array__grow(&k->idents, &k->idents_cap, k->nidents + 1, sizeof(*k->idents));
	err = err ?: array__grow(&k->free_ids, &k->free_cap, k->nidents + 1, sizeof(*k->free_ids));
	if (err)
		return err;
	pos = htab__find(&k->ident_index, hash, ident_eq, k, now, &slot);
	if (pos < 0) {
		pos = k->nfree ? k->free_ids[--k->nfree] : k->nidents++;
		k->idents[pos] = *now;
		k->idents[pos].refs = 0;
		k->idents[pos].maps = proc_maps__get(now->maps);
		htab__set(&k->ident_index, slot, hash, pos);
	}
	k->idents[pos].refs++;
	*id = pos;
	return 0;
}

static void ident_put(struct sitekeep *k, uint32_t id)
{
	struct sitekeep_ident *i = &k->idents[id];

	if (--i->refs)
		return;
	htab__remove(&k->ident_index, ident_hash(i), id);
	proc_maps__put(i->maps);
	i->maps = NULL;
	k->free_ids[k->nfree++] = id;	/* room: free_cap >= nidents */
}

long sitekeep__pinned(const struct sitekeep *k, const struct profd_heap_site *s)
{
	long pos = htab__find(&k->pin_index, site_hash(s, 0), pin_eq, k, s, NULL);

	return pos < 0 ? -1 : (long)k->pins[pos].ident;
}

int sitekeep__pin(struct sitekeep *k, const struct profd_heap_site *s,
		  const struct sitekeep_ident *now, uint32_t *ident)
{
	uint32_t hash = site_hash(s, 0);
	struct htab_slot *slot;
	long pos;
	int err;

	err = htab__reserve(&k->pin_index);
	err = err ?: array__grow(&k->pins, &k->pins_cap, k->npins + 1, sizeof(*k->pins));
	if (err)
		return err;
	pos = htab__find(&k->pin_index, hash, pin_eq, k, s, &slot);
	if (pos >= 0) {
		*ident = k->pins[pos].ident;
		return 0;
	}
	err = ident_ref(k, now, ident);
	if (err)
		return err;
	k->pins[k->npins] = (struct sitekeep_pin){.site = *s, .ident = *ident};
	htab__set(&k->pin_index, slot, hash, k->npins++);
	return 0;
}

/* Drop the pin at pos: the last one moves into its place. */
static void pin_remove(struct sitekeep *k, size_t pos)
{
	size_t last = k->npins - 1;

	htab__remove(&k->pin_index, site_hash(&k->pins[pos].site, 0), pos);
	ident_put(k, k->pins[pos].ident);
	if (pos != last) {
		htab__move(&k->pin_index, site_hash(&k->pins[last].site, 0), last, pos);
		k->pins[pos] = k->pins[last];
	}
	k->npins--;
}

int sitekeep__retire(struct sitekeep *k, const struct profd_heap_site *s,
		     const struct sitekeep_ident *now, uint64_t count, uint64_t bytes)
{
	long pin = htab__find(&k->pin_index, site_hash(s, 0), pin_eq, k, s, NULL);
	struct sitekeep_retired key = {.site = *s, .count = count, .bytes = bytes};
	struct htab_slot *slot;
	size_t at = k->retired_next;
	uint32_t hash;
	long pos;
	int err;

	/* The retired entry's own reference to its identity. */
	if (pin >= 0) {
		key.ident = k->pins[pin].ident;
		k->idents[key.ident].refs++;
	} else if ((err = ident_ref(k, now, &key.ident))) {
		return err;
	}
	hash = site_hash(s, key.ident);
	err = htab__reserve(&k->retired_index);
	if (!err && k->nretired < k->max)
		err = array__grow(&k->retired, &k->retired_cap, k->nretired + 1,
				  sizeof(*k->retired));
	if (err) {
		ident_put(k, key.ident);
		return err;
	}
	pos = htab__find(&k->retired_index, hash, retired_eq, k, &key, NULL);
	if (pos >= 0) {
		/* The same site and identity again (a process seen exiting twice). */
		k->retired[pos].count += count;
		k->retired[pos].bytes += bytes;
		ident_put(k, key.ident);
	} else {
		if (k->nretired == k->max) {
			/* Full: the oldest goes, and its slot takes this one. */
			struct sitekeep_retired *old = &k->retired[at];

			htab__remove(&k->retired_index, site_hash(&old->site, old->ident), at);
			ident_put(k, old->ident);
			k->dropped++;
		} else {
			k->nretired++;
		}
		htab__find(&k->retired_index, hash, retired_eq, k, &key, &slot);
		k->retired[at] = key;
		htab__set(&k->retired_index, slot, hash, at);
		k->retired_next = (at + 1) % k->max;
		k->retired_total++;
	}
	if (pin >= 0)
		pin_remove(k, pin);
	return 0;
}

int sitekeep__unpin_gone(struct sitekeep *k, int (*gone)(void *ctx, uint32_t pid), void *ctx)
{
	for (size_t i = k->npins; i-- > 0;) {
		int r = gone(ctx, k->pins[i].site.tgid);

		if (r < 0)
			return r;
		if (r)
			pin_remove(k, i);	/* moves the last, already looked at, here */
	}
	return 0;
}

size_t sitekeep__bytes(const struct sitekeep *k)
{
	return k->idents_cap * sizeof(*k->idents) + k->free_cap * sizeof(*k->free_ids) +
	       k->pins_cap * sizeof(*k->pins) + k->retired_cap * sizeof(*k->retired) +
	       htab__bytes(&k->ident_index) + htab__bytes(&k->pin_index) +
	       htab__bytes(&k->retired_index);
}
