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
#include <unistd.h>

#include <event2/event.h>
#include <linux/types.h>

#include "bpf/abi/heap.h"
#include "bpf/abi/targets.h"
#include "heap/heap.h"
#include "heap/heap_bpf.h"
#include "heap/heap_int.h"
#include "tracer/kernel.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "tracer/bpfobj.h"

int heap__start(struct event_base *base, struct bpfobj *o,
		const struct heap_opts *opts, struct heap **out, char *errbuf, size_t errlen)
{
	struct heap *h;
	int err = 0;

	if (!heap_bpf__loaded(o)) {
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
	h->closer_fd[0] = h->closer_fd[1] = -1;	/* heap__free closes nothing it did not open */
	h->base = base;
	h->obj = o;
	sitekeep__init(&h->keep, 0);
	h->sample_bytes = opts->sample_bytes;
	h->max_att = opts->max_attach ? opts->max_attach : HEAP_DEFAULT_MAX_ATTACH;
	if (opts->targets && targets__copy(&h->targets, opts->targets)) {
		err = -ENOMEM;
		goto cleanup;
	}
	h->probe_all = targets__whole_system(&h->targets) || opts->all_processes;
	err = heap_attach__init(h);
	if (err)
		goto cleanup;
	if (!h->probe_all && (err = heap_attach__shared_init(h))) {
		log__warn("heap: probes in the targets' memory only need tracefs and kthreadd (%s): "
			  "every process mapping an allocator traps on its probes instead",
			  strerror(-err));
		h->probe_all = true;
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
	heap_bpf__set_scope(o, targets__whole_system(&h->targets), h->targets.nexes > 0);
	err = bpfobj__add_consumer(o, &(struct bpfobj_consumer){.on_proc = heap_probe__on_proc, .ctx = h});
	if (err)
		goto cleanup;
	h->start_ns = clock__real_ns();
	h->start_mono = clock__mono_ns();
	heap_bpf__set_sample_bytes(o, opts->sample_bytes);
	heap_probe__running(h);
	err = heap_retire__start(h);
	if (err) {
		snprintf(errbuf, errlen, "heap: %s", strerror(-err));
		goto cleanup;
	}
	if (opts->budget_percent > 0) {
		err = heap_budget__start(h, opts->budget_percent);
		if (err) {
			snprintf(errbuf, errlen, "heap budget: %s", strerror(-err));
			goto cleanup;
		}
	}
	log__info("heap: tracking %s, one sample per %" PRIu64 " bytes on average, "
		  "allocators probed in %zu objects, %s",
		  targets__whole_system(&h->targets) ? "every process" : "targets",
		  opts->sample_bytes, heap_attach__objects(h),
		  h->probe_all ? "in every process (the BPF side keeps the targets')" :
				 "in each target's memory only (other processes run them untouched)");
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
	if (h->obj) {
		/* A start that failed early resets nothing it did not set. */
		if (h->armed) {
			heap_bpf__set_sample_bytes(h->obj, 0);
			heap_bpf__set_scope(h->obj, false, false);
		}
		bpfobj__remove_consumer(h->obj, h);
		/* Leave no target bits behind for a later tracker to inherit;
		 * targets__clear takes back only what targets__apply set. */
		targets__clear(&h->targets, h->obj);
	}
	heap_attach__fini(h);
	for (int i = 0; i < MAX_RESCANS; i++)
		if (h->rescans[i].ev)
			event_free(h->rescans[i].ev);
	if (h->budget.ev)
		event_free(h->budget.ev);
	if (h->retire.ev)
		event_free(h->retire.ev);
	sitekeep__free(&h->keep);
	targets__free(&h->targets);
	htab__free(&h->seen_index);
	for (size_t i = 0; i < h->nobjs; i++)
		close(h->objs[i].fd);
	free(h->att);
	free(h);
}

const char *heap__probes_text(const struct kernel_features *f, bool every_process)
{
	if (!every_process)
		return "uprobe + uretprobe in the targets' memory only (tracefs probes, inherited at fork)";
	return f->uprobe_session ? "uprobe sessions in every process" :
				   "uprobe + uretprobe in every process (uprobe sessions need Linux 6.13)";
}

void heap__stats(struct heap *h, struct heap_stats *st)
{
	uint64_t sum[PROFD_HSTAT_NR];

	heap_bpf__stats(h->obj, sum);
	st->sampled = sum[PROFD_HSTAT_SAMPLED];
	st->freed = sum[PROFD_HSTAT_FREED];
	st->live_full = sum[PROFD_HSTAT_LIVE_FULL];
	st->allocs_full = sum[PROFD_HSTAT_ALLOCS_FULL];
	st->stack_errors = sum[PROFD_HSTAT_STACK_ERR];
	st->pending_full = sum[PROFD_HSTAT_PENDING_FULL];
	st->calls = sum[PROFD_HSTAT_CALLS];
	st->preload_mean = sum[PROFD_HSTAT_PRELOAD_MEAN];
	st->sites = h->retire.sites;
	st->sites_retired = h->keep.nretired;
	st->sites_retired_total = h->keep.retired_total;
	st->sites_dropped = h->keep.dropped;
	st->keep_bytes = sitekeep__bytes(&h->keep);
	st->objects_probed = heap_attach__objects(h);
	st->preloads_probed = heap_attach__preloads(h);
	/* Inheriting descendants too: the kernel probes their memory. */
	st->processes_probed = heap_attach__processes(h) + h->nkin;
	st->per_process = !h->probe_all;
	st->attachments = h->natt;
	st->attach_max = h->max_att;
	st->attach_made = h->as.made;
	st->attach_ns = h->as.ns;
	st->attach_refused = h->as.refused;
	st->attach_vanished = h->as.vanished;
	st->attach_failed = h->as.failed;
	st->fork_inherited = h->as.inherited;
	st->inherit_promoted = h->as.promoted;
	st->fork_attached = h->as.forks;
	st->fork_attach_ns = h->as.fork_ns;
	st->fork_attach_max_ns = h->as.fork_max_ns;
	st->objects_refused = h->refused;
	st->detached = h->budget.detached;
	st->cost_ns = h->budget.ratio > 0 ? h->budget.cost_ns : 0;
	st->cost_ratio = h->budget.last;
}
