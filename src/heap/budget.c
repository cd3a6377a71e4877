// SPDX-License-Identifier: BSD-2-Clause
/*
 * budget: --heap-budget.  What one probe hit costs is measured at start;
 * once a second the hits of the last window times that cost are held
 * against the budget, and over it every probe is detached for good.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <linux/types.h>

#include "bpf/abi/heap.h"
#include "bpf/abi/targets.h"
#include "heap/heap_bpf.h"
#include "heap/heap_int.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "tracer/bpfobj.h"

/*
 * The budget: a probe hit's cost is measured at start on the daemon's own
 * malloc+free pairs (its libc is probed like any other); when that cannot
 * be done, a trap on an emulated instruction is assumed (docs/architecture.md).
 */
#define COST_PAIRS 250		/* malloc+free pairs per measuring batch */
#define COST_BATCHES 20		/* the fastest batch counts: the others were preempted */
#define COST_DEFAULT_NS 1000.0

static uint64_t probe_hits(struct heap *h)
{
	uint64_t sum[PROFD_HSTAT_NR];

	heap_bpf__stats(h->obj, sum);
	return sum[PROFD_HSTAT_CALLS];
}

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * What one probe hit costs here: the daemon's own malloc+free pairs, its
 * libc probed like the targets', two hits each, in this thread's CPU time
 * (the trap is ours; time other processes ran meanwhile is not).  The
 * pair's own ~11 ns is counted in: an overestimate of about 1%.
 */
static void measure_cost(struct heap *h)
{
	uint64_t before;
	int64_t best = INT64_MAX;
	bool made = false;

	/* The daemon is no target: its libc is probed for it only meanwhile. */
	if (!h->probe_all)
		for (size_t i = 0; i < h->nobjs; i++)
			if (h->objs[i].self && heap_attach__add(h, getpid(), i) == 1)
				made = true;
	before = probe_hits(h);

	h->budget.cost_ns = COST_DEFAULT_NS;
	for (int b = 0; b < COST_BATCHES; b++) {
		int64_t t0 = thread_cpu_ns(), t;

		for (int i = 0; i < COST_PAIRS; i++) {
			char *volatile p = malloc(64);	/* volatile: the pair is not elided */

			if (p)
				p[0] = 1;
			free(p);
		}
		t = thread_cpu_ns() - t0;
		if (t < best)
			best = t;
	}
	/* Other processes' hits count too, but fewer than two per pair of
	 * ours means ours were not probed (a static or another allocator). */
	if (made)
		heap_attach__drop(h, getpid());
	if (probe_hits(h) - before < 2ull * COST_BATCHES * COST_PAIRS)
		return;
	h->budget.cost_ns = (double)best / (2.0 * COST_PAIRS);
	h->budget.measured = true;
}

/* Over budget: every probe goes, for good; what was collected stays served. */
static void budget_detach(struct heap *h, double ratio, double hits_per_s)
{
	h->budget.detached = true;
	h->budget.detached_mono = clock__mono_ns();
	snprintf(h->budget.why, sizeof(h->budget.why),
		 "allocator probes cost %.1f%% of a CPU over %d s (%.0f hits/s x %.0f ns), over "
		 "--heap-budget %g%%",
		 ratio * 100, HEAP_BUDGET_WINDOW_S, hits_per_s, h->budget.cost_ns,
		 h->budget.ratio * 100);
	log__warn("heap: tracking stopped %.0f s after it began, its probes detached: %s",
		  (h->budget.detached_mono - h->start_mono) / 1e9, h->budget.why);
	heap_bpf__set_sample_bytes(h->obj, 0);
	heap_attach__drop(h, 0);
	for (int i = 0; i < MAX_RESCANS; i++) {
		evtimer_del(h->rescans[i].ev);
		h->rescans[i].pid = 0;
	}
	event_del(h->budget.ev);
}

/* Once a second: the probes' cost over the last window, against the budget. */
static void on_budget(evutil_socket_t fd, short what, void *arg)
{
	enum { K = HEAP_BUDGET_WINDOW_S + 1 };
	struct heap *h = arg;
	unsigned int n = h->budget.n, old;
	double dt, hits_per_s;

	h->budget.calls[n % K] = probe_hits(h);
	h->budget.at[n % K] = clock__mono_ns();
	h->budget.n = ++n;
	if (n < 2)
		return;
	old = n >= K ? n % K : 0;	/* the oldest reading kept */
	dt = (h->budget.at[(n - 1) % K] - h->budget.at[old]) / 1e9;
	if (dt <= 0)
		return;
	hits_per_s = (h->budget.calls[(n - 1) % K] - h->budget.calls[old]) / dt;
	h->budget.last = hits_per_s * h->budget.cost_ns / 1e9;
	/* A whole window, not a burst, must be over it. */
	if (n >= K && h->budget.last > h->budget.ratio)
		budget_detach(h, h->budget.last, hits_per_s);
}

int heap_budget__start(struct heap *h, double percent)
{
	struct timeval sec = {1, 0};

	h->budget.ratio = percent / 100;
	h->budget.ev = event_new(h->base, -1, EV_PERSIST, on_budget, h);
	if (!h->budget.ev || event_add(h->budget.ev, &sec))
		return -ENOMEM;
	measure_cost(h);
	on_budget(-1, 0, h);	/* the first reading */
	log__info("heap: budget %g%% of one CPU over %d s; a probe hit costs %.0f ns here (%s)",
		  percent, HEAP_BUDGET_WINDOW_S, h->budget.cost_ns,
		  h->budget.measured ? "measured on the daemon's own malloc+free pairs" :
				       "assumed: the daemon's own allocator is not probed");
	return 0;
}
