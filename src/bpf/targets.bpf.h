/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The target tables and the helpers every BPF program group uses to ask
 * "is this process one of consumer X's targets?".  targets.bpf.c owns the
 * maps and globals (it defines PROFD_TARGETS_OWNER); the other groups see
 * them as extern and bpftool's static linker joins them into one object.
 *
 * Nothing here needs kernel BTF: processes are told apart by
 * bpf_get_current_pid_tgid(), and whatever needed task_struct (which
 * executable a process runs) is resolved by the daemon from /proc and
 * written back into exe_targets.
 */
#ifndef PROFD_TARGETS_BPF_H
#define PROFD_TARGETS_BPF_H

#include <stdbool.h>

#include "bpf/abi/cpu.h"
#include "bpf/abi/targets.h"

#define PROFD_SNAP_FRAMES 128

#ifdef PROFD_TARGETS_OWNER
#define PROFD_SHARED
#else
#define PROFD_SHARED extern
#endif

/* Bumped by the daemon whenever executable filters change. */
PROFD_SHARED volatile __u32 filter_gen;
/* Session bits that fork may hand down; the daemon clears a bit here
 * before it clears it from pid_targets, so no child inherits it after. */
PROFD_SHARED volatile __u32 inherit_mask;
/* Non-zero while a consumer wants every process (whole-system sessions,
 * heap without targets) or has executable filters: forks, execs and exits
 * of every process are then reported, not only those of targets. */
PROFD_SHARED volatile __u32 report_all;
PROFD_SHARED volatile __u32 exe_filters;
/* Non-zero when the daemon need not hear of forks and exits at once (it
 * reads no title after a fork: titles come from exit_group): those events
 * then wait for its next timed read instead of waking it. */
PROFD_SHARED volatile __u32 lazy_events;
/*
 * Non-zero when nothing needs a process's mappings before its first sample
 * (no executable filters, no heap tracking).  Forks and execs are then not
 * reported at all, but for execs of PROFD_TITLE_COMM_* programs; the first
 * sample of such a process reports FIRST, waking the daemon, which reads
 * it then; and the exit of one never sampled is not reported either.  Most
 * processes a busy host forks are never sampled at 19 Hz: they cost the
 * daemon nothing.
 */
PROFD_SHARED volatile __u32 lazy_procs;
/*
 * Non-zero when sched_process_free is traced: a process's state then lives
 * until its leader is freed, not only until sched_process_exit, which
 * since 6.16 comes before the address space is torn down.  Samples of that
 * teardown (unmap_page_range: 8% of a pgbench -C profile) then find the
 * process known, rather than reporting it as new.
 */
PROFD_SHARED volatile __u32 state_at_free;
PROFD_SHARED volatile __u32 exit_early;
PROFD_SHARED const volatile struct profd_tp_offsets tp_off;

/* Read a field of a classic tracepoint record at an offset known at load. */
static __always_inline __u64 tp_field(void *ctx, __u32 off, __u32 size)
{
	__u64 v = 0;

	if (size == 8)
		bpf_probe_read_kernel(&v, 8, ctx + off);
	else
		bpf_probe_read_kernel(&v, 4, ctx + off);
	return v;
}

PROFD_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFD_MAX_PROCS);
	__type(key, __u32);	/* tgid */
	__type(value, __u32);	/* consumers targeting it by pid (inherited at fork) */
} pid_targets SEC(".maps");

PROFD_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFD_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct profd_exe_state);
} exe_targets SEC(".maps");

/*
 * A bit per process and map (enum profd_tgid_bit): the process may have an
 * entry in pid_targets, or in proc_copy.  Most processes have none, and an
 * array element, which the verifier inlines, costs a bit test where a hash
 * lookup costs ~50 ns on the development VM: the off-CPU program asks
 * pid_targets at every blocking switch of the machine, and the CPU sampler
 * asks proc_copy at every sample.
 *
 * A superset of the maps' keys: the daemon sets a bit (through its mapping
 * of the array, tracer/tgidbits.c) before it adds an entry, fork sets the
 * child's with the child's entry, and only the process's end clears it, so
 * a bit left behind (a finished session, an exec that dropped the copy)
 * costs a lookup and no more.  One word holds 64 processes' bits, written
 * by both sides: atomic operations on both.  tid_words words per kind,
 * from pid_max at load; a tgid past them (pid_max raised since) is looked
 * up, as is every one when the daemon could not map the array
 * (tgid_bits_on 0).
 */
PROFD_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PROFD_TGID_NR * PROFD_TID_WORDS);
	__type(key, __u32);	/* kind * tid_words + tgid / 64 */
	__type(value, __u64);
} tgid_bits SEC(".maps");

PROFD_SHARED const volatile __u32 tid_words;
PROFD_SHARED volatile __u32 tgid_bits_on;

static __always_inline __u64 *tgid_word(__u32 kind, __u32 tgid)
{
	__u32 word = tgid / 64, key = kind * tid_words + word;

	return word < tid_words ? bpf_map_lookup_elem(&tgid_bits, &key) : NULL;
}

/* May tgid have an entry in kind's map?  false is sure; true means look. */
static __always_inline bool tgid_maybe(__u32 kind, __u32 tgid)
{
	__u64 *w;

	if (!tgid_bits_on)
		return true;
	w = tgid_word(kind, tgid);
	return !w || (*w & (1ull << (tgid & 63)));
}

/* tgid's bit of kind, set (fork) or cleared (the process's end). */
static __always_inline void tgid_bit_set(__u32 kind, __u32 tgid, bool on)
{
	__u64 *w = tgid_word(kind, tgid), bit = 1ull << (tgid & 63);

	if (!w)
		return;
	if (on)
		__sync_fetch_and_or(w, bit);
	else if (*w & bit)
		__sync_fetch_and_and(w, ~bit);
}

PROFD_SHARED struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROFD_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct profd_proc_state);
} proc_state SEC(".maps");

PROFD_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct profd_text_range);
} proc_run SEC(".maps");

/* Where processes that keep a title in their argument area keep it
 * (postgres): set by the daemon, handed down at fork (see profd_title_event). */
PROFD_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFD_MAX_PROCS);
	__type(key, __u32);	/* tgid */
	__type(value, struct profd_title_area);
} title_area SEC(".maps");

/*
 * Bytes of user stack to copy with each sample of a process (absent: the
 * small copy).  The daemon sets it for processes whose stacks it could not
 * unwind from the small one; fork hands it down, exec forgets it.
 */
PROFD_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFD_MAX_PROCS);
	__type(key, __u32);
	__type(value, __u32);
} proc_copy SEC(".maps");

/*
 * A thread's user state as it called exit_group: registers, frame-pointer
 * walk and stack copy, in the shape of a sample.  Once exit_mm() has
 * dropped the address space, nothing of the user stack can be read, yet a
 * process tearing down a large one spends milliseconds in the kernel
 * (8% of a pgbench -C profile); since the thread never returns to user
 * mode, the state at exit_group is exactly where it is.
 *
 * What it costs was measured (bench/tracepoint_ab.sh, docs/benchmarks.md):
 * a hash map update took ~16 us of every exit on the development VM,
 * whatever the value's size, while an array slot written in place takes
 * ~3 us.  So the snapshots live in an array, slot tid % PROFD_SNAPS, each
 * saying whose it is (tid, 0 for nobody); its writer clears tid first and
 * sets it last, and a sample checks tid before and after it copies.  Two
 * threads tearing down at once in the same slot: the later one keeps it,
 * and the other's remaining samples go without their user part.  The
 * stack is PROFD_STACK_SMALL bytes, what a sample copies by default, and
 * comes before the frames, so a snapshot writes one contiguous run.  A
 * process whose samples need more of the stack (proc_copy: code without
 * frame pointers, postgres as Debian builds it) copies up to stack_max
 * bytes in place into an exit_stacks slot, the same way (PROFD_SNAP_BIG):
 * through a hash map, whose update allocates and copies the whole ~40 KiB
 * value, that copy cost ~12 us more.  Cleared when the task is freed
 * (sched_process_free).
 */
#define PROFD_SNAPS 256
#define PROFD_SNAP_STACKS 32
#define PROFD_SNAP_BIG 0x8000	/* the stack is in exit_stacks, not in stack[] */

struct profd_exit_snap {
	__u32 tid;		/* whose snapshot this is; 0: nobody's */
	__u32 flags;		/* PROFD_SF_* of the snapshot, PROFD_SNAP_BIG */
	__u16 nu;
	__u16 stack_len;
	__u32 pad;
	__u64 ip, sp, bp, bx;
	__u8 stack[2 * PROFD_STACK_SMALL];	/* copy_small's room */
	__u64 frames[PROFD_SNAP_FRAMES];
};

struct profd_exit_stack {
	__u32 tid;		/* as profd_exit_snap's */
	__u32 pad;
	__u8 stack[PROFD_STACK_MAX + 8192];	/* as sample_full's: room for copy_full */
};

PROFD_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROFD_SNAPS);
	__type(key, __u32);	/* tid % PROFD_SNAPS */
	__type(value, struct profd_exit_snap);
} exit_snaps SEC(".maps");

PROFD_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROFD_SNAP_STACKS);
	__type(key, __u32);	/* tid % PROFD_SNAP_STACKS */
	__type(value, struct profd_exit_stack);
} exit_stacks SEC(".maps");

/* tid's exit snapshot, or NULL. */
static __always_inline struct profd_exit_snap *exit_snap_of(__u32 tid)
{
	__u32 slot = tid % PROFD_SNAPS;
	struct profd_exit_snap *snap = bpf_map_lookup_elem(&exit_snaps, &slot);

	return snap && snap->tid == tid ? snap : NULL;
}

/* The slot for tid's large exit stack, whoever it holds now. */
static __always_inline struct profd_exit_stack *exit_stack_slot(__u32 tid)
{
	__u32 slot = tid % PROFD_SNAP_STACKS;

	return bpf_map_lookup_elem(&exit_stacks, &slot);
}

/*
 * Process events have their own small ring, which the daemon drains before
 * samples and which wakes it at once: a process that lives 20 ms must have
 * its mappings read while it is alive, not after a backlog of samples.
 */
PROFD_SHARED struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} proc_events SEC(".maps");

enum target_verdict {
	TARGET_NO = 0,
	TARGET_YES,
	TARGET_MAYBE,	/* executable not resolved yet: the daemon decides */
	TARGET_LOST,	/* no room to track the process */
};

static __always_inline void proc_event(__u32 reason, __u32 pid, __u32 ppid, __u32 exec_seq)
{
	struct profd_proc_event *e;

	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e)
		return;
	e->type = PROFD_EV_PROC;
	e->reason = reason;
	e->pid = pid;
	e->ppid = ppid;
	e->exec_seq = exec_seq;
	e->pad = 0;
	e->ktime = bpf_ktime_get_ns();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	/* A process that lives 20 ms must have its maps read while it lives:
	 * wake the daemon, but for forks (a child inherits its parent's maps)
	 * and exits (bookkeeping) when nothing else needs them at once. */
	bpf_ringbuf_submit(e, lazy_events && (reason == PROFD_PROC_FORK || reason == PROFD_PROC_EXIT) ?
				      BPF_RB_NO_WAKEUP : BPF_RB_FORCE_WAKEUP);
}

/* Is the current task running a program whose title means labels? */
static __always_inline bool title_comm(void)
{
	union comm {
		char c[PROFD_COMM_LEN];
		__u64 q[2];
	} cur = {}, a = {.c = PROFD_TITLE_COMM_A}, b = {.c = PROFD_TITLE_COMM_B};

	bpf_get_current_comm(cur.c, sizeof(cur.c));
	return (cur.q[0] == a.q[0] && cur.q[1] == a.q[1]) ||
	       (cur.q[0] == b.q[0] && cur.q[1] == b.q[1]);
}

/*
 * The daemon must know a process whose samples it gets (to read its maps
 * while it lives) and must resolve its executable when exe filters need
 * it.  Reports NEW once per process, and again once per filter generation
 * while its executable is unresolved.  Returns its state, or NULL if the
 * table had no room.
 */
static __always_inline struct profd_proc_state *proc_note(__u32 tgid, bool unresolved)
{
	struct profd_proc_state *st = bpf_map_lookup_elem(&proc_state, &tgid), fresh = {};
	__u32 gen = filter_gen;

	if (!st) {
		fresh.asked_gen = gen;
		fresh.flags = PROFD_PS_KNOWN;
		/* -EEXIST: another CPU was first, and it reports. */
		if (bpf_map_update_elem(&proc_state, &tgid, &fresh, BPF_NOEXIST) == 0)
			proc_event(PROFD_PROC_NEW, tgid, 0, 0);
		return bpf_map_lookup_elem(&proc_state, &tgid);
	}
	if (unresolved && st->asked_gen != gen && !(st->flags & PROFD_PS_EXITED)) {
		st->asked_gen = gen;
		proc_event(PROFD_PROC_NEW, tgid, 0, st->exec_seq);
	}
	return st;
}

/*
 * Is tgid a target of the consumer owning bit?  by_exe: the consumer has
 * executable filters, so an unresolved process is TARGET_MAYBE.
 */
static __always_inline enum target_verdict target_check(__u32 tgid, __u32 bit, bool by_exe)
{
	struct profd_exe_state *e;
	__u32 *pm;

	pm = tgid_maybe(PROFD_TGID_TARGET, tgid) ? bpf_map_lookup_elem(&pid_targets, &tgid) : NULL;
	if (pm && (*pm & bit))
		return TARGET_YES;
	if (!by_exe)
		return TARGET_NO;
	e = bpf_map_lookup_elem(&exe_targets, &tgid);
	if (e && e->gen == filter_gen)
		return (e->mask & bit) ? TARGET_YES : TARGET_NO;
	return TARGET_MAYBE;
}

#endif
