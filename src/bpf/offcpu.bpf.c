// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Off-CPU time of target threads: one classic sched/sched_switch tracepoint
 * program (fields at offsets from tracefs, no BTF, no JIT needed), attached
 * while an off-CPU session runs.  The tracepoint fires in the thread going
 * off CPU (prev, the current task) and names the one coming on (next):
 *
 *  - switch-in of next: if it went off CPU blocked while watched, its time
 *    off CPU is now known; if that switch was kept, report the time
 *    (profd_offcpu_end);
 *  - switch-out of prev in a sleeping state (prev_state says S, D, T or t:
 *    not preempted, which is R or R+) and a target: note when, and keep
 *    the switch with probability p = min(1, mean / period), mean being the
 *    thread's recent off-CPU time: a kept switch takes its stacks, as the
 *    CPU sampler does (sample.bpf.h), onto the same ring.  A preempted
 *    switch-out counts the same way for wall-clock sessions only
 *    (offcpu_wall): waiting for a CPU is wall time, not a wait.
 *
 * p is decided before the switch's own time is known, so time / p is an
 * unbiased estimate of it whatever the thread does (abi/offcpu.h).  A
 * switch of a thread that is no target costs a bit test for next
 * (offcpu_waiting; and a lookup, once, where its tid's bit was left set
 * by a thread before it) and one for prev (tgid_bits; with executable
 * targets a lookup in exe_targets), or none when prev was preempted.  A
 * target's switch-out also looks up whether it is a postgres process
 * (title_area), whose wait event it reads (read_wait_event).
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "bpf/abi/cpu.h"
#include "bpf/abi/offcpu.h"
#include "bpf/sample.bpf.h"
#include "bpf/targets.bpf.h"

#include "bpf/arch/arch.bpf.h"

/* Set by the daemon (cpu/cpu_bpf.c): the off-CPU sessions' slot bits;
 * of them those of the whole system, and those with executable targets. */
volatile __u32 offcpu_mask;
volatile __u32 offcpu_all;
volatile __u32 offcpu_exe;
/* Of them the wall-clock sessions': their targets' time preempted
 * (runnable, waiting for a CPU) is time off CPU too. */
volatile __u32 offcpu_wall;
volatile __u64 offcpu_period_ns = PROFD_OFFCPU_PERIOD_NS;
/* Bumped by the daemon when the program is attached again: a thread that
 * went off CPU before is not timed from then. */
volatile __u32 offcpu_epoch;
/* sched_switch's fields, from tracefs (plain words: the skeleton's users
 * need no header for them). */
const volatile __u32 switch_prev_state, switch_prev_state_size, switch_next_pid;

/* Each thread's state, in one of the two slots of its tid's set
 * (abi/offcpu.h): array elements the verifier inlines, where an LRU hash
 * lookup, twice per target switch, hashed, walked a bucket and marked the
 * entry used. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROFD_OFFCPU_SLOTS_MAX);
	__type(key, __u32);	/* PROFD_OFFCPU_KEY(tid, offcpu_set_mask, way) */
	__type(value, struct profd_offcpu_thread);
} offcpu_threads SEC(".maps");
/* Its sets less one, set with its size at load (cpu/cpu_bpf.c). */
const volatile __u32 offcpu_set_mask = PROFD_OFFCPU_SLOTS_MAX / 2 - 1;

static __always_inline struct profd_offcpu_thread *thread_slot(__u32 tid, __u32 way)
{
	__u32 key = PROFD_OFFCPU_KEY(tid, offcpu_set_mask, way);

	return bpf_map_lookup_elem(&offcpu_threads, &key);
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFD_OSTAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} offcpu_stats SEC(".maps");

/*
 * One bit per tid: set when the thread goes off CPU timed (blocked, or
 * preempted in a wall-clock session) with an entry in offcpu_threads, and
 * left set while its switch-ins find a wait to end, so that a target
 * thread that blocks again and again writes it once, not twice a switch:
 * an atomic on a word its neighbours' tids share, which the CPUs pass
 * between them (~0.1-0.2 us a target switch here).  A switch-in that
 * finds no wait to end (the thread was preempted untimed, its entry was
 * evicted, or the tid is another thread's now) clears it, after one
 * lookup.  Every switch-in of the machine tests its bit, an array element
 * the verifier inlines, before it pays for a hash lookup: most threads
 * coming on CPU are no target's.  Sized from pid_max at load, as
 * tgid_bits; a tid past it is looked up.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROFD_TID_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} offcpu_waiting SEC(".maps");

/*
 * A switch-out's stack copy is mostly of libc's frames below the innermost
 * frame pointer (the wrapper of the system call it blocks in: copy_want's
 * PROFD_COPY_TO_FP, a few hundred bytes), so up to OFFCPU_STACK_MID bytes
 * a sample is built here and sent at its real length, packed in the ring,
 * rather than reserved there at the largest sample's size (~43 KiB, a
 * fresh ring page or two per kept switch written, and the ring full after
 * ~190 of them).  Its own buffer: the CPU sampler's may be in use on this
 * CPU.
 */
#define OFFCPU_STACK_MID 4096

struct offcpu_sample {
	struct profd_sample s;
	/* frames, then the stack right after the last one used; room for
	 * copy_upto's reads as their masks bound them */
	__u8 data[PROFD_FRAMES_MAX * 8 + 3 * OFFCPU_STACK_MID];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_sample);
} offcpu_scratch SEC(".maps");

static __always_inline void ostat_add(__u32 stat, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&offcpu_stats, &stat);

	if (v)
		*v += n;
}

/* tid's slot, if it has one. */
static __always_inline struct profd_offcpu_thread *thread_find(__u32 tid)
{
	struct profd_offcpu_thread *t = thread_slot(tid, 0);

	if (t && t->tid == tid)
		return t;
	t = thread_slot(tid, 1);
	return t && t->tid == tid ? t : NULL;
}

/* Nobody's this session (never used, or used before the program was last
 * attached): a slot to take first. */
static __always_inline bool slot_free(const struct profd_offcpu_thread *t)
{
	return !t->tid || t->epoch != offcpu_epoch;
}

/*
 * tid's slot, taken if it has none: one of its set that is nobody's; else
 * one whose thread is on CPU (which takes a slot again at its next
 * switch-out); else (a third thread of the set waiting, only above 131072
 * slots' worth of pid_max) the first, whose wait in progress is lost,
 * counted.  A slot taken, or one this tid held in another process (reused
 * since), starts afresh.  Taking a free slot first keeps each thread in
 * its own where two threads share a set: after its first switch-out no
 * thread takes a slot again, so two CPUs write one slot at once only if
 * two new threads of a set take the same one at the same moment (the
 * loser's one wait then goes unreported).
 */
static __always_inline struct profd_offcpu_thread *thread_take(__u32 tid, __u32 tgid)
{
	struct profd_offcpu_thread *t = thread_find(tid), *a, *b;

	if (t && t->pid == tgid)
		return t;
	if (!t) {
		a = thread_slot(tid, 0);
		b = thread_slot(tid, 1);
		if (!a || !b)
			return NULL;
		if (slot_free(a))
			t = a;
		else if (slot_free(b))
			t = b;
		else if (!a->off_ns)
			t = a;
		else if (!b->off_ns)
			t = b;
		else {
			t = a;
			ostat_add(PROFD_OSTAT_LOST_THREADS, 1);
		}
	}
	t->tid = tid;
	/* A new thread's first switch is kept, and its first long wait: its
	 * means start at the period.  (Its off_ns is written by the caller;
	 * the thread that held the slot no longer finds it.) */
	t->mean_ns = offcpu_period_ns;
	t->long_mean_us = offcpu_period_ns / 1000;
	return t;
}

/*
 * A field of the record.  The verifier lets a program read its context
 * only at offsets in the instruction itself, not at a read-only global's
 * (which it knows: it drops the cases that are not this one); so the
 * layouts seen (6.1 to 6.18: prev_state at 32, next_pid at 56) are read in
 * place, and any other through a helper, ~30 ns more at every switch of
 * the machine on the development VM.
 */
static __always_inline __u64 record_field(void *ctx, __u32 off, __u32 size)
{
	__u64 v = 0;

	if (off == 32 && size == 8)
		return *(__u64 *)(ctx + 32);
	if (off == 56 && size == 4)
		return *(__u32 *)(ctx + 56);
	if (size == 8)
		bpf_probe_read_kernel(&v, 8, ctx + off);
	else
		bpf_probe_read_kernel(&v, 4, ctx + off);
	return v;
}

/*
 * The stacks of the thread going off CPU, into a sample, as cpu.bpf.c's
 * fill_sample does for a sample taken in kernel mode.  full: stack is
 * where the copy goes, up to want bytes; else the copy follows the frames
 * used, want bytes (at most OFFCPU_STACK_MID; PROFD_STACK_SMALL if less).
 */
static __always_inline void fill_switch(void *ctx, struct profd_sample *s, __u64 *frames,
					__u8 *stack, bool full, struct profd_proc_state *st,
					__u32 want, const struct profd_uregs *ur, bool have_ur)
{
	__u32 nk = 0, nu = 0;
	__u64 pos;
	long n;

	s->flags |= PROFD_SF_KERNEL;
	n = bench_cut == CUT_NO_KSTACK ? 0 :
		bpf_get_stack(ctx, frames, PROFD_MAX_STACK * sizeof(__u64), 0);
	if (n > 0)
		nk = (__u32)n / sizeof(__u64);
	if (nk > PROFD_MAX_STACK)
		nk = PROFD_MAX_STACK;
	s->nk = nk;
	s->nu = 0;
	if (!have_ur) {
		ostat_add(PROFD_OSTAT_NO_UREGS, 1);
		return;
	}
	/* The walk; then the copy here, of the size this switch wants. */
	nu = fill_user(s, frames, nk, stack, full, PROFD_MAX_SESSIONS, st, want, ur,
		       full && bench_cut != CUT_WALK);
	s->nu = nu;
	if (full || bench_cut == CUT_WALK)
		return;
	if (want < PROFD_STACK_SMALL)
		want = PROFD_STACK_SMALL;
	pos = ((nk + nu) * 8) & (PROFD_FRAMES_MAX * 8 - 1);
	s->stack_len = copy_upto((__u8 *)frames + pos, ur->sp, want, OFFCPU_STACK_MID);
	s->stack_off = sizeof(*s) + pos;
}

/* The stacks of a kept switch onto the ring: 0, or -1 if it was full
 * (1: cut short by bench_cut, nothing sent). */
static __always_inline int emit_switch(void *ctx, __u32 sessions, __u32 tgid, __u32 tid, __u16 seq,
				       struct profd_proc_state *st)
{
	struct offcpu_sample *mid;
	struct sample_full *full;
	struct profd_uregs ur;
	__u16 flags = PROFD_SF_OFFCPU | ((sessions >> 16) ? PROFD_SF_TENTATIVE : 0);
	__u32 want, zero = 0;
	bool have_ur;
	__u64 size, wake;

	/* The task is in the kernel, being switched out: its user registers
	 * are at the top of its kernel stack. */
	have_ur = current_uregs(&ur, true);
	want = copy_want(tgid, &ur, have_ur);
	if (want > OFFCPU_STACK_MID) {
		/* Asked before the reservation: after it, other CPUs' records
		 * reserved meanwhile would hide the crossing. */
		wake = wakeup_flags(sizeof(*full));
		full = bpf_ringbuf_reserve(&events, sizeof(*full), 0);
		if (!full)
			return -1;
		init_sample(&full->s, sessions, tgid, tid, flags, seq, st);
		fill_switch(ctx, &full->s, full->frames, full->stack, true, st, want, &ur, have_ur);
		if (bench_cut == CUT_WALK || bench_cut == CUT_COPY) {
			bpf_ringbuf_discard(full, BPF_RB_NO_WAKEUP);
			return 1;
		}
		bpf_ringbuf_submit(full, wake);
		return 0;
	}
	mid = bpf_map_lookup_elem(&offcpu_scratch, &zero);
	if (!mid)
		return -1;
	init_sample(&mid->s, sessions, tgid, tid, flags, seq, st);
	fill_switch(ctx, &mid->s, (__u64 *)mid->data, NULL, false, st, want, &ur, have_ur);
	if (bench_cut == CUT_WALK || bench_cut == CUT_COPY)
		return 1;
	/* Only what is used: header, frames, the stack after them. */
	size = sizeof(mid->s) + (mid->s.nk + mid->s.nu) * 8 + mid->s.stack_len;
	if (size > sizeof(*mid))
		size = sizeof(*mid);
	return bpf_ringbuf_output(&events, mid, size, wakeup_flags(size)) ? -1 : 0;
}

/*
 * A postgres process (title_area says where its wait event is): the event
 * it waits in, read from its own memory as it goes off CPU (it is the
 * current task): *my_wait_event_info, a pointer, then the __u32 there.  A
 * hostile process can put anything at either: the reads fail or give a
 * number, which the daemon shows as a class and an id at worst.
 */
static __always_inline void read_wait_event(struct profd_offcpu_thread *t, __u32 tgid)
{
	struct profd_title_area *ta = bpf_map_lookup_elem(&title_area, &tgid);
	__u64 ptr = 0;
	__u32 ev = 0;

	t->flags = 0;
	if (!ta)
		return;
	t->flags = PROFD_OE_NO_WAIT;
	if (!ta->wait_addr || bpf_probe_read_user(&ptr, sizeof(ptr), (void *)ta->wait_addr) ||
	    !ptr || bpf_probe_read_user(&ev, sizeof(ev), (void *)ptr))
		return;
	t->flags = PROFD_OE_WAIT;
	t->wait_event = ev;
	t->pg_major = ta->pg_major;
}

/* PostgreSQL's Lock, BufferPin and Timeout classes (proc/pgwait.h). */
static __always_inline bool long_wait_class(__u32 ev)
{
	__u32 cls = ev >> 24;

	return cls == 0x03 || cls == 0x04 || cls == 0x09;
}

/* next comes back on CPU: its time off CPU is known. */
static __always_inline void switch_in(struct profd_offcpu_thread *t, __u32 tid)
{
	struct profd_offcpu_end e = {};
	__u64 now = bpf_ktime_get_ns(), d;

	d = now - t->off_ns;
	t->off_ns = 0;
	if (t->epoch != offcpu_epoch) {
		t->p = 0;
		return;
	}
	/* The long mean in microseconds, a wait counted up to ~9 min: it
	 * stays well inside its 32 bits. */
	if (t->in_long)
		t->long_mean_us = t->long_mean_us - (t->long_mean_us >> 3) +
				  (__u32)((d > (0xffffffffull << 7) ? 0xffffffffull << 7 : d) / 1000 >> 3);
	else
		t->mean_ns = t->mean_ns - (t->mean_ns >> 3) + (d >> 3);
	if (!t->p)
		return;
	e.type = PROFD_EV_OFFCPU;
	e.tid = tid;
	e.pid = t->pid;
	e.seq = t->seq;
	e.p = t->p;
	e.ns = d;
	e.off_ns = now - d;
	e.flags = t->flags;
	e.wait_event = t->wait_event;
	e.pg_major = t->pg_major;
	t->p = 0;
	if (bpf_ringbuf_output(&events, &e, sizeof(e), wakeup_flags(sizeof(e))))
		ostat_add(PROFD_OSTAT_LOST_RINGBUF, 1);
}

/*
 * Which off-CPU sessions target tgid: definite ones in the low 16 bits,
 * those whose executable filter is undecided (the daemon decides, as for
 * tentative CPU samples) in the high 16.
 */
static __always_inline __u32 sessions_of(__u32 tgid)
{
	__u32 mask = offcpu_mask, m = offcpu_all & mask, exe = offcpu_exe & mask, *pm;
	struct profd_exe_state *e;

	pm = tgid_maybe(PROFD_TGID_TARGET, tgid) ? bpf_map_lookup_elem(&pid_targets, &tgid) : NULL;
	if (pm)
		m |= *pm & mask;
	exe &= ~m;
	if (!exe)
		return m;
	e = bpf_map_lookup_elem(&exe_targets, &tgid);
	if (e && e->gen == filter_gen)
		return m | (e->mask & exe);
	return m | (exe << 16);
}

SEC("tracepoint/sched/sched_switch")
int profd_offcpu(void *ctx)
{
	struct profd_offcpu_thread *t;
	struct profd_proc_state *st;
	__u64 id, state, period, mean;
	__u32 next, tgid, tid, sessions, p, word;
	bool runnable;
	__u64 *w;
	int err;

	if (!offcpu_mask)
		return 0;
	next = (__u32)record_field(ctx, switch_next_pid, 4);
	word = next / 64;
	w = next ? bpf_map_lookup_elem(&offcpu_waiting, &word) : NULL;
	if (next && (!w || (*w & (1ull << (next & 63))))) {
		t = thread_find(next);
		if (t && t->off_ns)
			switch_in(t, next);
		else if (w)
			__sync_fetch_and_and(w, ~(1ull << (next & 63)));
	}

	/*
	 * Blocked (S, D, T, t): every off-CPU session's.  Preempted or
	 * yielding (R: 0; R+: TASK_REPORT_MAX, 0x100 since 4.14): still
	 * runnable, waiting for a CPU, which only a wall-clock session
	 * counts.  Exiting (X, Z), parked or idle (P, I): nobody's.
	 */
	state = record_field(ctx, switch_prev_state, switch_prev_state_size);
	runnable = !(state & 0xff);
	if (!(state & 0xf) && !(runnable && offcpu_wall))
		return 0;
	id = bpf_get_current_pid_tgid();
	tgid = id >> 32;
	tid = (__u32)id;
	if (!tgid)
		return 0;
	sessions = sessions_of(tgid);
	if (runnable)
		sessions &= offcpu_wall | offcpu_wall << 16;
	if (!sessions)
		return 0;

	t = thread_take(tid, tgid);
	if (!t)
		return 0;
	ostat_add(PROFD_OSTAT_SWITCHES, 1);
	t->pid = tgid;
	t->p = 0;
	t->epoch = offcpu_epoch;
	t->off_ns = bpf_ktime_get_ns();
	word = tid / 64;
	w = bpf_map_lookup_elem(&offcpu_waiting, &word);
	/* Only this thread, going off CPU here, changes its own bit now: a
	 * plain test is enough to skip the atomic. */
	if (w && !(*w & (1ull << (tid & 63))))
		__sync_fetch_and_or(w, 1ull << (tid & 63));
	/*
	 * A postgres process's wait event is known before its wait's length:
	 * a heavyweight lock, a buffer pin or a timeout (pg_sleep, vacuum
	 * delay) may last seconds where its client reads last microseconds,
	 * so such waits are kept by their own mean, not the thread's: a
	 * backend's first one is kept whole, and one after thousands of short
	 * reads is not diluted by them.  Not always kept: under pgbench's
	 * TPC-B-like load a third of the switches are row lock waits of a
	 * millisecond or two, and keeping all of them cost a sixth of the
	 * TPS (docs/benchmarks.md).  Still unbiased: p depends on nothing the
	 * wait's own length decides.
	 */
	read_wait_event(t, tgid);
	if (runnable)
		t->flags |= PROFD_OE_RUNQ;
	t->in_long = (t->flags & PROFD_OE_WAIT) && long_wait_class(t->wait_event);
	period = offcpu_period_ns;
	mean = t->in_long ? (__u64)t->long_mean_us * 1000 : t->mean_ns;
	if (!period || mean >= period)
		p = PROFD_OFFCPU_P_ONE;
	else
		p = (__u32)((mean << 16) / period);
	if (p < PROFD_OFFCPU_P_MIN)
		p = PROFD_OFFCPU_P_MIN;
	if (p < PROFD_OFFCPU_P_ONE && (bpf_get_prandom_u32() & 0xffff) >= p)
		return 0;
	if (bench_cut == CUT_FILTER)
		return 0;

	st = proc_note(tgid, sessions >> 16);
	if (!st)
		return 0;
	check_first(st, tgid);
	if (bench_cut == CUT_STATE)
		return 0;
	t->seq++;
	err = emit_switch(ctx, sessions, tgid, tid, t->seq, st);
	if (err > 0)
		return 0;
	if (err) {
		ostat_add(PROFD_OSTAT_LOST_RINGBUF, 1);
		return 0;
	}
	t->p = p;
	/* Taking the stacks took microseconds still on CPU: a kept switch's
	 * time starts after them, as an unkept one's starts after its lookups,
	 * or every kept switch would weigh its stack's cost over p. */
	t->off_ns = bpf_ktime_get_ns();
	ostat_add(PROFD_OSTAT_KEPT, 1);
	return 0;
}
