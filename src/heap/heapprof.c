// SPDX-License-Identifier: BSD-2-Clause
/*
 * heapprof: heap profiles from the BPF maps, in the two halves every
 * profile has: heap__build_begin() on the loop (the sites, and a snapshot
 * of the processes), heap_build__run() on the builder thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/abi/heap.h"
#include "bpf/abi/targets.h"
#include "heap/heap_bpf.h"
#include "heap/heap_int.h"
#include "heap/heapsites.h"
#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/htab.h"
#include "lib/log.h"
#include "lib/strbuf.h"
#include "pprof/pprof.h"
#include "proc/procs.h"
#include "profile/source.h"
#include "profile/stackprof.h"
#include "tracer/bpfobj.h"
#include "tracer/kernel.h"

struct heap_iter {
	struct heap *h;
	struct heap_sites *sites;
	bool sampled;			/* values as sampled, not scaled */
	const struct heap_sites *base;	/* a delta: less these (heap__source_mark) */
};

/* A site's four values: alloc objects and bytes, in-use objects and bytes. */
static void site_values(const struct heap_iter *it, const struct heap_site_agg *a, int64_t *v)
{
	if (it->sampled) {
		v[0] = a->alloc_count;
		v[1] = a->alloc_bytes;
		v[2] = a->live_count;
		v[3] = a->live_bytes;
		return;
	}
	heap_sites__unsample(a->alloc_count, a->alloc_bytes, it->h->sample_bytes, &v[0], &v[1]);
	heap_sites__unsample(a->live_count, a->live_bytes, it->h->sample_bytes, &v[2], &v[3]);
}

static int heap_iter(void *src, raw_stack_fn fn, void *ctx)
{
	struct heap_iter *it = src;

	for (size_t i = 0; i < it->sites->n; i++) {
		struct heap_site_agg *a = &it->sites->v[i];
		const struct heap_site_agg *b;
		int64_t values[4], was[4];
		uint64_t frames[PROFD_HEAP_STACK_DEPTH] = {};
		uint64_t uframes[PROFD_HEAP_STACK_DEPTH + 1];
		char comm[PROFD_COMM_LEN + 1] = {};
		/* exec_seq names the identity in the snapshot (snapshot()). */
		struct raw_stack st = {.pid = a->site.tgid, .comm = comm, .exec_seq = a->ident};
		uint16_t nu = 0;
		int err;

		site_values(it, a, values);
		if (it->base) {
			/* Pinned identities: a site is the same sample in both. */
			b = heap_sites__find(it->base, &a->site, a->ident);
			if (b) {
				site_values(it, b, was);
				for (int k = 0; k < 4; k++)
					values[k] -= was[k];
			}
			if (!values[0] && !values[1] && !values[2] && !values[3])
				continue;
		}
		memcpy(comm, a->site.comm, PROFD_COMM_LEN);
		/* frames[0] is the probe inside the allocator, frames[1] the
		 * caller's caller: the callsite goes between them. */
		uframes[nu++] = a->site.callsite;
		if (a->site.stack_id >= 0 &&
		    !heap_bpf__stack(it->h->obj, a->site.stack_id, frames))
			/* libprofd_heap.so's samples are taken a frame deeper,
			 * in its wrapper: frames[1] is the callsite again. */
			for (int k = frames[1] == a->site.callsite ? 2 : 1;
			     k < PROFD_HEAP_STACK_DEPTH && frames[k]; k++)
				uframes[nu++] = frames[k];
		st.uframes = uframes;
		st.nu = nu;
		st.leaf_function = heap_sites__fn_name(a->site.fn);
		memcpy(st.values, values, sizeof(values));
		err = fn(&st, ctx);
		if (err)
			return err;
	}
	return 0;
}

struct collect {
	struct heap *h;
	struct heap_sites *sites;
	struct heap_tgids tc;
	struct profd_heap_ptr *dead;	/* live entries of processes gone */
	size_t ndead, dead_cap;
};

/*
 * The aggregate site s of t's process is served as: pinned to what its
 * process is now unless it was served before.  NULL: not a target's (and
 * never served), or no memory (*err).
 */
static struct heap_site_agg *served(struct collect *col, const struct profd_heap_site *s,
				    struct heap_tgid *t, int *err)
{
	long pinned = sitekeep__pinned(&col->h->keep, s);
	uint32_t ident;

	*err = 0;
	if (pinned >= 0) {
		ident = pinned;
	} else {
		if (!heap_tgids__target(col->h, t))
			return NULL;
		*err = sitekeep__pin(&col->h->keep, s, heap_tgids__ident(col->h, t), &ident);
		if (*err)
			return NULL;
	}
	return heap_sites__get(col->sites, s, ident) ?: (*err = -ENOMEM, NULL);
}

static int collect_alloc(const void *key, const void *value, void *ctx)
{
	const struct profd_heap_site *site = key;
	const struct profd_heap_count *c = value;
	struct collect *col = ctx;
	struct heap_tgid *t = heap_tgids__get(col->h, &col->tc, site->tgid);
	struct heap_site_agg *a;
	int err;

	if (!t)
		return -ENOMEM;
	a = served(col, site, t, &err);
	if (!a)
		return err;
	a->alloc_count += c->count;
	a->alloc_bytes += c->bytes;
	return 0;
}

static int collect_live(const void *key, const void *value, void *ctx)
{
	const struct profd_heap_ptr *ptr = key;
	const struct profd_heap_live *live = value;
	struct collect *col = ctx;
	struct heap_tgid *t = heap_tgids__get(col->h, &col->tc, ptr->tgid);
	struct heap_site_agg *a;
	int err;

	if (!t)
		return -ENOMEM;
	if (!t->alive || !heap_tgids__target(col->h, t)) {
		if (!array__grow(&col->dead, &col->dead_cap, col->ndead + 1, sizeof(*col->dead)))
			col->dead[col->ndead++] = *ptr;
		return 0;
	}
	a = served(col, &live->site, t, &err);
	if (!a)
		return err;
	a->live_count++;
	a->live_bytes += live->size;
	return 0;
}

/*
 * Sites from both maps and the retired ones, counted only for targets
 * (the kernel side keeps allocations of processes it could not yet decide
 * about), each under the identity it was first served as.  First the
 * sites of exited processes leave the site map; their live allocations
 * are dropped from the live map: their memory is gone.
 */
static int collect(struct heap *h, struct heap_sites *t)
{
	struct collect col = {.h = h, .sites = t};
	int err;

	err = heap_retire__run(h, &col.tc);
	err = err ?: heap_bpf__each_alloc(h->obj, collect_alloc, &col);
	err = err ?: heap_bpf__each_live(h->obj, collect_live, &col);
	for (size_t i = 0; !err && i < h->keep.nretired; i++) {
		const struct sitekeep_retired *r = &h->keep.retired[i];
		struct heap_site_agg *a = heap_sites__get(t, &r->site, r->ident);

		if (!a) {
			err = -ENOMEM;
			break;
		}
		a->alloc_count += r->count;
		a->alloc_bytes += r->bytes;
	}
	for (size_t i = 0; !err && i < col.ndead; i++)
		heap_bpf__forget_live(h->obj, &col.dead[i]);
	free(col.dead);
	heap_tgids__free(&col.tc);
	return err;
}

/* The snapshot: each identity the sites are served as, under (pid, its id). */
static int snapshot(struct heap *h, const struct heap_sites *t, struct stackprof_snap **out)
{
	struct stackprof_snap *snap = stackprof__snap_new();
	int err = snap ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < t->n; i++) {
		const struct sitekeep_ident *id = sitekeep__ident(&h->keep, t->v[i].ident);

		err = stackprof__snap_add(snap, id->pid, t->v[i].ident, id->name[0] ? id->name : NULL,
					  &id->title, id->maps);
	}
	if (err) {
		stackprof__snap_free(snap);
		return err;
	}
	*out = snap;
	return 0;
}

/* The late starts of processes still running (a pid reused since is named too). */
static void describe_late(struct heap *h, struct strbuf *sb)
{
	uint64_t first = h->nlate > MAX_LATE ? h->nlate - MAX_LATE : 0;
	int n = 0;

	for (uint64_t i = first; i < h->nlate; i++) {
		const struct heap_late *l = &h->late[i % MAX_LATE];

		if (kill(l->pid, 0) && errno == ESRCH)
			continue;
		strbuf__adds(sb, n++ ? "; " : "profd: heap tracking started late for ");
		if (l->delay_ns >= 0)
			strbuf__addf(sb, "%s (pid %d), %.1f ms after its exec (%s probed then)",
				     l->comm, l->pid, l->delay_ns / 1e6, l->object);
		else
			strbuf__addf(sb, "%s (pid %d), already running when %s was probed",
				     l->comm, l->pid, l->object);
	}
	if (n)
		strbuf__adds(sb, ": their allocations before then are unknown");
}

/*
 * Where the samples come from once a process has preloaded libprofd_heap.so:
 * from the process itself, not from allocator probes.  The two modes give
 * the same sample types, so a reader can tell them apart (or see that a
 * postgres's preload was forgotten) only by being told.
 */
static void describe_preload(const struct heap *h, const struct heap_stats *st, struct strbuf *sb)
{
	size_t n = 0;

	for (size_t i = 0; i < h->nobjs; i++)
		n += h->objs[i].preload;
	if (!n)
		return;
	strbuf__addf(sb,
		     "profd: heap: processes that preload libprofd_heap.so (%zu such librar%s "
		     "probed) are sampled in the process, by its byte countdown, their allocators "
		     "not probed; the others' by allocator probes; %" PRIu64
		     " samples made at a mean other than this profile's dropped",
		     n, n == 1 ? "y" : "ies", st->preload_mean);
}

/* A heap profile between its two halves: what heap__build_begin() took. */
struct heap_build {
	struct heap_sites sites;
	struct heap_iter it;
	struct stackprof_snap *snap;
	struct stackprof_meta meta;
	struct strbuf head, loss, since, kernel, preload, late, stopped, delta;
	const char *comments[9];	/* up to eight (head ... delta), then NULL */
	char default_type[32];
	int64_t at_ns, at_mono;		/* when the maps were read */
};

void heap_build__free(struct heap_build *hb)
{
	if (!hb)
		return;
	stackprof__snap_free(hb->snap);
	heap_sites__free(&hb->sites);
	strbuf__free(&hb->head);
	strbuf__free(&hb->loss);
	strbuf__free(&hb->since);
	strbuf__free(&hb->kernel);
	strbuf__free(&hb->preload);
	strbuf__free(&hb->late);
	strbuf__free(&hb->stopped);
	strbuf__free(&hb->delta);
	free(hb);
}

int heap__build_begin(struct heap *h, const char *default_type, unsigned labels,
		      struct heap_build **out)
{
	static const struct pprof_value_type types[] = {
		{"alloc_objects", "count"},
		{"alloc_space", "bytes"},
		{"inuse_objects", "count"},
		{"inuse_space", "bytes"},
	};
	struct heap_build *hb = calloc(1, sizeof(*hb));
	struct heap_stats st;
	size_t nc = 0;
	int err;

	if (!hb)
		return -ENOMEM;
	hb->it = (struct heap_iter){h, &hb->sites, false, NULL};
	hb->at_ns = clock__real_ns();
	hb->at_mono = clock__mono_ns();
	snprintf(hb->default_type, sizeof(hb->default_type), "%s",
		 default_type ? default_type : "inuse_space");
	hb->meta = (struct stackprof_meta){
		.types = types,
		.ntypes = 4,
		.period_type = "space",
		.period_unit = "bytes",
		.period = (int64_t)h->sample_bytes,
		.default_type = hb->default_type,
		.start_ns = h->start_ns,
		.duration_ns = clock__mono_ns() - h->start_mono,
		.comments = hb->comments,
		.labels = labels,
	};
	heap__stats(h, &st);
	strbuf__addf(&hb->head,
		     "profd: heap, one sample per %" PRIu64 " bytes on average; %" PRIu64
		     " allocations sampled, %" PRIu64 " of them freed",
		     h->sample_bytes, st.sampled, st.freed);
	strbuf__addf(&hb->loss,
		     "profd: sampled allocations not tracked: live map full %" PRIu64
		     ", site map full %" PRIu64 ", stack failures %" PRIu64
		     ", calls in flight full %" PRIu64 "; sites of exited processes kept %zu of %zu"
		     ", %" PRIu64 " dropped for room",
		     st.live_full, st.allocs_full, st.stack_errors, st.pending_full,
		     h->keep.nretired, h->keep.max, st.sites_dropped);
	strbuf__addf(&hb->since,
		     "profd: allocations made before tracking began are unknown (tracking for %.0f s)",
		     hb->meta.duration_ns / 1e9);
	strbuf__adds(&hb->kernel, "profd: ");
	kernel__describe(bpfobj__features(h->obj),
			 heap__probes_text(bpfobj__features(h->obj), h->probe_all), &hb->kernel);
	describe_preload(h, &st, &hb->preload);
	describe_late(h, &hb->late);
	hb->comments[nc++] = hb->head.buf;
	hb->comments[nc++] = hb->loss.buf;
	hb->comments[nc++] = hb->since.buf;
	hb->comments[nc++] = hb->kernel.buf;
	if (hb->preload.buf)
		hb->comments[nc++] = hb->preload.buf;
	if (hb->late.buf)
		hb->comments[nc++] = hb->late.buf;
	if (h->budget.detached) {
		strbuf__addf(&hb->stopped,
			     "profd: heap tracking stopped %.0f s after it began: %s; allocations "
			     "since are not seen, and in-use values are as of then",
			     (h->budget.detached_mono - h->start_mono) / 1e9, h->budget.why);
		hb->comments[nc++] = hb->stopped.buf;
	}
	err = strbuf__err(&hb->head) ?: strbuf__err(&hb->loss) ?: strbuf__err(&hb->since) ?:
	      strbuf__err(&hb->kernel) ?: strbuf__err(&hb->preload) ?: strbuf__err(&hb->late) ?:
	      strbuf__err(&hb->stopped);
	err = err ?: collect(h, &hb->sites);
	err = err ?: snapshot(h, &hb->sites, &hb->snap);
	if (err) {
		heap_build__free(hb);
		return err;
	}
	*out = hb;
	return 0;
}

int heap_build__run(struct heap_build *hb, struct symbolizer *sym, struct pprof **out)
{
	return stackprof__build(sym, hb->snap, &hb->meta, heap_iter, &hb->it, out, NULL);
}

/* Heap profiles as a profile source (profile/source.h): the snapshot is
 * heap__build_begin(), the build heap_build__run(). */
struct heap_source {
	struct profile_source src;	/* first */
	struct heap *h;
	const char *default_type;
	unsigned labels;
	bool sampled;
	struct heap_build *base;	/* heap__source_mark's */
	struct heap_build *hb;
};

/* The last comment slot free (comments[] ends with NULL). */
static const char **comment_slot(struct heap_build *hb)
{
	size_t n = 0;

	while (hb->comments[n])
		n++;
	return &hb->comments[n];
}

static int source_snapshot(struct profile_source *src)
{
	struct heap_source *hs = (struct heap_source *)src;
	struct heap_build *hb;
	int err;

	heap_build__free(hs->hb);
	hs->hb = NULL;
	err = heap__build_begin(hs->h, hs->default_type, hs->labels, &hs->hb);
	if (err)
		return err;
	hb = hs->hb;
	hb->it.sampled = hs->sampled;
	if (hs->base) {
		/* As Go's delta profiles: the time of the end, the duration between. */
		hb->it.base = &hs->base->sites;
		hb->meta.start_ns = hb->at_ns;
		hb->meta.duration_ns = hb->at_mono - hs->base->at_mono;
		strbuf__addf(&hb->delta,
			     "profd: the change over the last %.1f s (?seconds=): allocations made "
			     "meanwhile and the change in memory in use; sites unchanged left out",
			     hb->meta.duration_ns / 1e9);
		err = strbuf__err(&hb->delta);
		if (err)
			return err;
		*comment_slot(hb) = hb->delta.buf;
	}
	return 0;
}

void heap__source_sampled(struct profile_source *src)
{
	((struct heap_source *)src)->sampled = true;
}

int heap__source_mark(struct profile_source *src)
{
	struct heap_source *hs = (struct heap_source *)src;
	int err;

	heap_build__free(hs->base);
	hs->base = NULL;
	err = heap__build_begin(hs->h, hs->default_type, hs->labels, &hs->base);
	if (err)
		return err;
	/* Only its sites are needed: not the maps its snapshot holds. */
	stackprof__snap_free(hs->base->snap);
	hs->base->snap = NULL;
	return 0;
}

static int source_build(struct profile_source *src, struct symbolizer *sym, struct pprof **out)
{
	return heap_build__run(((struct heap_source *)src)->hb, sym, out);
}

static void source_free(struct profile_source *src)
{
	struct heap_source *hs = (struct heap_source *)src;

	heap_build__free(hs->hb);
	heap_build__free(hs->base);
	free(hs);
}

static const struct profile_source_ops heap_source_ops = {
	.building = "building the heap profile",
	.snapshot = source_snapshot,
	.build = source_build,
	.free = source_free,
};

int heap__source(struct heap *h, const char *default_type, unsigned labels,
		 struct profile_source **out)
{
	struct heap_source *hs = calloc(1, sizeof(*hs));

	if (!hs)
		return -ENOMEM;
	hs->src.ops = &heap_source_ops;
	hs->h = h;
	hs->default_type = default_type;
	hs->labels = labels;
	*out = &hs->src;
	return 0;
}
