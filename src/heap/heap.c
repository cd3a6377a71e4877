// SPDX-License-Identifier: BSD-2-Clause
/*
 * heap: heap tracking's start, stop and counters (heap.h).  Finding and
 * probing allocators is probes.c's, the overhead budget budget.c's,
 * profiles heapprof.c's, the site arithmetic heapsites.c's, probe placement
 * uprobe_place.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <event2/event.h>

#include "bpf/abi/heap.h"
#include "bpf/abi/targets.h"
#include "bpf/profd.skel.h"
#include "heap/heap.h"
#include "heap/heap_int.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "tracer/bpfobj.h"

int heap__start(struct event_base *base, struct bpfobj *o,
		const struct heap_opts *opts, struct heap **out, char *errbuf, size_t errlen)
{
	struct heap *h;
	int err = 0;

	if (bpf_program__fd(bpfobj__skel(o)->progs.profd_heap_entry) < 0 &&
	    bpf_program__fd(bpfobj__skel(o)->progs.profd_heap_session) < 0) {
		snprintf(errbuf, errlen, "heap tracking is off: start profd with --heap");
		return -ENOTSUP;
	}
	if (opts->sample_bytes < 1 || opts->sample_bytes > (1ull << 40)) {
		snprintf(errbuf, errlen, "heap sample bytes must be 1..%llu", 1ull << 40);
		return -EINVAL;
	}
	if (!(opts->budget_percent >= 0 && opts->budget_percent < 1e6)) {
		snprintf(errbuf, errlen, "the heap budget must be a percent of one CPU");
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->base = base;
	h->obj = o;
	h->skel = bpfobj__skel(o);
	h->sample_bytes = opts->sample_bytes;
	if (opts->targets && targets__copy(&h->targets, opts->targets)) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (int i = 0; i < MAX_RESCANS; i++) {
		h->rescans[i].h = h;
		h->rescans[i].ev = evtimer_new(base, heap_probe__on_rescan, &h->rescans[i]);
		if (!h->rescans[i].ev) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	err = targets__apply(&h->targets, o, PROFD_HEAP_BIT, errbuf, errlen);
	if (err)
		goto cleanup;
	h->armed = true;
	h->skel->bss->heap_all = targets__whole_system(&h->targets);
	h->skel->bss->heap_by_exe = h->targets.nexes > 0;
	err = bpfobj__add_consumer(o, &(struct bpfobj_consumer){.on_proc = heap_probe__on_proc, .ctx = h});
	if (err)
		goto cleanup;
	h->start_ns = clock__real_ns();
	h->start_mono = clock__mono_ns();
	h->skel->bss->heap_sample_bytes = opts->sample_bytes;
	heap_probe__running(h);
	if (opts->budget_percent > 0) {
		err = heap_budget__start(h, opts->budget_percent);
		if (err) {
			snprintf(errbuf, errlen, "heap budget: %s", strerror(-err));
			goto cleanup;
		}
	}
	log__info("heap: tracking %s, one sample per %" PRIu64 " bytes on average, "
		  "allocators probed in %zu objects",
		  targets__whole_system(&h->targets) ? "every process" : "targets",
		  opts->sample_bytes, h->nprobed);
	*out = h;
	return 0;
cleanup:
	heap__free(h);
	return err;
}

void heap__free(struct heap *h)
{
	if (!h)
		return;
	if (h->skel) {
		/* A start that failed early resets nothing it did not set. */
		if (h->armed) {
			h->skel->bss->heap_sample_bytes = 0;
			h->skel->bss->heap_all = 0;
			h->skel->bss->heap_by_exe = 0;
		}
		for (size_t i = 0; i < h->nobjs; i++)
			heap_probe__detach(&h->objs[i]);
		bpfobj__remove_consumer(h->obj, h);
		/* Leave no target bits behind for a later tracker to inherit;
		 * targets__clear takes back only what targets__apply set. */
		targets__clear(&h->targets, h->obj);
	}
	for (int i = 0; i < MAX_RESCANS; i++)
		if (h->rescans[i].ev)
			event_free(h->rescans[i].ev);
	if (h->budget.ev)
		event_free(h->budget.ev);
	targets__free(&h->targets);
	free(h);
}

void heap__stats(struct heap *h, struct heap_stats *st)
{
	uint64_t sum[PROFD_HSTAT_NR];

	bpfobj__percpu_sum(bpf_map__fd(h->skel->maps.heap_stats), 0, PROFD_HSTAT_NR, sum);
	st->sampled = sum[PROFD_HSTAT_SAMPLED];
	st->freed = sum[PROFD_HSTAT_FREED];
	st->live_full = sum[PROFD_HSTAT_LIVE_FULL];
	st->allocs_full = sum[PROFD_HSTAT_ALLOCS_FULL];
	st->stack_errors = sum[PROFD_HSTAT_STACK_ERR];
	st->pending_full = sum[PROFD_HSTAT_PENDING_FULL];
	st->calls = sum[PROFD_HSTAT_CALLS];
	st->objects_probed = h->nprobed;
	st->detached = h->budget.detached;
	st->cost_ns = h->budget.ratio > 0 ? h->budget.cost_ns : 0;
	st->cost_ratio = h->budget.last;
}
