/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * heap_bpf: heap tracking's programs, maps and globals, by name: the only
 * file of heap/ that sees the skeleton (bpf/profd.skel.h).  The object
 * itself, and the target maps, are tracer/bpfobj's.  On the loop's thread.
 */
#ifndef PROFD_HEAP_BPF_H
#define PROFD_HEAP_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracer/bpfobj.h"

struct bpf_link;
struct kernel_features;
struct profd_bpf;
struct profd_heap_ptr;

/* heap_bpf__prepare's ctx. */
struct heap_bpf_prepare {
	bool heap;		/* heap tracking may start: its programs load */
	uint32_t max_sites;	/* the site map's entries; 0: heap.bpf.c's default */
	uint32_t max_live;	/* the live map's entries; 0: heap.bpf.c's default */
};

/*
 * bpfobj_opts.prepare: between open and load, which heap programs load
 * (uprobe sessions where the kernel has them, else uprobe pairs) and, with
 * none (ctx: a const struct heap_bpf_prepare, heap false), the heap maps
 * shrunk to nothing.
 */
void heap_bpf__prepare(struct profd_bpf *skel, const struct kernel_features *f, void *ctx);
/* Were the heap programs loaded (heap_bpf__prepare with true)? */
bool heap_bpf__loaded(struct bpfobj *o);
/* The kernel side's globals: which processes it tracks, and the mean bytes
 * between samples (0: none). */
void heap_bpf__set_scope(struct bpfobj *o, bool all, bool by_exe);
void heap_bpf__set_sample_bytes(struct bpfobj *o, uint64_t bytes);
/* The PROFD_HSTAT_NR counters, summed over CPUs. */
void heap_bpf__stats(struct bpfobj *o, uint64_t *sum);

/*
 * Probes for process pid only (pid <= 0: every process mapping the file):
 * the kernel installs their breakpoints in pid's memory alone, so other
 * processes run the allocator untouched.  pid is followed across its
 * execs, not into its forks: a child needs its own.
 */
/* A uprobe session link on n offsets of the file at path: its fd, or
 * negative errno (-ESRCH: pid is gone). */
int heap_bpf__attach_session(struct bpfobj *o, const char *path, const uint64_t *offsets,
			     const uint64_t *cookies, size_t n, int pid);
/* An entry probe (ret: the return probe) at offset, a perf-event uprobe:
 * NULL and errno on failure. */
struct bpf_link *heap_bpf__attach_uprobe(struct bpfobj *o, const char *path, uint64_t offset,
					 uint64_t cookie, bool ret, int pid);

/*
 * The entry (or, ret, return) program on perf event pfd, a tracefs probe's,
 * with cookie: it then runs on every hit of that probe.  The link owns pfd
 * (bpf_link__destroy closes it).  NULL with errno set on failure.
 */
struct bpf_link *heap_bpf__attach_event(struct bpfobj *o, int pfd, uint64_t cookie, bool ret);

/* The stack stack_id names, PROFD_HEAP_STACK_DEPTH frames: 0 or negative errno. */
int heap_bpf__stack(struct bpfobj *o, int32_t stack_id, uint64_t *frames);
/* Every site's counts (profd_heap_site -> profd_heap_count), every live
 * allocation (profd_heap_ptr -> profd_heap_live). */
int heap_bpf__each_alloc(struct bpfobj *o, bpfobj_entry_fn fn, void *ctx);
int heap_bpf__each_live(struct bpfobj *o, bpfobj_entry_fn fn, void *ctx);
void heap_bpf__forget_live(struct bpfobj *o, const struct profd_heap_ptr *p);
struct profd_heap_site;
void heap_bpf__forget_site(struct bpfobj *o, const struct profd_heap_site *s);

#endif
