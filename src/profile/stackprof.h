/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stackprof: turns aggregated raw stacks into a symbolized pprof profile:
 * CPU (samples, cpu time) or heap (allocations and live memory).
 */
#ifndef PROFD_STACKPROF_H
#define PROFD_STACKPROF_H

#include <stddef.h>
#include <stdint.h>

struct pprof;
struct pprof_value_type;
struct procs;
struct symbolizer;
struct titles;

#define STACKPROF_MAX_VALUES 4

/* One distinct stack of one thread (or process), and its values. */
struct raw_stack {
	uint32_t pid;
	uint32_t tid;		/* 0: no tid/thread_name labels */
	uint32_t exec_seq;	/* which of its mappings apply (PROCS_SEQ_LATEST: the newest) */
	const char *comm;	/* thread name */
	const char *pcomm;	/* process name; NULL: as the process table knows it */
	const char *leaf_function;	/* a synthetic leaf frame (e.g. "malloc"), or NULL */
	const char *wait_event;	/* the label wait_event (off-CPU: PostgreSQL's), or NULL */
	const char *state;	/* the label state (wall-clock: cpu, runqueue, sleep), or NULL */
	const uint64_t *kframes;	/* innermost first */
	const uint64_t *uframes;	/* innermost first */
	uint16_t nk;
	uint16_t nu;
	int64_t values[STACKPROF_MAX_VALUES];	/* one per sample type */
};

typedef int (*raw_stack_fn)(const struct raw_stack *st, void *ctx);
/* Calls fn for every stack, stopping at the first non-zero return. */
typedef int (*raw_stack_iter)(void *src, raw_stack_fn fn, void *ctx);

struct stackprof_meta {
	const struct pprof_value_type *types;	/* sample types, at most STACKPROF_MAX_VALUES */
	size_t ntypes;
	const char *period_type;	/* e.g. "cpu" */
	const char *period_unit;	/* e.g. "nanoseconds" */
	int64_t period;
	const char *default_type;	/* or NULL */
	int64_t start_ns;
	int64_t duration_ns;
	const char *const *comments;	/* NULL-terminated, or NULL */
	unsigned labels;		/* the labels samples carry: LABEL_* (profile/labels.h) */
};

/* Symbolization outcome, for logs and tests. */
struct stackprof_result {
	uint64_t samples;
	uint64_t user_frames;
	uint64_t user_frames_symbolized;
	uint64_t truncated;	/* samples whose user stack was cut at a broken frame chain */
	uint64_t unmapped;	/* samples with user frames but no mappings: shown as [name] */
};

/*
 * A build runs in two halves, so that the slow one (symbolizing, which may
 * open and parse new objects) can leave the event loop:
 *
 * stackprof__snapshot(), on the loop's thread, takes from the process table
 * and the title cache what the stacks' processes need: names, title labels
 * (per `labels`), and a reference to the memory maps each had when sampled.
 * It is quick: one lookup per stack, no symbolizing.  titles: NULL for none.
 *
 * stackprof__build() then runs on any thread, reading only the snapshot,
 * the stacks (iter must give those of the same processes) and sym, which
 * must be the caller's alone meanwhile.  The snapshot reads a stack's pid
 * and exec_seq only: its iterator may leave the frames out.
 */
struct stackprof_snap;

int stackprof__snapshot(struct procs *procs, struct titles *titles, unsigned labels,
			raw_stack_iter iter, void *src, struct stackprof_snap **out);
/* Any thread; NULL is fine. */
void stackprof__snap_free(struct stackprof_snap *snap);

/*
 * A snapshot filled by the caller rather than from the process table: for
 * a source that keeps its own record of the processes (heap tracking pins
 * each site to what its process was when first served, heap/sitekeep.h).
 * snap_add records (pid, seq): name (NULL: none), title (NULL: no title
 * labels) and maps (NULL: unknown; referenced).  seq is the caller's to
 * choose: stacks are matched by (pid, exec_seq).  0 or -ENOMEM.
 */
struct proctitle;
struct proc_maps;
struct stackprof_snap *stackprof__snap_new(void);
int stackprof__snap_add(struct stackprof_snap *snap, uint32_t pid, uint32_t seq,
			const char *name, const struct proctitle *title,
			const struct proc_maps *maps);

int stackprof__build(struct symbolizer *sym, const struct stackprof_snap *snap,
		     const struct stackprof_meta *meta, raw_stack_iter iter, void *src,
		     struct pprof **out, struct stackprof_result *res);

#endif
