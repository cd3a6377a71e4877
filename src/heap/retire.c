// SPDX-License-Identifier: BSD-2-Clause
/*
 * retire: the BPF site map's sites of exited processes moved out to
 * sitekeep (heap/sitekeep.h), so that the map, which is keyed by process
 * and fixed in size, does not fill under connection churn; the live map's
 * allocations of exited processes dropped, for the same reason (a backend
 * exits without freeing, and its memory goes with it); and the
 * per-pass view of processes both this and heapprof.c's profiles use
 * (heap_int.h).  On the loop's thread.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <linux/types.h>

#include "bpf/abi/heap.h"
#include "heap/heap_bpf.h"
#include "heap/heap_int.h"
#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "proc/procs.h"
#include "proc/procstat.h"
#include "proc/titles.h"
#include "tracer/bpfobj.h"

/* A pass at least this often while anything is in the map, even with no
 * sign of change (exits the kernel side does not report). */
#define RETIRE_IDLE_NS (10 * 1000000000ll)

static bool tgid_eq(const void *ctx, size_t pos, const void *key)
{
	return ((const struct heap_tgids *)ctx)->v[pos].tgid == *(const uint32_t *)key;
}

struct heap_tgid *heap_tgids__get(struct heap *h, struct heap_tgids *c, uint32_t tgid)
{
	uint32_t hash = hash__final(hash__u64(HASH_SEED, tgid));
	struct htab_slot *slot;
	struct heap_tgid *t;
	long pos;

	if (htab__reserve(&c->index) || array__grow(&c->v, &c->cap, c->n + 1, sizeof(*c->v)))
		return NULL;
	pos = htab__find(&c->index, hash, tgid_eq, c, &tgid, &slot);
	if (pos >= 0)
		return &c->v[pos];
	t = &c->v[c->n];
	memset(t, 0, sizeof(*t));
	t->tgid = tgid;
	t->alive = !(kill(tgid, 0) && errno == ESRCH);
	t->target = -1;
	htab__set(&c->index, slot, hash, c->n++);
	return t;
}

bool heap_tgids__target(struct heap *h, struct heap_tgid *t)
{
	if (t->target < 0)
		t->target = heap_probe__is_target(h, t->tgid);
	return t->target;
}

/* A label copied into a zeroed field, so identities compare whole. */
static void copy_label(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

const struct sitekeep_ident *heap_tgids__ident(struct heap *h, struct heap_tgid *t)
{
	struct procs *procs = bpfobj__procs(h->obj);
	struct titles *titles = bpfobj__titles(h->obj);
	const struct proctitle *title;
	const char *name;

	if (t->have_ident)
		return &t->ident;
	memset(&t->ident, 0, sizeof(t->ident));
	t->ident.pid = t->tgid;
	name = procs__name(procs, t->tgid);
	if (name)
		copy_label(t->ident.name, sizeof(t->ident.name), name);
	/* Rate-limited inside; an exited process's title as it was read, or
	 * as the kernel side read it at exit_group. */
	title = titles ? titles__get(titles, t->tgid, clock__mono_ns()) : NULL;
	if (title) {
		copy_label(t->ident.title.backend_type, sizeof(t->ident.title.backend_type),
			   title->backend_type);
		copy_label(t->ident.title.database, sizeof(t->ident.title.database), title->database);
		copy_label(t->ident.title.user, sizeof(t->ident.title.user), title->user);
	}
	/* As stackprof's snapshot: what was recorded, never a reused pid's. */
	t->ident.maps = proc_maps__get(procs__maps_known(procs, t->tgid, PROCS_SEQ_LATEST));
	t->have_ident = true;
	return &t->ident;
}

void heap_tgids__free(struct heap_tgids *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].have_ident)
			proc_maps__put(c->v[i].ident.maps);
	free(c->v);
	htab__free(&c->index);
	memset(c, 0, sizeof(*c));
}

/*
 * Has pid exited, though kill(pid, 0) finds it?  A zombie does, and a
 * process between its exit and that: the kernel side forgets a pid target
 * at its exit (profd_exit), so such a process passes for a living
 * non-target, whose sites are dropped, not retired (a pass between a
 * child's exit and its parent's wait lost its 30 sites in t_heap_sites).
 * Asked only of sites that would be dropped: a /proc read each.
 */
static bool exiting(uint32_t pid)
{
	struct procstat st;

	if (procstat__read("/proc", (int)pid, &st))
		return true;
	return st.state == 'Z' || st.state == 'X' || (st.flags & PROCSTAT_PF_EXITING);
}

/* A site leaving the map: its process exited, or is no target. */
struct dead_site {
	struct profd_heap_site site;
	struct profd_heap_count count;
};

struct retire_walk {
	struct heap *h;
	struct heap_tgids *c;
	struct dead_site *v;
	size_t n, cap;
	size_t seen;
};

static int retire_entry(const void *key, const void *value, void *ctx)
{
	struct retire_walk *w = ctx;
	const struct profd_heap_site *site = key;
	struct heap_tgid *t = heap_tgids__get(w->h, w->c, site->tgid);

	if (!t)
		return -ENOMEM;
	w->seen++;
	/* A live target's site stays.  Kept too until decided: the kernel
	 * side keeps a sampled allocation of a process it cannot yet tell is
	 * a target, and many that are not fill the map otherwise. */
	if (t->alive && (sitekeep__pinned(&w->h->keep, site) >= 0 || heap_tgids__target(w->h, t)))
		return 0;
	if (t->alive && !t->stat_read) {
		t->stat_read = true;
		t->alive = !exiting(t->tgid);
	}
	if (array__grow(&w->v, &w->cap, w->n + 1, sizeof(*w->v)))
		return -ENOMEM;
	w->v[w->n].site = *site;
	w->v[w->n].count = *(const struct profd_heap_count *)value;
	w->n++;
	return 0;
}

static int pin_gone(void *ctx, uint32_t pid)
{
	struct retire_walk *w = ctx;
	struct heap_tgid *t = heap_tgids__get(w->h, w->c, pid);

	return t ? !t->alive : -ENOMEM;
}

/* The live map's allocations of exited processes. */
struct live_walk {
	struct heap *h;
	struct heap_tgids *c;
	struct profd_heap_ptr *v;
	size_t n, cap;
};

static int live_entry(const void *key, const void *value, void *ctx)
{
	struct live_walk *w = ctx;
	const struct profd_heap_ptr *ptr = key;
	struct heap_tgid *t = heap_tgids__get(w->h, w->c, ptr->tgid);

	(void)value;
	if (!t)
		return -ENOMEM;
	if (t->alive)
		return 0;
	if (array__grow(&w->v, &w->cap, w->n + 1, sizeof(*w->v)))
		return -ENOMEM;
	w->v[w->n++] = *ptr;
	return 0;
}

int heap_retire__run(struct heap *h, struct heap_tgids *c)
{
	struct retire_walk w = {.h = h, .c = c};
	struct live_walk lw = {.h = h, .c = c};
	int64_t now = clock__mono_ns();
	/* The live map (up to 65536 entries) only gains dead entries by exits:
	 * walked when some were reported, and every 10 s for those that
	 * were not, rather than at every pass that new samples bring. */
	bool walk_live = h->retire.exits || h->retire.again ||
			 now - h->retire.live_mono >= RETIRE_IDLE_NS;
	uint64_t sum[PROFD_HSTAT_NR];
	size_t retired = 0;
	int err;

	/* First the process events waiting on the ring: a child forked and
	 * gone since the last read is known to the process table only then,
	 * and the maps its sites are pinned with are for good. */
	bpfobj__drain(h->obj);
	heap_bpf__stats(h->obj, sum);
	err = heap_bpf__each_alloc(h->obj, retire_entry, &w);
	for (size_t i = 0; !err && i < w.n; i++) {
		const struct profd_heap_site *s = &w.v[i].site;
		struct heap_tgid *t = heap_tgids__get(h, c, s->tgid);

		if (!t) {
			err = -ENOMEM;
			break;
		}
		/* A site served before is a target's, whatever is known of its
		 * process now.  One never served: without executable targets
		 * the kernel side keeps only targets' (pid_targets, which
		 * forgets a process at its exit); with them, as the process
		 * table last knew its executable. */
		if (!t->alive && (sitekeep__pinned(&h->keep, s) >= 0 || !h->targets.nexes ||
				  heap_tgids__target(h, t))) {
			err = sitekeep__retire(&h->keep, s, heap_tgids__ident(h, t),
					       w.v[i].count.count, w.v[i].count.bytes);
			if (err)
				break;
			retired++;
		}
		/* Exited: nothing allocates in its name any more.  Not a
		 * target: never served.  Either way the entry can go. */
		heap_bpf__forget_site(h->obj, s);
	}
	err = err ?: sitekeep__unpin_gone(&h->keep, pin_gone, &w);
	/* Their memory is gone: in-use values lose nothing, and the map has
	 * room for the allocations of processes that live.  Before, only a
	 * profile dropped them, and a minute of churn between scrapes could
	 * fill the map (profd_heap_live_map_full_total). */
	if (!err && walk_live) {
		err = heap_bpf__each_live(h->obj, live_entry, &lw);
		for (size_t i = 0; !err && i < lw.n; i++)
			heap_bpf__forget_live(h->obj, &lw.v[i]);
		h->retire.live_mono = now;
	}
	free(lw.v);
	free(w.v);
	h->retire.sampled = sum[PROFD_HSTAT_SAMPLED];
	h->retire.again = h->retire.exits > 0;
	h->retire.exits = 0;
	h->retire.last_mono = clock__mono_ns();
	h->retire.passes++;
	h->retire.sites = w.seen - w.n;
	if (err)
		log__warn("heap: moving the sites of exited processes out of the site map: %s",
			  strerror(-err));
	else if (retired)
		log__debug("heap: %zu sites of exited processes retired (%zu in the site map)",
			   retired, h->retire.sites);
	return err;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct heap *h = arg;
	struct heap_tgids c = {};
	uint64_t sum[PROFD_HSTAT_NR];

	(void)fd;
	(void)what;
	heap_bpf__stats(h->obj, sum);
	/* New sites come only with sampled allocations; exits free room (and
	 * once more a tick later, for exits not reaped yet).  With neither,
	 * look now and then anyway: not every exit is reported. */
	if (sum[PROFD_HSTAT_SAMPLED] == h->retire.sampled && !h->retire.exits &&
	    !h->retire.again &&
	    (!h->retire.sites || clock__mono_ns() - h->retire.last_mono < RETIRE_IDLE_NS))
		return;
	heap_retire__run(h, &c);
	heap_tgids__free(&c);
}

int heap_retire__start(struct heap *h)
{
	struct timeval tv = {1, 0};

	h->retire.ev = event_new(h->base, -1, EV_PERSIST, on_timer, h);
	if (!h->retire.ev || event_add(h->retire.ev, &tv))
		return -ENOMEM;
	return 0;
}
