/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sitekeep: what each heap site was first served as, and the sites of
 * processes that have exited, kept out of the BPF site map.
 *
 * Why: a scraper that turns cumulative profiles into deltas (Grafana
 * Alloy's pyroscope.scrape for alloc_objects/alloc_space) identifies a
 * sample by its locations' addresses and its labels.  If a site's labels
 * (process_name, backend_type, database, user) or the memory maps that
 * decide where its stack is cut change between two scrapes, the scraper
 * sees a new sample and reports the site's whole cumulative value again.
 * Those came from the process table and the title cache, which forget
 * processes that have exited.  So a site is pinned, the first time it is
 * served or retired, to an identity: its process's name, title labels and
 * memory maps (held) as they were then.  A process whose title changes
 * later (an autovacuum worker picks its database) gets a new identity for
 * the sites it makes from then on; old sites keep theirs.
 *
 * And why the retired sites: the BPF site map (heap_allocs) is keyed by
 * process and fixed in size.  Sites of exited processes are moved here
 * (their counts can no longer change), freeing the map for live ones.
 * Retired sites are a ring of at most `max`; past it the oldest is dropped
 * and counted.  A dropped site no longer changes, so to a delta scraper
 * its going is no loss; `go tool pprof` on the cumulative profile loses
 * its history.
 *
 * Pure: no BPF, no /proc; the caller reads identities.  Single-threaded.
 */
#ifndef PROFD_SITEKEEP_H
#define PROFD_SITEKEEP_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/abi/heap.h"
#include "lib/htab.h"
#include "proc/procs.h"
#include "proc/proctitle.h"

#define SITEKEEP_RETIRED_MAX 65536

/* A process as a site was first seen: compared whole, so zero it first. */
struct sitekeep_ident {
	uint32_t pid;
	uint32_t refs;			/* pins and retired sites holding it; 0: a free slot */
	char name[PROCS_NAME_LEN + 1];	/* the process's name; "": unknown */
	struct proctitle title;		/* all empty: no title labels */
	const struct proc_maps *maps;	/* held once interned; NULL: unknown */
};

struct sitekeep_pin {
	struct profd_heap_site site;
	uint32_t ident;
};

struct sitekeep_retired {
	struct profd_heap_site site;
	uint32_t ident;
	uint64_t count, bytes;		/* sampled, as the site map had them */
};

struct sitekeep {
	struct sitekeep_ident *idents;	/* by id; refs 0: free, listed in free_ids */
	size_t nidents, idents_cap;
	uint32_t *free_ids;
	size_t nfree, free_cap;
	struct htab ident_index;
	struct sitekeep_pin *pins;	/* sites still in the BPF map */
	size_t npins, pins_cap;
	struct htab pin_index;
	struct sitekeep_retired *retired;	/* a ring of max; [0, nretired) used */
	size_t nretired, retired_cap, retired_next, max;
	struct htab retired_index;
	uint64_t retired_total;		/* sites retired, ever */
	uint64_t dropped;		/* retired sites dropped for room */
};

/* max: retired sites kept (0: SITEKEEP_RETIRED_MAX). */
void sitekeep__init(struct sitekeep *k, size_t max);
void sitekeep__free(struct sitekeep *k);

/* The identity site s is pinned to, or -1. */
long sitekeep__pinned(const struct sitekeep *k, const struct profd_heap_site *s);

/*
 * Pin s to now (the caller's reading of its process: interned, its maps
 * referenced) unless it is pinned already.  *ident: its identity either
 * way.  0 or -ENOMEM.
 */
int sitekeep__pin(struct sitekeep *k, const struct profd_heap_site *s,
		  const struct sitekeep_ident *now, uint32_t *ident);

/*
 * s's process has exited and the BPF map's entry goes: keep its counts
 * under the identity it is pinned to (or now, if it never was), unpinned.
 * 0 or -ENOMEM (nothing changed).
 */
int sitekeep__retire(struct sitekeep *k, const struct profd_heap_site *s,
		     const struct sitekeep_ident *now, uint64_t count, uint64_t bytes);

/* Forget the pins of the sites whose process gone() says has exited
 * (sites it had only in the live map are gone with it).  gone: 1 yes,
 * 0 no, negative errno to stop. */
int sitekeep__unpin_gone(struct sitekeep *k, int (*gone)(void *ctx, uint32_t pid), void *ctx);

static inline const struct sitekeep_ident *sitekeep__ident(const struct sitekeep *k, uint32_t id)
{
	return &k->idents[id];
}

/* Bytes held, for accounting (maps shared with the process table not counted). */
size_t sitekeep__bytes(const struct sitekeep *k);

#endif
