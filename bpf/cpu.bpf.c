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

#include "bpf/cpu.h"
#include "bpf/targets.bpf.h"

#define USER_CS 0x33	/* __USER_CS: GDT entry 6, RPL 3 */
#define USER_DS 0x2b	/* __USER_DS: GDT entry 5, RPL 3 */
/* Room for both stacks, a power of two so that an index can be masked into it. */
#define FRAMES_MAX 256

/* Set by the daemon before load: ring size follows the CPU count. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROFD_MAX_SESSIONS);
	__type(key, __u32);
	__type(value, struct profd_session_cfg);
} sessions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFD_MAX_SESSIONS * PROFD_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* A sample is built here, then copied to the ring at its real length. */
struct sample_buf {
	struct profd_sample s;
	__u64 frames[FRAMES_MAX];
	__u8 stack[PROFD_STACK_COPY];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_buf);
} scratch SEC(".maps");

static __always_inline void stat_inc(__u32 session, __u32 stat)
{
	__u32 key = session * PROFD_STAT_NR + stat;
	__u64 *v = bpf_map_lookup_elem(&stats, &key);

	if (v)
		(*v)++;	/* per-CPU: no atomic needed */
}

/*
 * The registers the task had in user mode.  In user mode they are the
 * sample's own.  In kernel mode, entry code saved them as a pt_regs at the
 * top of the task's kernel stack, which is THREAD_SIZE (16 KiB, 32 KiB with
 * KASAN) aligned, 16 bytes lower with FRED's padding.  A sample taken on
 * an interrupt stack finds no user frame there: cs and ss must say user
 * mode, or the caller falls back to the kernel's own walk.
 */
static __always_inline bool user_regs(struct bpf_perf_event_data *ctx, struct pt_regs *out)
{
	__u64 ksp = ctx->regs.rsp;

	if ((ctx->regs.cs & 3) == 3) {
		out->rip = ctx->regs.rip;
		out->rsp = ctx->regs.rsp;
		out->rbp = ctx->regs.rbp;
		return true;
	}
#pragma unroll
	for (int i = 0; i < 4; i++) {
		__u64 size = i < 2 ? 16384 : 32768;
		__u64 pad = (i & 1) ? 16 : 0;
		__u64 top = (ksp & ~(size - 1)) + size - pad;

		if (bpf_probe_read_kernel(out, sizeof(*out), (void *)(top - sizeof(*out))))
			continue;
		if ((out->cs & 0xffff) == USER_CS && (out->ss & 0xffff) == USER_DS)
			return true;
	}
	return false;
}

/*
 * Walk the user stack by frame pointers, storing return addresses from
 * frames[first + 1].  Done here rather than with bpf_get_stack(): perf's
 * callchain machinery (per-CPU entry, context markers, zeroing the rest of
 * the buffer) cost about 0.6 us per sample on the development VM, more
 * than the walk itself.  Returns the number of user frames, ip included.
 */
static __always_inline __u32 walk_user(struct sample_buf *b, __u32 first, __u64 fp, __u32 slot)
{
	__u64 frame[2];
	__u32 i;

	for (i = 1; i < PROFD_MAX_STACK; i++) {
		__u32 at = first + i;

		/* frame[0]: the caller's frame pointer; frame[1]: return address. */
		if (!fp || at >= FRAMES_MAX)
			break;
		if (bpf_probe_read_user(frame, sizeof(frame), (void *)fp)) {
			stat_inc(slot, PROFD_STAT_ERR_USTACK);
			break;
		}
		if (!frame[1])
			break;
		b->frames[at] = frame[1];
		/* Stacks grow down: a caller's frame is higher, or the chain is broken. */
		if (frame[0] <= fp) {
			i++;
			break;
		}
		fp = frame[0];
	}
	return i;
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

SEC("perf_event")
int profd_sample(struct bpf_perf_event_data *ctx)
{
	__u32 slot = bpf_get_attach_cookie(ctx), zero = 0, nk = 0, nu = 0;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct profd_session_cfg *cfg;
	struct profd_proc_state *st;
	enum target_verdict v = TARGET_YES;
	struct sample_buf *b;
	struct pt_regs ur;
	bool have_regs;
	__u64 size;
	long n;

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
	st = proc_note(tgid, v == TARGET_MAYBE);
	if (!st) {
		stat_inc(slot, PROFD_STAT_LOST_PROCS);
		return 0;
	}
	b = bpf_map_lookup_elem(&scratch, &zero);
	if (!b)
		return 0;
	b->s.type = PROFD_EV_SAMPLE;
	b->s.session = slot;
	b->s.pid = tgid;
	b->s.tid = tid;
	b->s.flags = v == TARGET_MAYBE ? PROFD_SF_TENTATIVE : 0;
	b->s.stack_len = 0;
	b->s.exec_seq = st->exec_seq;
	bpf_get_current_comm(b->s.comm, sizeof(b->s.comm));

	if ((ctx->regs.cs & 3) != 3) {
		b->s.flags |= PROFD_SF_KERNEL;
		n = bpf_get_stack(ctx, b->frames, PROFD_MAX_STACK * sizeof(__u64), 0);
		if (n < 0) {
			stat_inc(slot, PROFD_STAT_ERR_KSTACK);
			n = 0;
		}
		nk = (__u32)n / sizeof(__u64);
		if (nk > PROFD_MAX_STACK)
			nk = PROFD_MAX_STACK;
	}
	have_regs = user_regs(ctx, &ur);
	if (have_regs) {
		b->s.flags |= PROFD_SF_UREGS;
		b->s.ip = ur.rip;
		b->s.sp = ur.rsp;
		b->s.bp = ur.rbp;
		b->frames[nk & (FRAMES_MAX - 1)] = ur.rip;
		nu = walk_user(b, nk, ur.rbp, slot);
		check_run(st, tgid, ur.rip);
		if (nk + nu < FRAMES_MAX &&
		    bpf_probe_read_user(&b->frames[nk + nu], PROFD_STACK_COPY, (void *)ur.rsp) == 0)
			b->s.stack_len = PROFD_STACK_COPY;
	} else if (b->s.flags & PROFD_SF_KERNEL) {
		/* A kernel thread, or a sample on an interrupt stack: the
		 * kernel's own walk knows where the user registers are. */
		b->s.ip = b->s.sp = b->s.bp = 0;
		n = bpf_get_stack(ctx, &b->frames[nk & (FRAMES_MAX - 1)],
				  PROFD_MAX_STACK * sizeof(__u64), BPF_F_USER_STACK);
		if (n > 0)
			nu = (__u32)n / sizeof(__u64);
		else
			stat_inc(slot, PROFD_STAT_NO_UREGS);
		if (nu > PROFD_MAX_STACK)
			nu = PROFD_MAX_STACK;
	}
	b->s.nk = nk;
	b->s.nu = nu;
	size = sizeof(b->s) + (nk + nu) * sizeof(__u64) + b->s.stack_len;
	if (size > sizeof(*b))
		size = sizeof(*b);
	if (bpf_ringbuf_output(&events, b, size, BPF_RB_NO_WAKEUP)) {
		stat_inc(slot, PROFD_STAT_LOST_RINGBUF);
		return 0;
	}
	stat_inc(slot, PROFD_STAT_SAMPLES);
	return 0;
}
