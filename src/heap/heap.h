/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * heap: allocation profiling of the targets with uprobes on their
 * allocators (malloc & co. in libc, jemalloc, tcmalloc, mimalloc, or a
 * static allocator in the executable), sampled in the kernel by bytes.  A
 * consumer of bpfobj's process events, a peer of the CPU sampler.
 *
 * Profiles have Go's heap sample types: alloc_objects/count,
 * alloc_space/bytes (every sampled allocation since tracking began),
 * inuse_objects/count, inuse_space/bytes (sampled allocations not yet
 * freed), unsampled as Go does.  Allocations made before tracking began
 * are unknown.
 */
#ifndef PROFD_HEAP_H
#define PROFD_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracer/targets.h"

#define HEAP_DEFAULT_SAMPLE_BYTES (512u << 10)
/* --heap-budget and heap_budget: percent of one CPU, 0..HEAP_BUDGET_MAX (0: none). */
#define HEAP_BUDGET_MAX 10000.0
/* Seconds over which the probes' cost is held against the budget. */
#define HEAP_BUDGET_WINDOW_S 5

struct bpfobj;
struct event_base;
struct heap;
struct pprof;
struct symbolizer;

struct heap_opts {
	const struct targets *targets;	/* copied; NULL or empty: every process */
	uint64_t sample_bytes;		/* mean bytes between samples */
	/*
	 * Percent of one CPU the probes may cost (every process's probe hits
	 * times the measured cost of one), over HEAP_BUDGET_WINDOW_S; past it
	 * tracking stops: the probes are detached, for good.  0: no budget.
	 */
	double budget_percent;
	/* Attachments (one process's probes on one allocator object) at
	 * most; 0: the default, 1024.  A target past it is not tracked. */
	size_t max_attach;
	/*
	 * One probe on each allocator that every process mapping it traps on,
	 * the BPF side keeping the targets' calls, instead of probes in the
	 * targets' memory only (the default: other processes run their
	 * allocator untouched, and a target's children carry its probes from
	 * their first instruction; attach.c).  Whole-system tracking, and
	 * kernels without tracefs or kthreadd, probe every process anyway.
	 */
	bool all_processes;
};

struct heap_stats {
	uint64_t sampled;
	uint64_t freed;
	uint64_t live_full;
	uint64_t allocs_full;
	uint64_t stack_errors;
	uint64_t pending_full;
	uint64_t calls;			/* probe hits */
	uint64_t preload_mean;		/* libprofd_heap.so samples at another mean: dropped */
	size_t sites;			/* in the BPF site map, after the last pass */
	size_t sites_retired;		/* of exited processes, kept (heap/sitekeep.h) */
	uint64_t sites_retired_total;
	uint64_t sites_dropped;		/* retired sites dropped for room */
	size_t keep_bytes;		/* bytes sitekeep holds */
	size_t objects_probed;		/* ELF objects with allocator probes attached */
	size_t preloads_probed;		/* of them, libprofd_heap.so copies (the sampled mode) */
	size_t processes_probed;	/* processes with probes in their memory */
	bool per_process;		/* probes per target process (else every process's) */
	size_t attachments, attach_max;	/* a process's probes on one object: now, at most */
	uint64_t attach_made;		/* attachments made */
	int64_t attach_ns;		/* the time they took, in all */
	uint64_t attach_refused;	/* over attach_max: the target went untracked */
	uint64_t attach_vanished;	/* the process was gone */
	uint64_t attach_failed;		/* other errors (logged) */
	uint64_t fork_inherited;	/* targets' children that inherited their probes at fork */
	uint64_t inherit_promoted;	/* of them, given their own when their root went */
	uint64_t fork_attached;		/* targets' children probed after their fork */
	int64_t fork_attach_ns;		/* fork to probes, in all (allocations meanwhile are unseen) */
	int64_t fork_attach_max_ns;
	uint64_t objects_refused;	/* allocators not probed: every slot was taken */
	bool detached;			/* the budget stopped tracking */
	double cost_ns;			/* of one probe hit, as measured at start (budget only) */
	double cost_ratio;		/* of one CPU, over the last budget window (budget only) */
};

/* bpfobj must have been opened with bpfobj_opts.heap. */
int heap__start(struct event_base *base, struct bpfobj *o,
		const struct heap_opts *opts, struct heap **out, char *errbuf, size_t errlen);
void heap__free(struct heap *h);

/*
 * How allocators are probed, for logs and profiles: in the targets' memory
 * only, or (every_process) in every process's, with uprobe sessions where
 * the kernel has them.
 */
struct kernel_features;
const char *heap__probes_text(const struct kernel_features *f, bool every_process);

/*
 * A heap profile, in two halves (see stackprof.h): heap__build_begin() on
 * the loop's thread reads the maps and takes a snapshot; heap_build__run()
 * on any thread, with a symbolizer nobody else uses meanwhile, builds.  The
 * heap must outlive the build.  default_type: "inuse_space" (a heap
 * profile) or "alloc_space" (allocs); labels: LABEL_* (profile/labels.h)
 * the samples carry.
 */
struct heap_build;
int heap__build_begin(struct heap *h, const char *default_type, unsigned labels,
		      struct heap_build **out);
int heap_build__run(struct heap_build *hb, struct symbolizer *sym, struct pprof **out);
void heap_build__free(struct heap_build *hb);
/* The same as a profile source (profile/source.h), whose snapshot is
 * heap__build_begin() and build heap_build__run().  0 or -ENOMEM. */
struct profile_source;
int heap__source(struct heap *h, const char *default_type, unsigned labels,
		 struct profile_source **out);
/*
 * Options of a heap source, before its snapshot.  sampled: values as
 * sampled, not scaled to estimates (Go's legacy text form, whose readers
 * scale them).  mark: take the base now; the profile is then what changed
 * from it to its snapshot (Go's ?seconds=N delta: allocations made and
 * in-use changes meanwhile), sites unchanged left out.  0 or -ENOMEM.
 */
void heap__source_sampled(struct profile_source *src);
int heap__source_mark(struct profile_source *src);
void heap__stats(struct heap *h, struct heap_stats *st);

#endif
