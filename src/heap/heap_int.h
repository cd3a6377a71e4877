/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * heap_int.h: what heap tracking's files share, and nobody else sees:
 * struct heap, and the calls between heap.c (start and stop, stats),
 * probes.c (finding the targets' allocators and attaching to them),
 * budget.c (the overhead budget) and heapprof.c (profiles from the maps).
 * All of it runs on the loop's thread, except heap_build__run().
 */
#ifndef PROFD_HEAP_INT_H
#define PROFD_HEAP_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "bpf/abi/targets.h"
#include "heap/heap.h"
#include "heap/sitekeep.h"
#include "heap/uprobe_place.h"
#include "lib/htab.h"
#include "tracer/targets.h"

struct bpf_link;
struct event;
struct profd_proc_event;

#define MAX_OBJECTS 256		/* ELF objects known to define an allocator */
/* Attachments (a process's probes on one object) at most, by default: each
 * is a link (sessions) or up to MAX_LINKS perf events, fds all. */
#define HEAP_DEFAULT_MAX_ATTACH 1024
/* Objects looked at and found to define no allocator, remembered so that
 * they are not scanned again: a ring, the oldest forgotten (scanned again
 * if met again).  Only allocators take one of the MAX_OBJECTS slots. */
#define MAX_SEEN 4096
#define MAX_LINKS (2 * UPROBE_PLACE_MAX + 1)	/* + the no-clone event (attach.c) */
#define MAX_RESCANS 64
#define MAX_LATE 16		/* processes whose late start profiles name */

/*
 * An ELF object that defines an allocator: where its probes go.  The file
 * stays open, so that every attachment resolves this very file (a path
 * swapped in meanwhile cannot move the probes).
 */
struct heap_object {
	uint64_t dev;
	uint64_t ino;
	int fd;
	bool self;			/* the daemon maps it (its libc) */
	bool preload;			/* libprofd_heap.so: its two sample functions */
	int n;				/* probe sites */
	uint64_t offsets[UPROBE_PLACE_MAX];
	uint64_t cookies[UPROBE_PLACE_MAX];
	bool ret[UPROBE_PLACE_MAX];	/* uprobe mode: a return probe too */
	char name[64];			/* its basename, for the log */
	/* Per-target probes: one tracefs probe per site (and return), made
	 * when the object is first attached, each with the BPF program
	 * attached through a holder event (attach.c). */
	int nev;
	int ev_ids[MAX_LINKS];
	struct bpf_link *holders[MAX_LINKS];
};

/*
 * A target's descendant that carries its probes by inheritance (the perf
 * events of its root, the target they were opened for): nothing of its
 * own to close, but closing the root's ends its probes too.
 */
struct heap_kin {
	int pid;
	int root;
};

/*
 * One process's probes on one object (attach.c): the kernel installs their
 * breakpoints in that process's memory only.  pid -1: every process's
 * (whole-system tracking).
 */
struct heap_attach {
	int pid;
	uint64_t start;			/* its start time: a reused pid is another process */
	uint32_t obj;			/* in heap.objs[] */
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
	struct targets targets;
	uint64_t sample_bytes;
	struct heap_object objs[MAX_OBJECTS];
	size_t nobjs;
	struct heap_seen {
		uint64_t dev, ino;
	} seen[MAX_SEEN];
	size_t seen_next;		/* the ring's next slot; seen[] is full past MAX_SEEN */
	struct htab seen_index;
	uint64_t refused;		/* allocators not probed: every slot taken */
	int64_t refused_logged_ns;
	struct heap_attach *att;	/* att[0..natt) */
	int closer_fd[2];		/* probes to remove, to the closer thread (attach.c) */
	pthread_t closer;
	size_t natt, att_cap, max_att;
	/* One probe per allocator for every process (whole-system tracking,
	 * heap_opts.all_processes, or a kernel where per-target probes could
	 * not be made): the BPF side filters. */
	bool probe_all;
	int holder_pid;			/* the task the holder events are on (attach.c) */
	struct heap_kin *kin;		/* kin[0..nkin) */
	size_t nkin, kin_cap;
	struct {
		uint64_t made;		/* attachments made */
		int64_t ns;		/* the time they took, in all */
		uint64_t refused;	/* over max_att */
		int64_t refused_logged_ns;
		uint64_t vanished;	/* the process was gone */
		uint64_t failed;	/* another error (logged) */
		uint64_t inherited;	/* children of targets probed from their fork on */
		uint64_t promoted;	/* of them, given probes of their own when their root went */
		uint64_t forks;		/* children of targets attached after their fork */
		int64_t fork_ns;	/* fork to attachment, in all */
		int64_t fork_max_ns;
	} as;
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
	struct sitekeep keep;	/* sites pinned to what they were first served as, retired sites */
	struct {
		struct event *ev;	/* once a second: is a pass due? */
		uint64_t sampled;	/* PROFD_HSTAT_SAMPLED at the last pass */
		uint64_t exits;		/* exit events since the last pass */
		/* The last pass followed exits: one more at the next tick.  An
		 * exit is reported before its parent reaps it, and a zombie
		 * passes for alive (kill(pid, 0)). */
		bool again;
		int64_t last_mono;
		int64_t live_mono;	/* the last pass that walked the live map */
		uint64_t passes;
		size_t sites;		/* entries the BPF site map held after the last pass */
	} retire;
	int64_t start_ns;
	int64_t start_mono;
	bool armed;	/* the kernel side's heap globals are ours to reset */
};

/* probes.c */
/* Probe the allocators of targets running now; later ones come by on_proc. */
void heap_probe__running(struct heap *h);
/* bpfobj's process events: a target's exec (or first sight) may bring an allocator. */
void heap_probe__on_proc(void *ctx, const struct profd_proc_event *e);
/* A rescan's timer (struct rescan). */
void heap_probe__on_rescan(evutil_socket_t fd, short what, void *arg);
/* Scan the daemon's own objects for allocators, probing none. */
void heap_probe__self(struct heap *h);
/* Is pid one of h's targets (by pid, by executable, or the whole system)? */
bool heap_probe__is_target(struct heap *h, int pid);

/* retire.c */
/* Per pass over the maps: each process's liveness, whether it is a target,
 * and (read once, when a site of it is first pinned) what it is now. */
struct heap_tgid {
	uint32_t tgid;
	bool alive, have_ident;
	bool stat_read;			/* alive confirmed by /proc/PID/stat (retire.c) */
	int8_t target;			/* heap_tgids__target's; -1: not asked yet */
	struct sitekeep_ident ident;	/* maps referenced until heap_tgids__free */
};

struct heap_tgids {
	struct heap_tgid *v;
	size_t n, cap;
	struct htab index;
};

/* Valid until the next heap_tgids__get; NULL without memory. */
struct heap_tgid *heap_tgids__get(struct heap *h, struct heap_tgids *c, uint32_t tgid);
/* Is t's process a target (asked once a pass: a map lookup, maybe /proc)? */
bool heap_tgids__target(struct heap *h, struct heap_tgid *t);
/* What t's process is now: its name, title labels and maps. */
const struct sitekeep_ident *heap_tgids__ident(struct heap *h, struct heap_tgid *t);
void heap_tgids__free(struct heap_tgids *c);
/*
 * Move the site map's entries of processes that have exited to h->keep
 * (targets' only; the rest are deleted), drop the live map's entries of
 * processes that have exited, and forget the pins of processes gone.  Run
 * before every profile and, from heap_retire__start's timer,
 * once a second when allocations were sampled or processes exited since.
 */
int heap_retire__run(struct heap *h, struct heap_tgids *c);
int heap_retire__start(struct heap *h);
/* attach.c */
/* The thread that removes probes off the loop: 0 or negative errno.
 * fini removes every probe and waits for the thread to be done. */
int heap_attach__init(struct heap *h);
void heap_attach__fini(struct heap *h);
/* Probes for pid on objs[obj]: 1 if made now, 0 if it had them, or
 * negative errno (-ENOSPC: over max_att, -ESRCH: pid is gone). */
int heap_attach__add(struct heap *h, int pid, size_t obj);
/* Make objs[obj]'s tracefs probes now, not at its first target (those
 * the targets' exec events may need at once): 0 or negative errno. */
int heap_attach__prepare(struct heap *h, size_t obj);
/* The same, for a process that has not mapped objs[obj] yet: opened in
 * microseconds, the breakpoints written when it maps it, none if it had. */
int heap_attach__add_unmapped(struct heap *h, int pid, size_t obj);
/* pid's probes on objs[obj] made again the usual way (after add_unmapped,
 * when it may have mapped the object first): 0 or negative errno. */
int heap_attach__redo(struct heap *h, int pid, size_t obj);
/* Remove pid's probes (all of them: pid 0). */
void heap_attach__drop(struct heap *h, int pid);
/* Does pid have probes on objs[obj]? */
bool heap_attach__has(const struct heap *h, int pid, size_t obj);
/* Make per-target probes possible (tracefs probes, the BPF program on
 * holder events): 0, or negative errno and probe_all is the way. */
int heap_attach__shared_init(struct heap *h);
/* pid was forked by ppid: 1 if it inherited ppid's probes (from its first
 * instruction), 0 if ppid had none to give. */
int heap_attach__forked(struct heap *h, int pid, int ppid);
/* pid exited or stopped being a target: its probes go (its inheriting
 * descendants get their own first). */
void heap_attach__gone(struct heap *h, int pid);
/* Does pid carry probes on objs[obj], its own or inherited? */
bool heap_attach__covers(const struct heap *h, int pid, size_t obj);
/* Distinct objects with probes somewhere, and processes with probes. */
size_t heap_attach__objects(const struct heap *h);
/* Copies of libprofd_heap.so whose two functions are probed. */
size_t heap_attach__preloads(const struct heap *h);
size_t heap_attach__processes(const struct heap *h);

/* budget.c: measure a probe hit's cost, then check it once a second. */
int heap_budget__start(struct heap *h, double percent);

#endif
