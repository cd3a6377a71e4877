// SPDX-License-Identifier: BSD-2-Clause
/*
 * probes: finding the targets' allocators (the objects they map, read again
 * over a new process's first second) and deciding which processes get
 * probes on them: targets when they start, exec or fork, not a process
 * that exec'd something else or exited.  Making the probes, one process's
 * at a time, is attach.c's; where in a function a probe goes
 * uprobe_place.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <event2/event.h>

#include "bpf/abi/heap.h"
#include "bpf/abi/targets.h"
#include "heap/heap_bpf.h"
#include "heap/heap_int.h"
#include "heap/uprobe_place.h"
#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/mapped_file.h"
#include "proc/procs.h"
#include "tracer/bpfobj.h"
#include "tracer/kernel.h"

/*
 * After a target execs, ld.so maps its libraries (and any preloaded
 * allocator) before main() runs, and dlopen can bring more later: its maps
 * are read again on this schedule, so allocators are found without a CPU
 * session's help.
 */
static const int rescan_ms[] = {2, 10, 50, 250, 1000};

static uint32_t seen_hash(uint64_t dev, uint64_t ino)
{
	return hash__final(hash__u64(hash__u64(HASH_SEED, dev), ino));
}

static bool seen_eq(const void *ctx, size_t pos, const void *key)
{
	const struct heap_seen *a = &((const struct heap *)ctx)->seen[pos], *b = key;

	return a->dev == b->dev && a->ino == b->ino;
}

/* Its position in seen[], or -1. */
static long seen_find(struct heap *h, uint64_t dev, uint64_t ino)
{
	struct heap_seen k = {dev, ino};

	return htab__find(&h->seen_index, seen_hash(dev, ino), seen_eq, h, &k, NULL);
}

/* Remember an object without an allocator, forgetting the oldest when full. */
static void seen_add(struct heap *h, uint64_t dev, uint64_t ino)
{
	size_t pos = h->seen_next % MAX_SEEN;
	struct heap_seen k = {dev, ino}, *old = &h->seen[pos];
	struct htab_slot *slot;

	if (h->seen_next >= MAX_SEEN)
		htab__remove(&h->seen_index, seen_hash(old->dev, old->ino), pos);
	if (htab__reserve(&h->seen_index))
		return;		/* only costs a scan next time */
	if (htab__find(&h->seen_index, seen_hash(dev, ino), seen_eq, h, &k, &slot) >= 0)
		return;
	*old = k;
	htab__set(&h->seen_index, slot, seen_hash(dev, ino), pos);
	h->seen_next++;
}

/* An allocator with no slot left: counted, and said at most once a minute. */
static void refuse(struct heap *h, const char *path)
{
	int64_t now = clock__mono_ns();

	h->refused++;
	if (h->refused_logged_ns && now - h->refused_logged_ns < 60 * 1000000000ll)
		return;
	h->refused_logged_ns = now;
	log__warn("heap: %s defines an allocator, but all %d allocator slots are taken: its "
		  "processes are not tracked (%" PRIu64 " refused so far)", path, MAX_OBJECTS,
		  h->refused);
}

/*
 * Look at one mapped object once: if it defines an allocator, remember
 * where its probes go.  Its objs[] index, or -1 (no allocator, or no slot).
 */
static long find_object(struct heap *h, int pid, const struct proc_map *m)
{
	struct uprobe_site sites[UPROBE_PLACE_MAX];
	struct mapped_file mf = {pid, m->start, m->end, m->path, m->dev, m->ino};
	const char *base = strrchr(m->path, '/');
	struct heap_object *o;
	int found, fd;

	for (size_t i = 0; i < h->nobjs; i++)
		if (h->objs[i].dev == m->dev && h->objs[i].ino == m->ino)
			return i;
	if (seen_find(h, m->dev, m->ino) >= 0)
		return -1;
	/*
	 * One open file for reading and attaching: the kernel resolves
	 * /proc/self/fd/N to this very file, so a path swapped in between
	 * cannot put the probes in another file.  A file that cannot be
	 * opened now (its process just exited) is looked at again next time.
	 */
	fd = mapped_file__open(&mf);
	if (fd < 0)
		return -1;
	found = uprobe_place__find(fd, sites, UPROBE_PLACE_MAX);
	if (found <= 0) {
		/* No allocator here (most of what a process maps). */
		seen_add(h, m->dev, m->ino);
		close(fd);
		return -1;
	}
	if (h->nobjs == MAX_OBJECTS) {
		refuse(h, m->path);
		close(fd);
		return -1;
	}
	o = &h->objs[h->nobjs];
	memset(o, 0, sizeof(*o));
	o->dev = m->dev;
	o->ino = m->ino;
	o->fd = fd;
	snprintf(o->name, sizeof(o->name), "%s", base ? base + 1 : m->path);
	for (int i = 0; i < found; i++)
		o->preload |= sites[i].fn == PROFD_FN_PRELOAD_SAMPLED;
	for (int i = 0; i < found; i++) {
		bool marker = sites[i].fn == PROFD_FN_PRELOAD_SAMPLED ||
			      sites[i].fn == PROFD_FN_PRELOAD_FREED;

		/* libprofd_heap.so: its two functions, not the allocator it
		 * wraps (whose calls the next object's probes would count). */
		if (o->preload != marker)
			continue;
		if (marker) {
			o->offsets[o->n] = sites[i].entry_offset;
			o->cookies[o->n] = PROFD_COOKIE(sites[i].fn, 0);
			o->ret[o->n++] = false;
			continue;
		}
		log__info("heap: %s: %s", m->path, sites[i].note);
		if (sites[i].wrapper)
			continue;
		/* A return probe takes the return address from the top of the
		 * stack: only a probe before any push can have one. */
		if (sites[i].fn != PROFD_FN_FREE && sites[i].stack_delta) {
			sites[i].offset = sites[i].entry_offset;
			sites[i].stack_delta = 0;
		}
		o->offsets[o->n] = sites[i].offset;
		o->cookies[o->n] = PROFD_COOKIE(sites[i].fn, sites[i].stack_delta);
		o->ret[o->n++] = sites[i].fn != PROFD_FN_FREE;
	}
	if (!o->n || (o->preload && o->n != 2)) {
		close(fd);
		seen_add(h, m->dev, m->ino);
		return -1;
	}
	if (o->preload)
		log__info("heap: %s: sampled in the process (libprofd_heap.so): its processes' "
			  "allocators are not probed, only its samples", m->path);
	return h->nobjs++;
}

/* Probe objs[obj] for pid (for every process: h->probe_all), unless it
 * has those probes already, maybe inherited. */
static int attach(struct heap *h, int pid, size_t obj)
{
	if (!h->probe_all && heap_attach__covers(h, pid, obj))
		return 0;
	return heap_attach__add(h, h->probe_all ? -1 : pid, obj);
}

bool heap_probe__is_target(struct heap *h, int pid)
{
	if (targets__whole_system(&h->targets))
		return true;
	if (bpfobj__pid_mask(h->obj, pid) & PROFD_HEAP_BIT)
		return true;
	return h->targets.nexes && bpfobj__exe_matches(h->obj, PROFD_HEAP_BIT, pid);
}

/* pid ran before the allocator in path was probed: say so in profiles. */
static void note_late(struct heap *h, int pid, const char *path, int64_t exec_ns)
{
	struct heap_late *l = &h->late[h->nlate++ % MAX_LATE];
	const char *name = procs__name(bpfobj__procs(h->obj), pid);
	const char *base = strrchr(path, '/');

	memset(l, 0, sizeof(*l));
	l->pid = pid;
	snprintf(l->comm, sizeof(l->comm), "%s", name ? name : "?");
	snprintf(l->object, sizeof(l->object), "%s", base ? base + 1 : path);
	l->delay_ns = exec_ns > 0 ? clock__mono_ns() - exec_ns : -1;
	if (l->delay_ns >= 0)
		log__info("heap: %s (pid %d) is tracked from %.1f ms after its exec: its allocator "
			  "in %s was probed then", l->comm, pid, l->delay_ns / 1e6, l->object);
	else
		log__info("heap: %s (pid %d) ran before its allocator in %s was probed",
			  l->comm, pid, l->object);
}

/*
 * Probe the allocators pid maps (with probe false, only find them).
 * exec_ns: when it exec'd (0 if unknown), or -1 when it is no news that
 * pid ran first (at start-up).
 */
static void probe_process(struct heap *h, int pid, int64_t exec_ns, bool probe)
{
	const struct proc_maps *pm = procs__maps(bpfobj__procs(h->obj), pid, PROCS_SEQ_LATEST);
	struct proc_maps *held = proc_maps__get(pm);
	long preload = -1;

	/*
	 * A process that maps libprofd_heap.so samples itself: only its two
	 * functions are probed, and probes on its allocators (libc's, made at
	 * its exec before ld.so mapped the preload) go.  Probes for every
	 * process cannot leave a process out: there the preload is ignored,
	 * and the allocator probes count its calls as anyone's.
	 */
	for (size_t i = 0; held && i < held->n && !h->probe_all; i++) {
		long obj = find_object(h, pid, &held->m[i]);

		if (obj >= 0 && h->objs[obj].preload)
			preload = obj;
	}
	if (preload >= 0 && probe) {
		/*
		 * One probe on its two functions for every process: only those
		 * that preloaded the library map it, and they trap once per
		 * sample; the BPF side keeps the targets'.  Not perf events in
		 * each target: a task with a perf context pays at every context
		 * switch (0.85x pgbench -S with them, the library alone 1.00x).
		 */
		if (!heap_attach__has(h, -1, preload))
			heap_attach__add(h, -1, preload);
		/* Probes on its allocators, made at its exec before ld.so
		 * mapped the library, would count its calls twice. */
		heap_attach__drop(h, pid);
		proc_maps__put(held);
		return;
	}
	/* Held: attaching can read other processes, which may evict pid's. */
	for (size_t i = 0; held && i < held->n; i++) {
		long obj = find_object(h, pid, &held->m[i]);

		if (obj < 0 || !probe || h->objs[obj].preload)
			continue;
		if (attach(h, pid, obj) == 1 && exec_ns >= 0 && !h->objs[obj].self)
			note_late(h, pid, held->m[i].path, exec_ns);
	}
	proc_maps__put(held);
}

void heap_probe__on_rescan(evutil_socket_t fd, short what, void *arg)
{
	struct rescan *r = arg;
	struct heap *h = r->h;
	struct timeval tv;

	/* Gone, or it exec'd a program that is not a target meanwhile. */
	if ((kill(r->pid, 0) && errno == ESRCH) || !heap_probe__is_target(h, r->pid)) {
		r->pid = 0;
		return;
	}
	procs__snapshot(bpfobj__procs(h->obj), r->pid, 0, NULL, PROCS_SEQ_LATEST);
	probe_process(h, r->pid, r->exec_ns, true);
	if (++r->step >= (int)(sizeof(rescan_ms) / sizeof(rescan_ms[0]))) {
		r->pid = 0;
		return;
	}
	tv.tv_sec = 0;
	tv.tv_usec = (rescan_ms[r->step] - rescan_ms[r->step - 1]) * 1000;
	evtimer_add(r->ev, &tv);
}

/* Read pid's maps again over its first second (a free slot permitting). */
static void schedule_rescan(struct heap *h, int pid, int64_t exec_ns)
{
	struct timeval tv = {0, rescan_ms[0] * 1000};

	for (int i = 0; i < MAX_RESCANS; i++) {
		struct rescan *r = &h->rescans[i];

		if (r->pid)
			continue;
		r->pid = pid;
		r->step = 0;
		r->exec_ns = exec_ns;
		evtimer_add(r->ev, &tv);
		return;
	}
}

/* Does pid map o, as its maps were last read? */
static bool maps_object(struct heap *h, int pid, const struct heap_object *o)
{
	const struct proc_maps *pm = procs__maps(bpfobj__procs(h->obj), pid, PROCS_SEQ_LATEST);

	for (size_t i = 0; pm && i < pm->n; i++)
		if (pm->m[i].dev == o->dev && pm->m[i].ino == o->ino)
			return true;
	return false;
}

/*
 * A target's child whose parent had no probes to give it (heap_attach__
 * forked): the probes it needs are its parent's objects', made as soon as
 * its fork is reported.  Until then its allocations are not seen.  The
 * delay is counted.
 */
static void attach_child(struct heap *h, const struct profd_proc_event *e)
{
	bool any = false;

	for (size_t i = 0; i < h->natt; i++) {
		/* add() may move att[]: the index is read afresh each time. */
		if (h->att[i].pid != (int)e->ppid)
			continue;
		any = true;
		heap_attach__add(h, e->pid, h->att[i].obj);
	}
	/* A parent not probed (yet): the child's own maps say what it needs. */
	if (!any)
		probe_process(h, e->pid, -1, true);
	for (size_t i = 0; i < h->natt; i++) {
		if (h->att[i].pid == (int)e->pid && e->ktime) {
			int64_t d = clock__mono_ns() - (int64_t)e->ktime;

			h->as.forks++;
			h->as.fork_ns += d;
			if (d > h->as.fork_max_ns)
				h->as.fork_max_ns = d;
			break;
		}
	}
}

void heap_probe__on_proc(void *ctx, const struct profd_proc_event *e)
{
	struct heap *h = ctx;
	int64_t exec_ns;

	/* Its sites can leave the site map (retire.c). */
	if (e->reason == PROFD_PROC_EXIT)
		h->retire.exits++;
	if (h->budget.detached)
		return;
	if (e->reason == PROFD_PROC_EXIT) {
		heap_attach__gone(h, e->pid);
		return;
	}
	if (h->probe_all) {
		/* Probes for every process: only new allocators matter, which
		 * ld.so maps after the exec; with targets, only theirs. */
		if (e->reason == PROFD_PROC_FORK ||
		    (!targets__whole_system(&h->targets) && !heap_probe__is_target(h, e->pid)))
			return;
		exec_ns = e->reason == PROFD_PROC_EXEC ? (int64_t)e->ktime : 0;
		probe_process(h, e->pid, exec_ns, true);
		if (e->reason == PROFD_PROC_EXEC)
			schedule_rescan(h, e->pid, exec_ns);
		return;
	}
	if (!heap_probe__is_target(h, e->pid)) {
		/* It exec'd a program that is not a target: it stops paying
		 * (but for probes it inherited, heap_attach__gone). */
		heap_attach__gone(h, e->pid);
		return;
	}
	if (e->reason == PROFD_PROC_FORK) {
		/* Its parent's probes came with it, before it ran. */
		if (!heap_attach__forked(h, e->pid, e->ppid))
			attach_child(h, e);
		return;
	}
	exec_ns = e->reason == PROFD_PROC_EXEC ? (int64_t)e->ktime : 0;
	if (e->reason == PROFD_PROC_EXEC) {
		/*
		 * ld.so has not mapped its libraries yet: probes on the libc
		 * the daemon maps, made now, are in place when it does (the
		 * kernel installs them at that mmap), so a program using it
		 * is tracked from its first allocation if this event is
		 * handled before ld.so gets there.
		 */
		bool fresh = false;

		for (size_t i = 0; i < h->nobjs; i++) {
			bool mapped;

			if (!h->objs[i].self || heap_attach__covers(h, e->pid, i))
				continue;
			/* Mapped already (the event came late): its first
			 * allocations may have gone unseen, and the profile
			 * says so.  Read now, before the probes: maps read at
			 * the exec event may be older than ld.so's mmap. */
			if (!fresh)
				procs__snapshot(bpfobj__procs(h->obj), e->pid, 0, NULL,
						PROCS_SEQ_LATEST);
			fresh = true;
			mapped = maps_object(h, e->pid, &h->objs[i]);
			if (mapped) {
				if (heap_attach__add(h, e->pid, i) == 1)
					note_late(h, e->pid, h->objs[i].name, exec_ns);
				continue;
			}
			/*
			 * Not mapped yet: probes opened in microseconds, whose
			 * breakpoints the kernel writes at ld.so's mmap, so the
			 * program is tracked from its first allocation.  If it
			 * mapped the object meanwhile (before or after them:
			 * nobody can tell), they are made again the slow way,
			 * which writes them now, and the start is said late.
			 */
			if (heap_attach__add_unmapped(h, e->pid, i) != 1)
				continue;
			procs__snapshot(bpfobj__procs(h->obj), e->pid, 0, NULL, PROCS_SEQ_LATEST);
			if (maps_object(h, e->pid, &h->objs[i]) &&
			    heap_attach__redo(h, e->pid, i) == 0)
				note_late(h, e->pid, h->objs[i].name, exec_ns);
		}
	}
	probe_process(h, e->pid, exec_ns, true);
	if (e->reason == PROFD_PROC_EXEC)
		schedule_rescan(h, e->pid, exec_ns);
}

void heap_probe__self(struct heap *h)
{
	size_t before = h->nobjs;

#ifdef PROFD_STATIC
	/* The static build (make dist) has its allocator inside itself, mapped
	 * by no other process: init's libc stands in for the one most programs
	 * map (and the budget, finding its own pairs unprobed, keeps its
	 * default cost per hit, budget.c). */
	probe_process(h, 1, -1, false);
#else
	probe_process(h, getpid(), -1, false);
#endif
	for (size_t i = before; i < h->nobjs; i++)
		h->objs[i].self = true;
}

/*
 * Probe the allocators of targets running now; later ones come by heap_probe__on_proc.
 * The daemon's own objects are found first (and probed only for the budget's
 * measurement, budget.c): its libc is the one most programs map, and a
 * target that execs later gets probes on it at once (heap_probe__on_proc).
 */
void heap_probe__running(struct heap *h)
{
	struct dirent *d;
	DIR *dir;

	heap_probe__self(h);
	for (size_t i = 0; i < h->nobjs; i++) {
		if (h->probe_all)
			attach(h, -1, i);
		else
			heap_attach__prepare(h, i);	/* exec events go the fast way */
	}
	for (size_t i = 0; i < h->targets.npids; i++)
		probe_process(h, h->targets.pids[i], -1, true);
	if (!h->targets.nexes)
		return;
	dir = opendir("/proc");
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		int pid = atoi(d->d_name);

		if (pid <= 0)
			continue;
		if (heap_probe__is_target(h, pid))
			probe_process(h, pid, -1, true);
	}
	closedir(dir);
}
