// SPDX-License-Identifier: BSD-2-Clause
/* heapsites: sums sites and unsamples them (the contract: heapsites.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heapsites.h"
#include "lib/hash.h"

static uint32_t site_hash(const struct profd_heap_site *s, uint32_t ident)
{
	return hash__final(hash__u64(hash__bytes(HASH_SEED, s, sizeof(*s)), ident));
}

struct site_key {
	const struct profd_heap_site *site;
	uint32_t ident;
};

static bool site_eq(const void *ctx, size_t pos, const void *key)
{
	const struct heap_sites *t = ctx;
	const struct site_key *k = key;

	return t->v[pos].ident == k->ident && !memcmp(&t->v[pos].site, k->site, sizeof(*k->site));
}

struct heap_site_agg *heap_sites__get(struct heap_sites *t, const struct profd_heap_site *s,
				      uint32_t ident)
{
	struct site_key key = {s, ident};
	uint32_t hash = site_hash(s, ident);
	struct htab_slot *slot;
	long pos;

	if (htab__reserve(&t->index) || array__grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return NULL;
	pos = htab__find(&t->index, hash, site_eq, t, &key, &slot);
	if (pos >= 0)
		return &t->v[pos];
	memset(&t->v[t->n], 0, sizeof(t->v[0]));
	t->v[t->n].site = *s;
	t->v[t->n].ident = ident;
	htab__set(&t->index, slot, hash, t->n);
	return &t->v[t->n++];
}

const struct heap_site_agg *heap_sites__find(const struct heap_sites *t,
					     const struct profd_heap_site *s, uint32_t ident)
{
	struct site_key key = {s, ident};
	long pos = htab__find(&t->index, site_hash(s, ident), site_eq, t, &key, NULL);

	return pos < 0 ? NULL : &t->v[pos];
}

void heap_sites__free(struct heap_sites *t)
{
	free(t->v);
	htab__free(&t->index);
	memset(t, 0, sizeof(*t));
}

void heap_sites__unsample(uint64_t count, uint64_t bytes, uint64_t rate, int64_t *ocount,
			  int64_t *obytes)
{
	double scale;

	if (!count || !bytes) {
		*ocount = *obytes = 0;
		return;
	}
	if (rate <= 1) {
		*ocount = count;
		*obytes = bytes;
		return;
	}
	scale = 1.0 / (1.0 - exp(-((double)bytes / count) / rate));
	*ocount = (int64_t)(count * scale);
	*obytes = (int64_t)(bytes * scale);
}

const char *heap_sites__fn_name(uint32_t fn)
{
	static const char *const names[] = {
		[PROFD_FN_MALLOC] = "malloc", [PROFD_FN_CALLOC] = "calloc",
		[PROFD_FN_REALLOC] = "realloc", [PROFD_FN_REALLOCARRAY] = "reallocarray",
		[PROFD_FN_POSIX_MEMALIGN] = "posix_memalign",
		[PROFD_FN_ALIGNED_ALLOC] = "aligned_alloc", [PROFD_FN_MEMALIGN] = "memalign",
		[PROFD_FN_VALLOC] = "valloc", [PROFD_FN_PVALLOC] = "pvalloc",
		[PROFD_FN_FREE] = "free",
	};

	return fn < sizeof(names) / sizeof(names[0]) && names[fn] ? names[fn] : "alloc";
}
