/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * heapsites: the allocation sites of a heap profile, summed from the BPF
 * maps (sampled allocations by site, live sampled allocations), and the
 * estimate of the true totals from the sampled ones.  Pure: unit-tested
 * without BPF.
 */
#ifndef PROFD_HEAPSITES_H
#define PROFD_HEAPSITES_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/abi/heap.h"
#include "lib/htab.h"

struct heap_site_agg {
	struct profd_heap_site site;
	uint32_t ident;		/* what it is served as (heap/sitekeep.h) */
	uint64_t alloc_count, alloc_bytes;	/* sampled since tracking began */
	uint64_t live_count, live_bytes;	/* sampled and not yet freed */
};

struct heap_sites {
	struct heap_site_agg *v;
	size_t n, cap;
	struct htab index;
};

/* The aggregate for site s served as identity ident (s compared whole,
 * padding included: the BPF side zeroes it), added if new; NULL without
 * memory. */
struct heap_site_agg *heap_sites__get(struct heap_sites *t, const struct profd_heap_site *s,
				      uint32_t ident);
/* The aggregate for (s, ident), or NULL. */
const struct heap_site_agg *heap_sites__find(const struct heap_sites *t,
					     const struct profd_heap_site *s, uint32_t ident);
void heap_sites__free(struct heap_sites *t);

/*
 * Sampled counts to estimated totals, as Go's scaleHeapSample: with
 * sampling by bytes at mean interval rate, an allocation of size s is
 * sampled with probability 1 - exp(-s / rate), so the site's count and
 * bytes are divided by that, taking s as the site's average size.
 */
void heap_sites__unsample(uint64_t count, uint64_t bytes, uint64_t rate, int64_t *ocount,
			  int64_t *obytes);

/* "malloc", "calloc", ... for enum profd_alloc_fn. */
const char *heap_sites__fn_name(uint32_t fn);

#endif
