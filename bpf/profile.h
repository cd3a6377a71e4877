/* SPDX-License-Identifier: BSD-2-Clause */
/* Types shared by profile.bpf.c and the daemon.  Includes nothing itself. */
#ifndef PROFD_PROFILE_H
#define PROFD_PROFILE_H

#define PROFD_MAX_STACK 127		/* perf's default kernel.perf_event_max_stack */
#define PROFD_MAX_SESSIONS 16		/* session slots; the attach cookie is the slot */
#define PROFD_COMM_LEN 16
#define PROFD_EXE_NAME_LEN 32
#define PROFD_MAX_PROCS 32768
#define PROFD_SP_WORDS 8		/* user stack words kept for leaf-caller recovery */		/* processes whose target state is cached */

enum profd_event_type {
	PROFD_EV_SAMPLE = 1,
	PROFD_EV_PROC = 2,
};

/* Why the daemon should look at a process's mappings now. */
enum profd_proc_reason {
	PROFD_PROC_NEW = 1,	/* first sample of a process nobody told us about */
	PROFD_PROC_FORK = 2,	/* forked from a tracked process */
	PROFD_PROC_EXEC = 3,	/* exec'd: ld.so has not mapped libraries yet */
	PROFD_PROC_RUN = 4,	/* first sample after exec: libraries are mapped now */
};

/* Per-session counters, in a per-CPU array indexed session * PROFD_STAT_NR + stat. */
enum profd_stat {
	PROFD_STAT_SAMPLES = 0,	/* samples emitted for this session */
	PROFD_STAT_LOST_RINGBUF,	/* ring buffer full: sample dropped */
	PROFD_STAT_LOST_PROCS,	/* process table full: target state unknown, dropped */
	PROFD_STAT_ERR_USTACK,	/* user frame unreadable: sample kept, stack ends there */
	PROFD_STAT_ERR_KSTACK,	/* kernel stack walk failed: sample kept, user frames only */
	PROFD_STAT_NR,
};

#define PROFD_SESSION_ACTIVE 1
#define PROFD_SESSION_ALL 2	/* whole system: no target filter */

struct profd_session_cfg {
	__u32 flags;
};

/* Identity of an executable: the kernel's encoding of st_dev, and st_ino. */
struct profd_exe_key {
	__u64 dev;
	__u64 ino;
};

struct profd_exe_name {
	char name[PROFD_EXE_NAME_LEN];
};

/* What the kernel side knows about one process (tgid). */
struct profd_proc {
	__u32 pid_mask;		/* sessions targeting it by pid (inherited by fork) */
	__u32 exe_mask;		/* sessions targeting its executable */
	__u32 gen;		/* exe_mask is valid for this generation of filters */
	__u32 need_maps;	/* exec'd and not yet sampled */
};

struct profd_proc_event {
	__u32 type;		/* PROFD_EV_PROC */
	__u32 reason;		/* enum profd_proc_reason */
	__u32 pid;
	__u32 ppid;
	__u64 ktime;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
};

struct profd_sample {
	__u32 type;		/* PROFD_EV_SAMPLE */
	__u32 session;
	__u32 pid;
	__u32 tid;
	__s32 kstack_sz;	/* bytes in kstack, or 0 */
	__s32 ustack_sz;	/* bytes in ustack, or 0 */
	/*
	 * The words at the user stack pointer.  Frame-pointer walks lose the
	 * caller of a function that has not set up its frame (leaf functions,
	 * prologues); the daemon finds that return address here with the
	 * function's CFI.
	 */
	__u64 sp_words[PROFD_SP_WORDS];
	char comm[PROFD_COMM_LEN];	/* thread name */
	char pcomm[PROFD_COMM_LEN];	/* process (thread group leader) name */
	__u64 kstack[PROFD_MAX_STACK];
	__u64 ustack[PROFD_MAX_STACK];
};

/* ---- heap tracking (bpf/heap.bpf.h) ---- */

/* Heap tracking is daemon-wide, not a session: it owns this mask bit. */
#define PROFD_HEAP_BIT (1u << 31)
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
	PROFD_HSTAT_NR,
};

/* An allocation site: a process, its stack, and the exact call site. */
struct profd_heap_site {
	__u32 tgid;
	__s32 stack_id;		/* user stack from the allocator's caller's caller */
	__u64 callsite;		/* return address into the allocating function */
	__u32 fn;		/* enum profd_alloc_fn */
	__u32 pad;
	char comm[PROFD_COMM_LEN];	/* process name, for processes gone by profile time */
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
