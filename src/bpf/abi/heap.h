/* SPDX-License-Identifier: BSD-2-Clause */
/* The contract between heap.bpf.c and heap/heap.c.  Includes nothing itself. */
#ifndef PROFD_BPF_HEAP_H
#define PROFD_BPF_HEAP_H

#define PROFD_HEAP_STACK_DEPTH 64
#define PROFD_EXP_TABLE 1024	/* entries of the exponential-draw table */

/* Which allocator entry point a probe sits on: the low byte of its cookie. */
enum profd_alloc_fn {
	PROFD_FN_MALLOC = 1,	/* (size) */
	PROFD_FN_CALLOC,	/* (n, size) */
	PROFD_FN_REALLOC,	/* (ptr, size) */
	PROFD_FN_REALLOCARRAY,	/* (ptr, n, size) */
	PROFD_FN_POSIX_MEMALIGN,	/* (void **memptr, align, size) -> int */
	PROFD_FN_ALIGNED_ALLOC,	/* (align, size) */
	PROFD_FN_MEMALIGN,	/* (align, size) */
	PROFD_FN_VALLOC,	/* (size) */
	PROFD_FN_PVALLOC,	/* (size) */
	PROFD_FN_FREE,		/* (ptr) */
	/* libprofd_heap.so's (preload/heap_preload.c): an allocation it sampled,
	 * (ptr, size, fn, callsite, mean), and the free of one, (ptr). */
	PROFD_FN_PRELOAD_SAMPLED,
	PROFD_FN_PRELOAD_FREED,
};

/*
 * Cookie of a heap probe: fn | stack_delta << 8.  stack_delta is how far
 * the probe's stack pointer is below the entry's (pushes the probe was
 * moved past), so the return address is at sp + stack_delta.
 */
#define PROFD_COOKIE(fn, delta) ((__u64)(fn) | ((__u64)(delta) << 8))

enum profd_heap_stat {
	PROFD_HSTAT_SAMPLED = 0,	/* allocations sampled */
	PROFD_HSTAT_LIVE_FULL,	/* sampled, but the live map was full */
	PROFD_HSTAT_ALLOCS_FULL,	/* sampled, but the allocation-site map was full */
	PROFD_HSTAT_STACK_ERR,	/* stack id failed (map full / collision) */
	PROFD_HSTAT_FREED,	/* sampled allocations freed */
	PROFD_HSTAT_PENDING_FULL,	/* sampled, but too many calls in flight */
	PROFD_HSTAT_CALLS,	/* probe hits, for the overhead budget */
	PROFD_HSTAT_PRELOAD_MEAN,	/* preload samples made at another mean: dropped */
	PROFD_HSTAT_NR,
};

/* An allocation site: a process, its stack, and the exact call site. */
struct profd_heap_site {
	__u32 tgid;
	__s32 stack_id;		/* user stack from the allocator's caller's caller */
	__u64 callsite;		/* return address into the allocating function */
	__u32 fn;		/* enum profd_alloc_fn */
	__u32 pad;
	char comm[16];		/* thread name, for processes gone by profile time */
};

struct profd_heap_ptr {
	__u32 tgid;
	__u32 pad;
	__u64 ptr;
};

struct profd_heap_live {
	__u64 size;
	struct profd_heap_site site;
};

struct profd_heap_count {
	__u64 count;		/* sampled allocations */
	__u64 bytes;		/* their requested bytes */
};

#endif
