/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What every program that takes stacks shares: the sample ring and its
 * wakeup, the per-session counters, the user stack walk and copies, and
 * the first-sample checks of a process.  cpu.bpf.c owns the maps and
 * globals (it defines PROFD_SAMPLE_OWNER); offcpu.bpf.c sees them as
 * extern, and bpftool's static linker joins them, as targets.bpf.h's.
 * So a sample looks the same whichever program took it, and the daemon's
 * unwinder and symbolizer take it unchanged.
 */
#ifndef PROFD_SAMPLE_BPF_H
#define PROFD_SAMPLE_BPF_H

#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "bpf/abi/cpu.h"
#include "bpf/arch/arch.bpf.h"
#include "bpf/targets.bpf.h"

#ifdef PROFD_SAMPLE_OWNER
#define PROFD_SAMPLE_SHARED
#else
#define PROFD_SAMPLE_SHARED extern
#endif

/* Set by the daemon before load: ring size follows the CPU count. */
PROFD_SAMPLE_SHARED struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

PROFD_SAMPLE_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFD_MAX_SESSIONS * PROFD_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Wake the daemon when this much is waiting in the ring (a quarter of it),
 * rather than let full-stack samples fill it between two timed drains. */
PROFD_SAMPLE_SHARED const volatile __u32 wakeup_bytes;
/* Bytes of user stack to copy at most (PROFD_STACK_MAX or less). */
PROFD_SAMPLE_SHARED const volatile __u32 stack_max;
/*
 * For benchmarks only (PROFD_BENCH_CUT): stop each sample after one piece
 * of the program, so that what each piece costs is the difference between
 * two cuts (bench/kernel_pieces.sh for cpu.bpf.c, bench/offcpu_pieces.sh
 * for offcpu.bpf.c).  The verifier knows a const volatile's value
 * and drops the dead branches: at 0 the programs are the production ones.
 */
PROFD_SAMPLE_SHARED const volatile __u32 bench_cut;
enum bench_cut {
	CUT_NONE = 0,
	CUT_FILTER,	/* the session's config and the target filter (off-CPU: the keep decision) */
	CUT_STATE,	/* + the process's state (proc_state, first sample) */
	CUT_WALK,	/* + registers, kernel stack, the frame-pointer walk */
	CUT_COPY,	/* + the stack copy, into the per-CPU buffer: no ring output */
	CUT_NO_KSTACK,	/* off-CPU only: the whole program but the kernel stack */
};

/* Where task_struct keeps its kernel stack, 0 until found (find_task_stack,
 * current_uregs).  The exit_group tracepoint needs it: its own stack may
 * be the JIT's private one (6.13+) rather than the task's. */
PROFD_SAMPLE_SHARED volatile __u32 task_stack_off;
/* arm64: a user address's bits below a return address's PAC (bpf/arch/
 * arm64.bpf.h), symbolizer__user_addr_mask(); 0: 48 bits.  Unused on x86. */
PROFD_SAMPLE_SHARED const volatile __u64 user_addr_mask;

/*
 * A CPU sample's two layouts in its CPU's ring (abi/cpu.h), written in
 * place.  What one costs beyond the walk is mostly the ring's memory it
 * writes (~150 ns a KiB on the development VM, docs/benchmarks.md): a
 * small one is written at its real length; a full one skips the frames'
 * room it does not use and copies the stack once, no more than the
 * process's copy size.  The off-CPU program reserves sample_full in the
 * shared ring.
 */
struct sample_small {
	struct profd_sample s;
	/* frames, then the stack right after the last one used; room for a
	 * read to overshoot into */
	__u8 data[PROFD_FRAMES_MAX * 8 + 2 * PROFD_STACK_SMALL];
};

struct sample_full {
	struct profd_sample s;
	__u64 frames[PROFD_FRAMES_MAX];
	__u8 stack[PROFD_STACK_MAX + 8192];	/* whole pages after a partial one */
};

/* session: a slot; PROFD_MAX_SESSIONS (no session's: the off-CPU
 * program's and exit_group's samples) finds no counter. */
static __always_inline void stat_add(__u32 session, __u32 stat, __u64 n)
{
	__u32 key = session * PROFD_STAT_NR + stat;
	__u64 *v = bpf_map_lookup_elem(&stats, &key);

	if (v)
		*v += n;	/* per-CPU: no atomic needed */
}

#define stat_inc(session, stat) stat_add(session, stat, 1)

/*
 * Walk the user stack by frame pointers, storing return addresses from
 * frame first + 1.  Done here rather than with bpf_get_stack(): perf's
 * callchain machinery (per-CPU entry, context markers, zeroing the rest of
 * the buffer) cost about 0.6 us per sample on the development VM, more
 * than the walk itself.  Returns the number of user frames, ip included;
 * *top is the highest frame address reached, *clean whether the chain
 * ended the way a thread's outermost frame ends it (a saved frame pointer
 * or return address of 0) rather than in words that aren't a chain.
 */
static __always_inline __u32 walk_user(__u64 *frames, __u32 first, __u32 max, __u64 fp,
				       __u32 slot, __u64 *top, bool *clean)
{
	__u64 frame[2];
	__u32 i;

	*clean = false;
	*top = 0;
	for (i = 1; i < PROFD_MAX_STACK; i++) {
		__u32 at = first + i;

		/* frame[0]: the caller's frame pointer; frame[1]: return address. */
		if (!fp) {
			*clean = true;
			break;
		}
		if (at >= max)
			break;
		if (bpf_probe_read_user(frame, sizeof(frame), (void *)fp)) {
			stat_inc(slot, PROFD_STAT_ERR_USTACK);
			break;
		}
		*top = fp;
		if (!frame[1]) {
			*clean = true;
			break;
		}
		frames[at & (max - 1)] = arch__ret_addr(frame[1]);
		/* Stacks grow down: a caller's frame is higher, or the chain is broken. */
		if (frame[0] <= fp) {
			*clean = !frame[0];
			i++;
			break;
		}
		fp = frame[0];
	}
	return i;
}

/* Bound a length for the verifier on the very register passed: clang,
 * knowing a tighter bound on one path, would otherwise drop the check. */
#define BOUND(x, mask)					\
	({						\
		__u64 __v = (x);			\
		asm volatile("" : "+r"(__v));		\
		__v &= (mask);				\
		asm volatile("" : "+r"(__v));		\
		__v;					\
	})

/*
 * The user stack from sp, PROFD_STACK_SMALL bytes: what lies up to the end
 * of sp's page, and the rest from the next page, so that the top of the
 * stack (an unmapped page above) costs only what lies beyond it.
 */
static __always_inline __u32 copy_small(__u8 *dst, __u64 sp)
{
	__u64 n = 4096 - (sp & 4095), rest;

	if (n > PROFD_STACK_SMALL)
		n = PROFD_STACK_SMALL;
	n = BOUND(n, 2 * PROFD_STACK_SMALL - 1);
	if (n > PROFD_STACK_SMALL || bpf_probe_read_user(dst, n, (void *)sp))
		return 0;
	rest = BOUND(PROFD_STACK_SMALL - n, 2 * PROFD_STACK_SMALL - 1);
	if (!rest || rest > PROFD_STACK_SMALL ||
	    bpf_probe_read_user(dst + n, rest, (void *)(sp + n)))
		return n;
	return PROFD_STACK_SMALL;
}

/*
 * Up to want bytes from sp: what of them lies in sp's page, then the rest
 * a page at a time.  Never more than want: the copy is what costs (it
 * writes the ring's pages), and what lies past want is not sent.
 */
static __always_inline __u32 copy_full(__u8 *dst, __u64 sp, __u64 want)
{
	__u64 got = 4096 - (sp & 4095), n;

	if (got > want)
		got = want;
	got = BOUND(got, 8191);
	if (!got || got > 4096 || bpf_probe_read_user(dst, got, (void *)sp))
		return 0;
	for (int i = 0; i < PROFD_STACK_MAX / 4096; i++) {
		if (got >= want || got > PROFD_STACK_MAX)
			break;
		n = want - got;
		n = BOUND(n < 4096 ? n : 4096, 8191);
		if (!n || n > 4096 || bpf_probe_read_user(dst + got, n, (void *)(sp + got)))
			break;
		got += n;
	}
	return got < want ? got : want;
}

/*
 * want bytes from sp (1 to max, max a power of two of at most a page):
 * what lies up to the end of sp's page, and the rest from the next page,
 * as copy_small does for PROFD_STACK_SMALL.  dst has room for 3 * max:
 * the masks alone bound both reads (n below 2 * max, the rest below max
 * since n is one or more), for verifiers that lose the comparisons on a
 * spilled register (6.1's does).
 */
static __always_inline __u32 copy_upto(__u8 *dst, __u64 sp, __u64 want, __u64 max)
{
	__u64 n = 4096 - (sp & 4095), rest;

	if (n > want)
		n = want;
	n = BOUND(n, 2 * max - 1);
	if (!n || n > max || bpf_probe_read_user(dst, n, (void *)sp))
		return 0;
	rest = BOUND(want - n, max - 1);
	if (!rest || bpf_probe_read_user(dst + n, rest, (void *)(sp + n)))
		return n;
	return n + rest;
}

/*
 * After exec, ld.so maps the libraries before it jumps to the program: the
 * first sample in the executable's own text is when the mappings are worth
 * reading again.  The daemon wrote that text's range at EXEC.
 */
static __always_inline void check_run(struct profd_proc_state *st, __u32 tgid, __u64 ip)
{
	struct profd_text_range *r;

	if (!(st->flags & PROFD_PS_NEED_RUN))
		return;
	r = bpf_map_lookup_elem(&proc_run, &tgid);
	if (!r || ip < r->lo || ip >= r->hi)
		return;
	st->flags &= ~PROFD_PS_NEED_RUN;
	if (bpf_map_delete_elem(&proc_run, &tgid) == 0)
		proc_event(PROFD_PROC_RUN, tgid, 0, st->exec_seq);
}

/* The first sample of a process whose fork or exec was not reported (see
 * lazy_procs): now the daemon reads its mappings, or takes its parent's.
 * Two CPUs may both report it: the daemon reads twice, no harm. */
static __always_inline void check_first(struct profd_proc_state *st, __u32 tgid)
{
	if (!(st->flags & PROFD_PS_NEED_FIRST))
		return;
	st->flags = (st->flags & ~PROFD_PS_NEED_FIRST) | PROFD_PS_KNOWN;
	proc_event(PROFD_PROC_FIRST, tgid, st->ppid, st->exec_seq);
	/* First sampled as it tears down: its exit was not reported then. */
	if (st->flags & PROFD_PS_EXITED)
		proc_event(PROFD_PROC_EXIT, tgid, 0, st->exec_seq);
}

/*
 * Where task_struct keeps its kernel stack ("stack"), found without BTF
 * from a kernel stack's lowest address (base): among the task's first
 * words.  A kernel-mode CPU sample knows its stack's base.
 */
static __always_inline void find_task_stack(__u64 base)
{
	__u64 task = bpf_get_current_task(), v;

	if (task_stack_off || !task)
		return;
	for (__u32 i = 1; i < 64; i++) {
		if (bpf_probe_read_kernel(&v, sizeof(v), (void *)(task + i * 8)))
			return;
		if (v == base) {
			task_stack_off = i * 8;
			return;
		}
	}
}

/*
 * The registers the current task had in user mode, saved at the top of its
 * kernel stack as it entered the kernel (a system call, an interrupt): the
 * stack found through task_struct's pointer at task_stack_off.  search:
 * if that offset is not known yet, look for it, without a base to compare
 * with: among the task's first words, a THREAD_SIZE-aligned kernel address
 * whose top holds user registers is its stack (the off-CPU program, which
 * may run before any kernel-mode CPU sample did).
 */
static __always_inline bool current_uregs(struct profd_uregs *ur, bool search)
{
	__u64 task = bpf_get_current_task(), stack = 0, base = 0;
	__u32 off = task_stack_off;

	/* Defined even when none are found: callers leave *ur uninitialized,
	 * and for arm64 clang carried its fields through the search loop in
	 * registers never written on entry, which 6.1's verifier rejects
	 * ("R4 !read_ok" in profd_offcpu: serve failed to start in Debian 12's
	 * arm64 kernel; found by helper h15's arm64 guest with postgres). */
	__builtin_memset(ur, 0, sizeof(*ur));
	if (!task)
		return false;
	if (off) {
		if (bpf_probe_read_kernel(&stack, sizeof(stack), (void *)(task + off)) || !stack)
			return false;
		return arch__uregs_at_top(stack, ur, &base);
	}
	if (!search)
		return false;
	for (__u32 i = 1; i < 64; i++) {
		__u64 v;

		if (bpf_probe_read_kernel(&v, sizeof(v), (void *)(task + i * 8)))
			return false;
		if (v < 0xffff800000000000ull || (v & 16383))
			continue;
		if (arch__uregs_at_top(v, ur, &base) && base == v) {
			task_stack_off = i * 8;
			return true;
		}
	}
	return false;
}

/*
 * How much user stack to copy for tgid, past the small copy: what the
 * daemon asked for (proc_copy), at most stack_max, and only up to the
 * innermost frame pointer where what it needs lies above it (libc or the
 * vDSO called from frame-pointer code): then a sample of frame-pointer
 * code costs what it did without a copy (docs/architecture.md).
 */
static __always_inline __u32 copy_want(__u32 tgid, const struct profd_uregs *ur, bool have_ur)
{
	__u32 *copy, want;

	copy = tgid_maybe(PROFD_TGID_COPY, tgid) ? bpf_map_lookup_elem(&proc_copy, &tgid) : NULL;
	if (!copy)
		return 0;
	want = *copy & ~PROFD_COPY_TO_FP;
	want = want < stack_max ? want : stack_max;
	if ((*copy & PROFD_COPY_TO_FP) && have_ur && ur->fp > ur->sp && ur->fp - ur->sp + 16 < want)
		want = ur->fp - ur->sp + 16;
	return want;
}

/* A sample's header, of the current task: session is a slot, or the
 * off-CPU program's mask of them; pad is the off-CPU switch number. */
static __always_inline void init_sample(struct profd_sample *s, __u32 session, __u32 tgid,
					__u32 tid, __u16 flags, __u16 pad,
					const struct profd_proc_state *st)
{
	s->type = PROFD_EV_SAMPLE;
	s->session = session;
	s->pid = tgid;
	s->tid = tid;
	s->flags = flags;
	s->stack_len = 0;
	s->ip = s->sp = s->bp = s->bx = 0;
	s->exec_seq = st->exec_seq;
	s->stack_off = 0;
	s->pad = pad;
	bpf_get_current_comm(s->comm, sizeof(s->comm));
}

/*
 * The user part of a sample from the task's user registers: the
 * frame-pointer walk after the nk kernel frames, and the stack from sp,
 * into stack (full: up to want bytes) or after the frames (small:
 * PROFD_STACK_SMALL bytes).  copy false stops after the walk
 * (bench/kernel_pieces.sh's cut).  slot: whose counters, as stat_add's.
 * Returns the number of user frames.
 */
static __always_inline __u32 fill_user(struct profd_sample *s, __u64 *frames, __u32 nk,
				       __u8 *stack, bool full, __u32 slot,
				       struct profd_proc_state *st, __u32 want,
				       const struct profd_uregs *ur, bool copy)
{
	bool clean;
	__u64 top;
	__u32 nu;

	s->flags |= PROFD_SF_UREGS;
	s->ip = ur->ip;
	s->sp = ur->sp;
	s->bp = ur->fp;
	s->bx = ur->bx;
	frames[nk & (PROFD_FRAMES_MAX - 1)] = ur->ip;
	nu = walk_user(frames, nk, PROFD_FRAMES_MAX, ur->fp, slot, &top, &clean);
	check_run(st, s->pid, ur->ip);
	if (clean)
		s->flags |= PROFD_SF_FP_CLEAN;
	if (!copy)
		return nu;
	if (full) {
		s->stack_len = copy_full(stack, ur->sp, want);
		s->stack_off = stack - (__u8 *)s;
	} else {
		__u64 pos = ((nk + nu) * 8) & (PROFD_FRAMES_MAX * 8 - 1);

		s->stack_len = copy_small((__u8 *)frames + pos, ur->sp);
		s->stack_off = sizeof(*s) + pos;
	}
	if (slot < PROFD_MAX_SESSIONS)	/* a constant: no code for the off-CPU program */
		stat_add(slot, PROFD_STAT_STACK_BYTES, s->stack_len);
	return nu;
}

/*
 * Records on the shared ring are drained on a timer: a wakeup per record
 * costs more (an irq_work, then the daemon's epoll).  Kept off-CPU
 * switches can fill it sooner, so the record that takes what waits past
 * wakeup_bytes (a quarter) wakes the daemon: that one only.  Waking at
 * every record while more waited, as profd did, forced an irq_work at
 * each until the daemon had drained: ~2.2 us a record
 * (bench/ring_cost.sh).  Two CPUs can both miss the crossing (each asks
 * before the other's record is in), and a wakeup can find the ring's
 * first record still being written, so the daemon stops there; nothing
 * wakes it again but its timer (100-800 ms), and the ring may fill
 * meanwhile.  So past half, every record wakes it: a bound, not the rule,
 * reached only when the crossing's wakeup was missed or the daemon lags.
 * Asked before the record is reserved or output: size is its length,
 * without the ring's header and rounding, added here.
 */
static __always_inline __u64 wakeup_flags(__u64 size)
{
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);

	size = (size + BPF_RINGBUF_HDR_SZ + 7) & ~7ull;
	if (avail > 2ull * wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return avail <= wakeup_bytes && avail + size > wakeup_bytes ? BPF_RB_FORCE_WAKEUP :
								      BPF_RB_NO_WAKEUP;
}

#endif
