// SPDX-License-Identifier: BSD-2-Clause
/*
 * probes: finding the targets' allocators (the objects they map, read again
 * over a new process's first second) and attaching probes to them, as uprobe
 * sessions or uprobe+uretprobe pairs.  Where in a function a probe goes is
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

/* Kernels without sessions: a uprobe per entry, a uretprobe per allocating function. */
static int attach_uprobes(struct heap *h, struct heap_object *o, const char *path,
			  const uint64_t *offsets, const uint64_t *cookies,
			  const struct uprobe_site *sites, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct bpf_link *l;

		l = heap_bpf__attach_uprobe(h->obj, path, offsets[i], cookies[i], false);
		if (!l)
			return -errno;
		o->links[o->nlinks++] = l;
		if (sites[i].fn == PROFD_FN_FREE)
			continue;
		l = heap_bpf__attach_uprobe(h->obj, path, offsets[i], cookies[i], true);
		if (!l)
			return -errno;
		o->links[o->nlinks++] = l;
	}
	return 0;
}

void heap_probe__detach(struct heap_object *o)
{
	for (int i = 0; i < o->nlinks; i++) {
		if (o->links[i])
			bpf_link__destroy(o->links[i]);
		else if (o->link_fds[i] > 0)
			close(o->link_fds[i]);
	}
	o->nlinks = 0;
}

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
 * Look at one mapped object once: attach probes if it defines an
 * allocator.  Returns 1 if it attached them now, else 0.
 */
static int probe_object(struct heap *h, int pid, const struct proc_map *m)
{
	struct uprobe_site sites[UPROBE_PLACE_MAX];
	uint64_t offsets[UPROBE_PLACE_MAX], cookies[UPROBE_PLACE_MAX];
	struct mapped_file mf = {pid, m->start, m->end, m->path, m->dev, m->ino};
	struct uprobe_site used[UPROBE_PLACE_MAX];
	struct heap_object *o;
	char fdpath[64];
	int found, fd, err;
	size_t n = 0;

	for (size_t i = 0; i < h->nobjs; i++)
		if (h->objs[i].dev == m->dev && h->objs[i].ino == m->ino)
			return 0;
	if (seen_find(h, m->dev, m->ino) >= 0)
		return 0;
	/*
	 * One open file for reading and attaching: the kernel resolves
	 * /proc/self/fd/N to this very file, so a path swapped in between
	 * cannot put the probes in another file.  A file that cannot be
	 * opened now (its process just exited) is looked at again next time.
	 */
	fd = mapped_file__open(&mf);
	if (fd < 0)
		return 0;
	found = uprobe_place__find(fd, sites, UPROBE_PLACE_MAX);
	if (found <= 0) {
		/* No allocator here (most of what a process maps). */
		seen_add(h, m->dev, m->ino);
		close(fd);
		return 0;
	}
	if (h->nobjs == MAX_OBJECTS) {
		refuse(h, m->path);
		close(fd);
		return 0;
	}
	o = &h->objs[h->nobjs++];
	memset(o, 0, sizeof(*o));
	o->dev = m->dev;
	o->ino = m->ino;
	for (int i = 0; i < found; i++) {
		log__info("heap: %s: %s", m->path, sites[i].note);
		if (sites[i].wrapper)
			continue;
		/* A return probe takes the return address from the top of the
		 * stack: only a probe before any push can have one. */
		if (sites[i].fn != PROFD_FN_FREE && sites[i].stack_delta) {
			sites[i].offset = sites[i].entry_offset;
			sites[i].stack_delta = 0;
		}
		offsets[n] = sites[i].offset;
		cookies[n] = PROFD_COOKIE(sites[i].fn, sites[i].stack_delta);
		used[n++] = sites[i];
	}
	if (n) {
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
		if (bpfobj__features(h->obj)->uprobe_session) {
			err = heap_bpf__attach_session(h->obj, fdpath, offsets, cookies, n);
			if (err >= 0) {
				o->link_fds[o->nlinks++] = err;
				err = 0;
			}
		} else {
			err = attach_uprobes(h, o, fdpath, offsets, cookies, used, n);
		}
		if (err) {
			log__warn("heap: attaching to %s failed: %s", m->path, strerror(-err));
			heap_probe__detach(o);
		} else {
			h->nprobed++;
			close(fd);
			return 1;
		}
	}
	close(fd);
	return 0;
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
 * Probe the allocators pid maps.  exec_ns: when it exec'd (0 if unknown),
 * or -1 when it is no news that pid ran first (at start-up).
 */
static void probe_process(struct heap *h, int pid, int64_t exec_ns)
{
	const struct proc_maps *pm = procs__maps(bpfobj__procs(h->obj), pid, PROCS_SEQ_LATEST);
	struct proc_maps *held = proc_maps__get(pm);

	/* Held: attaching can read other processes, which may evict pid's. */
	for (size_t i = 0; held && i < held->n; i++)
		if (probe_object(h, pid, &held->m[i]) && exec_ns >= 0)
			note_late(h, pid, held->m[i].path, exec_ns);
	proc_maps__put(held);
}

void heap_probe__on_rescan(evutil_socket_t fd, short what, void *arg)
{
	struct rescan *r = arg;
	struct heap *h = r->h;
	struct timeval tv;

	if (kill(r->pid, 0) && errno == ESRCH) {
		r->pid = 0;
		return;
	}
	procs__snapshot(bpfobj__procs(h->obj), r->pid, 0, NULL, PROCS_SEQ_LATEST);
	probe_process(h, r->pid, r->exec_ns);
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

void heap_probe__on_proc(void *ctx, const struct profd_proc_event *e)
{
	struct heap *h = ctx;
	int64_t exec_ns;

	/* Its sites can leave the site map (retire.c). */
	if (e->reason == PROFD_PROC_EXIT)
		h->retire.exits++;
	if (h->budget.detached)
		return;
	/* A fork child maps what its parent does; the rest may bring an allocator. */
	if (e->reason == PROFD_PROC_FORK || e->reason == PROFD_PROC_EXIT ||
	    !heap_probe__is_target(h, e->pid))
		return;
	exec_ns = e->reason == PROFD_PROC_EXEC ? (int64_t)e->ktime : 0;
	probe_process(h, e->pid, exec_ns);
	if (e->reason == PROFD_PROC_EXEC)
		schedule_rescan(h, e->pid, exec_ns);
}

/*
 * Probe the allocators of targets running now; later ones come by heap_probe__on_proc.
 * The daemon's own first: its libc is the one most programs map, so a
 * target that starts later is tracked from its first allocation, not from
 * when its exec event is handled (by then it may have allocated for a
 * while: ld.so maps libc within a millisecond or two).  The static build
 * (make dist) has its allocator inside itself, mapped by no other process:
 * there init's libc stands in for the one most programs map.
 */
void heap_probe__running(struct heap *h)
{
	struct dirent *d;
	DIR *dir;

#ifdef PROFD_STATIC
	probe_process(h, 1, -1);
#else
	probe_process(h, getpid(), -1);
#endif
	for (size_t i = 0; i < h->targets.npids; i++)
		probe_process(h, h->targets.pids[i], -1);
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
			probe_process(h, pid, -1);
	}
	closedir(dir);
}
