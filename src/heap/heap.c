// SPDX-License-Identifier: BSD-2-Clause
/*
 * Heap tracking: finding and probing the targets' allocators, and building
 * profiles from the BPF maps.  Just over 600 lines: the site arithmetic is
 * heapsites.c's, probe placement uprobe_place.c's; the rest reads and
 * writes the same maps and is kept together.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <event2/event.h>

#include "bpf/abi/heap.h"
#include "bpf/abi/targets.h"
#include "bpf/profd.skel.h"
#include "heap/heap.h"
#include "heap/heapsites.h"
#include "heap/uprobe_place.h"
#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/htab.h"
#include "lib/log.h"
#include "lib/mapped_file.h"
#include "lib/strbuf.h"
#include "pprof/pprof.h"
#include "proc/procs.h"
#include "profile/stackprof.h"
#include "tracer/bpfobj.h"
#include "tracer/kernel.h"

#define MAX_OBJECTS 256		/* distinct ELF objects looked at for allocators */
#define MAX_LINKS (2 * UPROBE_PLACE_MAX)
/*
 * After a target execs, ld.so maps its libraries (and any preloaded
 * allocator) before main() runs, and dlopen can bring more later: its maps
 * are read again on this schedule, so allocators are found without a CPU
 * session's help.
 */
static const int rescan_ms[] = {2, 10, 50, 250, 1000};
#define MAX_RESCANS 64
#define MAX_LATE 16		/* processes whose late start profiles name */
/*
 * The budget: a probe hit's cost is measured at start on the daemon's own
 * malloc+free pairs (its libc is probed like any other); when that cannot
 * be done, a trap on an emulated instruction is assumed (docs/architecture.md).
 */
#define COST_PAIRS 250		/* malloc+free pairs per measuring batch */
#define COST_BATCHES 20		/* the fastest batch counts: the others were preempted */
#define COST_DEFAULT_NS 1000.0

struct heap_object {
	uint64_t dev;
	uint64_t ino;
	int nlinks;
	int link_fds[MAX_LINKS];	/* session mode: one */
	struct bpf_link *links[MAX_LINKS];	/* uprobe mode */
};

struct rescan {
	int pid;
	int step;
	int64_t exec_ns;	/* CLOCK_MONOTONIC of its exec */
	struct event *ev;
	struct heap *h;
};

/*
 * A target that ran before its allocator was probed: it exec'd, and a
 * library that ld.so mapped afterwards (a preloaded jemalloc, a container's
 * libc) defines its allocator.  Its allocations before then are unknown.
 */
struct heap_late {
	int pid;
	char comm[PROFD_COMM_LEN + 1];
	char object[64];	/* basename of the object probed late */
	int64_t delay_ns;	/* after its exec; -1: unknown (first seen running) */
};

struct heap {
	struct event_base *base;
	struct bpfobj *obj;
	struct profd_bpf *skel;
	struct symbolizer *sym;
	struct targets targets;
	uint64_t sample_bytes;
	struct heap_object objs[MAX_OBJECTS];
	size_t nobjs;
	size_t nprobed;
	struct rescan rescans[MAX_RESCANS];
	struct heap_late late[MAX_LATE];	/* a ring: the newest MAX_LATE */
	uint64_t nlate;			/* processes tracked late, in all */
	struct {
		double ratio;		/* of one CPU; 0: no budget */
		double cost_ns;		/* of one probe hit */
		bool measured;		/* cost_ns was measured, not assumed */
		struct event *ev;	/* once a second */
		uint64_t calls[HEAP_BUDGET_WINDOW_S + 1];	/* probe hits, a second apart */
		int64_t at[HEAP_BUDGET_WINDOW_S + 1];		/* CLOCK_MONOTONIC of each */
		unsigned int n;		/* readings taken */
		double last;		/* cost over the last window, of one CPU */
		bool detached;		/* for good */
		int64_t detached_mono;
		char why[256];		/* what the log said, for profiles */
	} budget;
	int64_t start_ns;
	int64_t start_mono;
	bool armed;	/* the kernel side's heap globals are ours to reset */
};

/*
 * BPF_LINK_CREATE for a uprobe_multi session link, by hand: Debian 12's
 * libbpf (1.1) and uapi headers predate uprobe_multi.  The layout is the
 * kernel's UAPI union bpf_attr link_create.uprobe_multi (Linux 6.6+); the
 * attach type comes from the kernel's own BTF (kernel_features).
 */
struct link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 um_flags;
	__u32 pid;
};

static int attach_session(struct heap *h, const char *path, const uint64_t *offsets,
			  const uint64_t *cookies, size_t n)
{
	union {
		struct link_create_uprobe_multi lc;
		char pad[128];	/* the kernel wants trailing bytes zero */
	} attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.lc.prog_fd = bpf_program__fd(h->skel->progs.profd_heap_session);
	attr.lc.attach_type = bpfobj__features(h->obj)->uprobe_session_type;
	attr.lc.path = (uintptr_t)path;
	attr.lc.offsets = (uintptr_t)offsets;
	attr.lc.cookies = (uintptr_t)cookies;
	attr.lc.cnt = n;
	attr.lc.pid = 0;	/* every process mapping it; BPF filters targets */
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

/* Kernels without sessions: a uprobe per entry, a uretprobe per allocating function. */
static int attach_uprobes(struct heap *h, struct heap_object *o, const char *path,
			  const uint64_t *offsets, const uint64_t *cookies,
			  const struct uprobe_site *sites, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, entry, .bpf_cookie = cookies[i]);
		LIBBPF_OPTS(bpf_uprobe_opts, ret, .bpf_cookie = cookies[i], .retprobe = true);
		struct bpf_link *l;

		l = bpf_program__attach_uprobe_opts(h->skel->progs.profd_heap_entry, -1, path,
						    offsets[i], &entry);
		if (!l)
			return -errno;
		o->links[o->nlinks++] = l;
		if (sites[i].fn == PROFD_FN_FREE)
			continue;
		l = bpf_program__attach_uprobe_opts(h->skel->progs.profd_heap_return, -1, path,
						    offsets[i], &ret);
		if (!l)
			return -errno;
		o->links[o->nlinks++] = l;
	}
	return 0;
}

static void object_detach(struct heap_object *o)
{
	for (int i = 0; i < o->nlinks; i++) {
		if (o->links[i])
			bpf_link__destroy(o->links[i]);
		else if (o->link_fds[i] > 0)
			close(o->link_fds[i]);
	}
	o->nlinks = 0;
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
	if (h->nobjs == MAX_OBJECTS)
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
	o = &h->objs[h->nobjs++];
	memset(o, 0, sizeof(*o));
	o->dev = m->dev;
	o->ino = m->ino;
	found = uprobe_place__find(fd, sites, UPROBE_PLACE_MAX);
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
			err = attach_session(h, fdpath, offsets, cookies, n);
			if (err >= 0) {
				o->link_fds[o->nlinks++] = err;
				err = 0;
			}
		} else {
			err = attach_uprobes(h, o, fdpath, offsets, cookies, used, n);
		}
		if (err) {
			log__warn("heap: attaching to %s failed: %s", m->path, strerror(-err));
			object_detach(o);
		} else {
			h->nprobed++;
			close(fd);
			return 1;
		}
	}
	close(fd);
	return 0;
}

static bool is_target(struct heap *h, int pid)
{
	__u32 key = pid, mask = 0;

	if (targets__whole_system(&h->targets))
		return true;
	if (!bpf_map_lookup_elem(bpf_map__fd(h->skel->maps.pid_targets), &key, &mask) &&
	    (mask & PROFD_HEAP_BIT))
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

static void on_rescan(evutil_socket_t fd, short what, void *arg)
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

static void on_proc(void *ctx, const struct profd_proc_event *e)
{
	struct heap *h = ctx;
	int64_t exec_ns;

	if (h->budget.detached)
		return;
	/* A fork child maps what its parent does; the rest may bring an allocator. */
	if (e->reason == PROFD_PROC_FORK || e->reason == PROFD_PROC_EXIT ||
	    !is_target(h, e->pid))
		return;
	exec_ns = e->reason == PROFD_PROC_EXEC ? (int64_t)e->ktime : 0;
	probe_process(h, e->pid, exec_ns);
	if (e->reason == PROFD_PROC_EXEC)
		schedule_rescan(h, e->pid, exec_ns);
}

/*
 * Probe the allocators of targets running now; later ones come by on_proc.
 * The daemon's own first: its libc is the one most programs map, so a
 * target that starts later is tracked from its first allocation, not from
 * when its exec event is handled (by then it may have allocated for a
 * while: ld.so maps libc within a millisecond or two).
 */
static void probe_running(struct heap *h)
{
	struct dirent *d;
	DIR *dir;

	probe_process(h, getpid(), -1);
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
		if (is_target(h, pid))
			probe_process(h, pid, -1);
	}
	closedir(dir);
}

/* ---- the overhead budget ---- */

static uint64_t probe_hits(struct heap *h)
{
	uint64_t sum[PROFD_HSTAT_NR];

	bpfobj__percpu_sum(bpf_map__fd(h->skel->maps.heap_stats), 0, PROFD_HSTAT_NR, sum);
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
	uint64_t before = probe_hits(h);
	int64_t best = INT64_MAX;

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
	h->skel->bss->heap_sample_bytes = 0;
	for (size_t i = 0; i < h->nobjs; i++)
		object_detach(&h->objs[i]);
	h->nprobed = 0;
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

static int budget_start(struct heap *h, double percent)
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

int heap__start(struct event_base *base, struct bpfobj *o, struct symbolizer *sym,
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
	h->sym = sym;
	h->sample_bytes = opts->sample_bytes;
	if (opts->targets && targets__copy(&h->targets, opts->targets)) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (int i = 0; i < MAX_RESCANS; i++) {
		h->rescans[i].h = h;
		h->rescans[i].ev = evtimer_new(base, on_rescan, &h->rescans[i]);
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
	err = bpfobj__add_consumer(o, &(struct bpfobj_consumer){.on_proc = on_proc, .ctx = h});
	if (err)
		goto cleanup;
	h->start_ns = clock__real_ns();
	h->start_mono = clock__mono_ns();
	h->skel->bss->heap_sample_bytes = opts->sample_bytes;
	probe_running(h);
	if (opts->budget_percent > 0) {
		err = budget_start(h, opts->budget_percent);
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
			object_detach(&h->objs[i]);
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

/* ---- profiles ---- */

struct heap_iter {
	struct heap *h;
	struct heap_sites *sites;
	/* Sites without their stacks (no map lookups): all a snapshot of the
	 * processes needs, on the loop. */
	bool no_stacks;
};

static int heap_iter(void *src, raw_stack_fn fn, void *ctx)
{
	struct heap_iter *it = src;
	int stacks_fd = bpf_map__fd(it->h->skel->maps.heap_stacks);
	uint64_t rate = it->h->sample_bytes;

	for (size_t i = 0; i < it->sites->n; i++) {
		struct heap_site_agg *a = &it->sites->v[i];
		__u64 frames[PROFD_HEAP_STACK_DEPTH] = {};
		uint64_t uframes[PROFD_HEAP_STACK_DEPTH + 1];
		char comm[PROFD_COMM_LEN + 1] = {};
		struct raw_stack st = {.pid = a->site.tgid, .comm = comm, .exec_seq = PROCS_SEQ_LATEST};
		uint16_t nu = 0;
		int err;

		memcpy(comm, a->site.comm, PROFD_COMM_LEN);
		/* frames[0] is the probe inside the allocator, frames[1] the
		 * caller's caller: the callsite goes between them. */
		uframes[nu++] = a->site.callsite;
		if (!it->no_stacks && a->site.stack_id >= 0 &&
		    !bpf_map_lookup_elem(stacks_fd, &a->site.stack_id, frames))
			for (int k = 1; k < PROFD_HEAP_STACK_DEPTH && frames[k]; k++)
				uframes[nu++] = frames[k];
		st.uframes = uframes;
		st.nu = nu;
		st.leaf_function = heap_sites__fn_name(a->site.fn);
		heap_sites__unsample(a->alloc_count, a->alloc_bytes, rate, &st.values[0], &st.values[1]);
		heap_sites__unsample(a->live_count, a->live_bytes, rate, &st.values[2], &st.values[3]);
		err = fn(&st, ctx);
		if (err)
			return err;
	}
	return 0;
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

/* Per profile: is tgid alive, and a target?  (Kernel-side "maybe"s are decided here.) */
struct tgid_memo {
	uint32_t tgid;
	bool alive, target;
};

struct tgid_cache {
	struct tgid_memo *v;
	size_t n, cap;
	struct htab index;
};

static bool tgid_eq(const void *ctx, size_t pos, const void *key)
{
	return ((const struct tgid_cache *)ctx)->v[pos].tgid == *(const uint32_t *)key;
}

static const struct tgid_memo *tgid_info(struct heap *h, struct tgid_cache *c, uint32_t tgid)
{
	uint32_t hash = hash__final(hash__u64(HASH_SEED, tgid));
	struct htab_slot *slot;
	long pos;

	if (htab__reserve(&c->index) || array__grow(&c->v, &c->cap, c->n + 1, sizeof(*c->v)))
		return NULL;
	pos = htab__find(&c->index, hash, tgid_eq, c, &tgid, &slot);
	if (pos >= 0)
		return &c->v[pos];
	c->v[c->n].tgid = tgid;
	c->v[c->n].alive = !(kill(tgid, 0) && errno == ESRCH);
	c->v[c->n].target = is_target(h, tgid);
	htab__set(&c->index, slot, hash, c->n);
	return &c->v[c->n++];
}

struct collect {
	struct heap *h;
	struct heap_sites *sites;
	struct tgid_cache tc;
	struct profd_heap_ptr *dead;	/* live entries of processes gone */
	size_t ndead, dead_cap;
};

static int collect_alloc(const void *key, const void *value, void *ctx)
{
	const struct profd_heap_site *site = key;
	const struct profd_heap_count *c = value;
	struct collect *col = ctx;
	const struct tgid_memo *tm = tgid_info(col->h, &col->tc, site->tgid);
	struct heap_site_agg *a;

	if (!tm)
		return -ENOMEM;
	if (!tm->target)
		return 0;
	a = heap_sites__get(col->sites, site);
	if (!a)
		return -ENOMEM;
	a->alloc_count += c->count;
	a->alloc_bytes += c->bytes;
	return 0;
}

static int collect_live(const void *key, const void *value, void *ctx)
{
	const struct profd_heap_ptr *ptr = key;
	const struct profd_heap_live *live = value;
	struct collect *col = ctx;
	const struct tgid_memo *tm = tgid_info(col->h, &col->tc, ptr->tgid);
	struct heap_site_agg *a;

	if (!tm)
		return -ENOMEM;
	if (!tm->alive || !tm->target) {
		if (!array__grow(&col->dead, &col->dead_cap, col->ndead + 1, sizeof(*col->dead)))
			col->dead[col->ndead++] = *ptr;
		return 0;
	}
	a = heap_sites__get(col->sites, &live->site);
	if (!a)
		return -ENOMEM;
	a->live_count++;
	a->live_bytes += live->size;
	return 0;
}

/*
 * Sites from both maps, counted only for targets (the kernel side keeps
 * allocations of processes it could not yet decide about).  Live
 * allocations of exited processes are dropped from the map: their memory
 * is gone.
 */
static int collect(struct heap *h, struct heap_sites *t)
{
	int live_fd = bpf_map__fd(h->skel->maps.heap_live);
	struct collect col = {.h = h, .sites = t};
	int err;

	err = bpfobj__map_each(bpf_map__fd(h->skel->maps.heap_allocs),
			       sizeof(struct profd_heap_site), sizeof(struct profd_heap_count),
			       collect_alloc, &col);
	err = err ?: bpfobj__map_each(live_fd, sizeof(struct profd_heap_ptr),
				      sizeof(struct profd_heap_live), collect_live, &col);
	for (size_t i = 0; !err && i < col.ndead; i++)
		bpf_map_delete_elem(live_fd, &col.dead[i]);
	free(col.dead);
	free(col.tc.v);
	htab__free(&col.tc.index);
	return err;
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

/* A heap profile between its two halves: what heap__build_begin() took. */
struct heap_build {
	struct heap_sites sites;
	struct heap_iter it;
	struct stackprof_snap *snap;
	struct stackprof_meta meta;
	struct strbuf head, loss, since, kernel, late, stopped;
	const char *comments[7];
	char default_type[32];
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
	strbuf__free(&hb->late);
	strbuf__free(&hb->stopped);
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
	hb->it = (struct heap_iter){h, &hb->sites, false};
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
		     ", calls in flight full %" PRIu64,
		     st.live_full, st.allocs_full, st.stack_errors, st.pending_full);
	strbuf__addf(&hb->since,
		     "profd: allocations made before tracking began are unknown (tracking for %.0f s)",
		     hb->meta.duration_ns / 1e9);
	strbuf__adds(&hb->kernel, "profd: ");
	kernel__describe(bpfobj__features(h->obj), true, &hb->kernel);
	describe_late(h, &hb->late);
	hb->comments[nc++] = hb->head.buf;
	hb->comments[nc++] = hb->loss.buf;
	hb->comments[nc++] = hb->since.buf;
	hb->comments[nc++] = hb->kernel.buf;
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
	      strbuf__err(&hb->kernel) ?: strbuf__err(&hb->late) ?: strbuf__err(&hb->stopped);
	err = err ?: collect(h, &hb->sites);
	err = err ?: stackprof__snapshot(bpfobj__procs(h->obj), bpfobj__titles(h->obj), labels,
					 heap_iter, &(struct heap_iter){h, &hb->sites, true},
					 &hb->snap);
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

int heap__pprof(struct heap *h, const char *default_type, unsigned labels, struct pprof **out)
{
	struct heap_build *hb = NULL;
	int err;

	err = heap__build_begin(h, default_type, labels, &hb);
	err = err ?: heap_build__run(hb, h->sym, out);
	heap_build__free(hb);
	return err;
}
