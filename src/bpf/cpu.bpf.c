// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * profd's CPU sampler.  One perf_event program is attached to a cpu-clock
 * event per online CPU per session; the attach cookie is the session slot,
 * so sessions with different frequencies and targets share one program.
 *
 * Filtering happens before any stack is taken (targets.bpf.h).  Samples
 * stream to user space through a ring buffer rather than being aggregated
 * here: it keeps the per-sample cost at one stack walk plus a copy, never
 * fills a stack map, and lets sessions start and end without touching
 * shared kernel state (docs/architecture.md has the figures).
 *
 * Built for kernels without BTF and without a JIT: it reads only the UAPI
 * context (bpf_perf_event_data), calls helpers, and finds the user
 * registers of a sample taken in kernel mode where the kernel keeps them,
 * at the top of the task's kernel stack.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "bpf/abi/cpu.h"
#define PROFD_SAMPLE_OWNER
#include "bpf/sample.bpf.h"
#include "bpf/targets.bpf.h"

#include "bpf/arch/arch.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROFD_MAX_SESSIONS);
	__type(key, __u32);
	__type(value, struct profd_session_cfg);
} sessions SEC(".maps");

const volatile __u32 stack_max = PROFD_STACK_MAX;
const volatile __u32 wakeup_bytes = 1 << 20;
/* sample.bpf.h's: the pieces of bench/kernel_pieces.sh (PROFD_BENCH_CUT). */
const volatile __u32 bench_cut = 0;

/* CPU samples, a ring per CPU (abi/cpu.h); the daemon sets max_entries to
 * the possible CPUs and maps it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct profd_cpuring);
} cpu_rings SEC(".maps");

_Static_assert(sizeof(struct profd_cpuring_rec) + sizeof(struct sample_small) ==
		       PROFD_CPURING_REC_SMALL,
	       "a small record's room is a small sample");
_Static_assert(sizeof(struct profd_cpuring_rec) + __builtin_offsetof(struct sample_full, stack) ==
		       PROFD_CPURING_FULL_HDR,
	       "a full record's copy starts after room for every frame");
_Static_assert(sizeof(struct profd_cpuring_rec) + sizeof(struct sample_full) == PROFD_CPURING_REC_MAX,
	       "the daemon's bound on a record is a full sample's");
_Static_assert(sizeof(struct profd_cpuring) % 4096 == 0, "a CPU ring is whole pages");

/* sample.bpf.h's: found by the first kernel-mode sample (user_regs). */
volatile __u32 task_stack_off;

/* The registers the task had in user mode (bpf/arch/): the sample's own,
 * or, in kernel mode, those saved at the top of its kernel stack. */
static __always_inline bool user_regs(struct bpf_perf_event_data *ctx, struct profd_uregs *out)
{
	__u64 base;

	if (arch__user_mode(ctx)) {
		/* 32-bit: the kernel's walk instead (fill_sample). */
		if (arch__compat_user(ctx))
			return false;
		arch__sample_uregs(ctx, out);
		return true;
	}
	if (!arch__uregs_at_top(arch__ksp(ctx), out, &base))
		return false;
	find_task_stack(base);
	return true;
}

/* The user part from a thread's exit_group snapshot: its stack is in the
 * snapshot, or in exit_stacks when the process copies more (PROFD_SNAP_BIG).
 * The slot may be taken over while it is read (see exit_snaps): then the
 * sample goes without a user part. */
static __always_inline __u32 fill_from_snap(struct profd_sample *s, __u64 *frames, __u32 nk,
					    __u8 *stack, const struct profd_exit_snap *snap)
{
	__u64 nu = snap->nu, len = snap->stack_len;
	const struct profd_exit_stack *big = NULL;
	__u32 tid = s->tid, flags = snap->flags;

	s->ip = snap->ip;
	s->sp = snap->sp;
	s->bp = snap->bp;
	s->bx = snap->bx;
	nu = BOUND(nu, PROFD_SNAP_FRAMES - 1);
	nk = BOUND(nk, PROFD_SNAP_FRAMES - 1);
	if (!nu || bpf_probe_read_kernel(&frames[nk], nu * 8, snap->frames))
		return 0;
	if (flags & PROFD_SNAP_BIG) {
		big = exit_stack_slot(tid);
		len = big && big->tid == tid ? BOUND(len, PROFD_STACK_MAX * 2 - 1) : 0;
		if (len > PROFD_STACK_MAX || (big && bpf_probe_read_kernel(stack, len, big->stack)))
			len = 0;
		asm volatile("" ::: "memory");
		if (big && big->tid != tid)
			len = 0;
	} else {
		len = BOUND(len, 2 * PROFD_STACK_SMALL - 1);
		if (len > PROFD_STACK_SMALL || bpf_probe_read_kernel(stack, len, snap->stack))
			len = 0;
	}
	asm volatile("" ::: "memory");
	if (snap->tid != tid)
		return 0;
	s->flags |= (flags & (PROFD_SF_UREGS | PROFD_SF_FP_CLEAN)) | PROFD_SF_EXITING;
	s->stack_len = len;
	return nu;
}

/*
 * Fill a sample; full is a constant, so each layout gets its own code.
 * full: stack is where the copy goes, up to want bytes; small: it follows
 * the frames used, PROFD_STACK_SMALL bytes.
 */
static __always_inline void fill_sample(struct bpf_perf_event_data *ctx, struct profd_sample *s,
					__u64 *frames, __u8 *stack, bool full, __u32 slot,
					struct profd_proc_state *st, __u32 want,
					const struct profd_exit_snap *snap, const struct profd_uregs *ur,
					bool have_ur)
{
	__u32 nk = 0, nu = 0;
	long n;

	if (!arch__user_mode(ctx)) {
		s->flags |= PROFD_SF_KERNEL;
		n = bpf_get_stack(ctx, frames, PROFD_MAX_STACK * sizeof(__u64), 0);
		if (n < 0) {
			stat_inc(slot, PROFD_STAT_ERR_KSTACK);
			n = 0;
		}
		nk = (__u32)n / sizeof(__u64);
		if (nk > PROFD_MAX_STACK)
			nk = PROFD_MAX_STACK;
	}
	if (full && snap) {
		nu = fill_from_snap(s, frames, nk, stack, snap);
		s->stack_off = stack - (__u8 *)s;
		stat_inc(slot, PROFD_STAT_EXIT_SNAP);
	} else if (have_ur) {
		nu = fill_user(s, frames, nk, stack, full, slot, st, want, ur,
			       bench_cut != CUT_WALK);
		if (bench_cut == CUT_WALK)
			return;
	} else if ((s->flags & PROFD_SF_KERNEL) || arch__compat_user(ctx)) {
		/* A kernel thread, a sample on an interrupt stack, or a 32-bit
		 * process: the kernel's own walk knows where the user
		 * registers are, and the 32-bit frame layout. */
		if (!(s->flags & PROFD_SF_KERNEL))
			s->flags |= PROFD_SF_COMPAT;
		n = bpf_get_stack(ctx, &frames[nk & (PROFD_FRAMES_MAX - 1)],
				  PROFD_MAX_STACK * sizeof(__u64), BPF_F_USER_STACK);
		if (n > 0)
			nu = (__u32)n / sizeof(__u64);
		else
			stat_inc(slot, PROFD_STAT_NO_UREGS);
		if (nu > PROFD_MAX_STACK)
			nu = PROFD_MAX_STACK;
	}
	s->nk = nk;
	s->nu = nu;
}

/*
 * A process with a title area (postgres) calls exit_group, or is sampled
 * for the first time (live: PROFD_TE_LIVE): report its title while its
 * address space is there, from its own context (see profd_title_event).
 * Read up to its first NUL, so a short argument area at the stack's top is
 * not read past its end.
 */
static __always_inline bool report_title(__u32 tgid, __u32 live)
{
	struct profd_title_area *ta = bpf_map_lookup_elem(&title_area, &tgid);
	struct profd_proc_state *st;
	struct profd_title_event *e;

	if (!ta)
		return false;
	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e)
		return true;
	st = bpf_map_lookup_elem(&proc_state, &tgid);
	e->type = PROFD_EV_TITLE;
	e->pid = tgid;
	e->exec_seq = st ? st->exec_seq : 0;
	e->flags = ta->flags | live;
	e->ktime = bpf_ktime_get_ns();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	if (bpf_probe_read_user_str(e->title, sizeof(e->title), (void *)ta->addr) <= 0) {
		bpf_ringbuf_discard(e, 0);
		return true;
	}
	/* Not urgent: read with the exit, or the sample, that follows (the
	 * daemon drains this ring before the samples'). */
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return true;
}

/* A CPU's ring of samples is half full: wake the daemon, through the
 * shared ring's epoll (abi/targets.h's PROFD_EV_WAKE). */
static __always_inline void cpuring_wake(void)
{
	__u32 type = PROFD_EV_WAKE;

	bpf_ringbuf_output(&events, &type, sizeof(type), BPF_RB_FORCE_WAKEUP);
}

SEC("perf_event")
int profd_sample(struct bpf_perf_event_data *ctx)
{
	__u32 slot = bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct profd_session_cfg *cfg;
	struct profd_proc_state *st;
	enum target_verdict v = TARGET_YES;
	struct sample_small *small;
	struct sample_full *full;
	struct profd_exit_snap *snap;
	struct profd_cpuring_rec *rec;
	struct profd_cpuring *r;
	__u64 head, tail, waiting, room, size;
	__u32 want, cpu;
	struct profd_uregs ur;
	bool have_ur;

	if (tgid == 0 || slot >= PROFD_MAX_SESSIONS)	/* the idle task */
		return 0;
	cfg = bpf_map_lookup_elem(&sessions, &slot);
	if (!cfg || !(cfg->flags & PROFD_SESSION_ACTIVE))
		return 0;
	if (!(cfg->flags & PROFD_SESSION_ALL)) {
		v = target_check(tgid, 1u << slot, cfg->flags & PROFD_SESSION_EXE);
		if (v == TARGET_NO)
			return 0;
	}
	if (bench_cut == CUT_FILTER)
		return 0;
	st = proc_note(tgid, v == TARGET_MAYBE);
	if (!st) {
		stat_inc(slot, PROFD_STAT_LOST_PROCS);
		return 0;
	}
	check_first(st, tgid);
	/* A process's first sample brings its title (a postgres process's),
	 * read here in its own context, so that the daemon need not read
	 * /proc for its labels.  Not once it is past exit_group: its exit
	 * title has been reported then.  A fork or an exec starts a new
	 * state, without the flag. */
	if (!(st->flags & (PROFD_PS_TITLED | PROFD_PS_EXITED))) {
		st->flags |= PROFD_PS_TITLED;
		report_title(tgid, PROFD_TE_LIVE);
	}
	if (bench_cut == CUT_STATE)
		return 0;
	have_ur = user_regs(ctx, &ur);
	want = copy_want(tgid, &ur, have_ur);
	snap = exit_snap_of(tid);
	cpu = bpf_get_smp_processor_id();
	r = bpf_map_lookup_elem(&cpu_rings, &cpu);
	if (!r)
		return 0;
	head = r->head;
	/* The daemon's tail is trusted for nothing but this: the mask below
	 * alone keeps the writes inside the ring. */
	tail = *(volatile __u64 *)&r->tail;
	waiting = head - tail;
	/* The room this record may take: a small one at its largest, a full
	 * one as much as it may copy, in whole words as the head moves (a
	 * copy bound by the frame pointer can be any length): the daemon
	 * takes more than PROFD_CPURING_BYTES waiting for a bad ring. */
	if (snap)
		room = PROFD_CPURING_FULL_HDR + PROFD_STACK_MAX;
	else if (want > PROFD_STACK_SMALL)
		room = (PROFD_CPURING_FULL_HDR + (want < PROFD_STACK_MAX ? want : PROFD_STACK_MAX) +
			7) & ~7ull;
	else
		room = PROFD_CPURING_REC_SMALL;
	if (waiting > PROFD_CPURING_BYTES - room) {
		stat_inc(slot, PROFD_STAT_LOST_RINGBUF);
		return 0;
	}
	rec = (void *)&r->data[head & (PROFD_CPURING_BYTES - 1)];
	/* Written in place, in either layout: full is a constant in each
	 * fill_sample, so each gets its own code. */
	if (snap || want > PROFD_STACK_SMALL) {
		full = (void *)(rec + 1);
		init_sample(&full->s, slot, tgid, tid, v == TARGET_MAYBE ? PROFD_SF_TENTATIVE : 0, 0,
			    st);
		fill_sample(ctx, &full->s, full->frames, full->stack, true, slot, st, want, snap, &ur,
			    have_ur);
		/* The frames' room, unused, is skipped, not written. */
		size = __builtin_offsetof(struct sample_full, stack) + full->s.stack_len;
		if (size > sizeof(*full))
			size = sizeof(*full);
	} else {
		small = (void *)(rec + 1);
		init_sample(&small->s, slot, tgid, tid, v == TARGET_MAYBE ? PROFD_SF_TENTATIVE : 0, 0,
			    st);
		fill_sample(ctx, &small->s, (__u64 *)small->data, NULL, false, slot, st, 0, NULL, &ur,
			    have_ur);
		/* Only what is used: header, frames, the stack after them. */
		size = sizeof(small->s) + (small->s.nk + small->s.nu) * 8 + small->s.stack_len;
		if (size > sizeof(*small))
			size = sizeof(*small);
	}
	if (bench_cut == CUT_WALK || bench_cut == CUT_COPY)
		return 0;
	size = (sizeof(*rec) + size + 7) & ~7ull;
	rec->len = size;
	/* Publishes the record: a fetch-and-add whose value is used is a
	 * full barrier, on arm64 too, where a plain store, or an add whose
	 * value is dropped, would not order the writes before it. */
	waiting = __sync_fetch_and_add(&r->head, size) - tail;
	if (waiting < PROFD_CPURING_WAKE && waiting + size >= PROFD_CPURING_WAKE)
		cpuring_wake();
	stat_inc(slot, PROFD_STAT_SAMPLES);
	return 0;
}

/*
 * A thread of a process profd knows calls exit_group: report its title,
 * and keep its user state (see exit_snaps).  The registers are at the top
 * of its kernel stack.  In a whole-system session, only for a process
 * already sampled (KNOWN) or with a title area (postgres): a process never
 * sampled in its life is rarely sampled in its last milliseconds at 19 Hz,
 * and most processes a host forks are never sampled, so the snapshot every
 * exit paid for is kept for those whose teardown shows in profiles.
 */
static __always_inline int exit_snapshot(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, *copy;
	__u32 slot = tid % PROFD_SNAPS;
	struct profd_proc_state *st;
	struct profd_exit_stack *big;
	struct profd_exit_snap *snap;
	struct profd_uregs ur;
	__u64 top, want = PROFD_STACK_SMALL;
	bool clean, titled;

	titled = report_title(tgid, 0);
	st = bpf_map_lookup_elem(&proc_state, &tgid);
	if (!st && !report_all)
		return 0;
	if (report_all && !titled && !(st && (st->flags & PROFD_PS_KNOWN)))
		return 0;
	if (bench_cut == CUT_FILTER)
		return 0;
	if (!current_uregs(&ur, false))
		return 0;
	snap = bpf_map_lookup_elem(&exit_snaps, &slot);
	if (!snap)
		return 0;
	if (bench_cut == CUT_STATE)
		return 0;
	copy = tgid_maybe(PROFD_TGID_COPY, tgid) ? bpf_map_lookup_elem(&proc_copy, &tgid) : NULL;
	if (copy && (*copy & ~PROFD_COPY_TO_FP) > want)
		want = *copy & ~PROFD_COPY_TO_FP;
	if (want > stack_max)
		want = stack_max;
	/* Written in place: nobody's while it is written (see exit_snaps). */
	snap->tid = 0;
	asm volatile("" ::: "memory");
	snap->flags = PROFD_SF_UREGS;
	snap->ip = ur.ip;
	snap->sp = ur.sp;
	snap->bp = ur.fp;
	snap->bx = ur.bx;
	snap->frames[0] = ur.ip;
	snap->nu = walk_user(snap->frames, 0, PROFD_SNAP_FRAMES, ur.fp, PROFD_MAX_SESSIONS,
			     &top, &clean);
	if (clean)
		snap->flags |= PROFD_SF_FP_CLEAN;
	if (bench_cut == CUT_WALK)
		return 0;
	big = want > PROFD_STACK_SMALL ? exit_stack_slot(tid) : NULL;
	snap->stack_len = 0;
	if (big) {
		/* In place, as the snapshot; a slot another thread holds is
		 * taken over (see exit_snaps). */
		big->tid = 0;
		asm volatile("" ::: "memory");
		snap->stack_len = copy_full(big->stack, ur.sp, want);
		if (snap->stack_len > PROFD_STACK_SMALL) {
			snap->flags |= PROFD_SNAP_BIG;
			asm volatile("" ::: "memory");
			big->tid = tid;
		} else {
			snap->stack_len = 0;
		}
	}
	/* The large copy failed: the small one still unwinds a
	 * frame-pointer stack and a leaf. */
	if (!snap->stack_len)
		snap->stack_len = copy_small(snap->stack, ur.sp);
	if (bench_cut == CUT_COPY)
		return 0;
	asm volatile("" ::: "memory");
	snap->tid = tid;
	return 0;
}

/* Before 6.16 the only place left with the process's memory mapped: a
 * syscall tracepoint, which puts every thread of every process on the
 * traced syscall path while it is attached (+54-68 ns a syscall here,
 * docs/benchmarks.md), so it is attached only on request ("exit_hook":
 * "exit_group"). */
SEC("tracepoint/syscalls/sys_enter_exit_group")
int profd_exit_group(void *ctx)
{
	return exit_snapshot();
}

/*
 * Since 6.16 sched_process_exit comes before exit_mm() and says whether
 * the last thread is leaving (group_dead, from the same kernel change): the
 * snapshot and the title are taken there, at no cost to the syscalls of
 * processes that are not exiting.  Also for an exit by signal or by the
 * last thread's exit(2), which exit_group never saw.  targets.bpf.c's
 * profd_exit runs at the same tracepoint, in either order: with
 * exit_early, what this reads (title_area, proc_copy, proc_state) lives
 * until the leader is freed.
 */
SEC("tracepoint/sched/sched_process_exit")
int profd_exit_early(void *ctx)
{
	if (!tp_off.exit_group_dead || !(tp_field(ctx, tp_off.exit_group_dead, 4) & 0xff))
		return 0;
	return exit_snapshot();
}
