/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * x86-64's registers, for the CPU sampler (cpu.bpf.c): whether a sample
 * interrupted user mode, the user registers a sample or a system call
 * left, and where the kernel saved them.  Everything the kernel side knows
 * of one architecture is here; arm64's would sit beside it, with the same
 * names in arm64.bpf.h; cpu.bpf.c and heap.bpf.c include the one
 * __TARGET_ARCH_xxx names (bpf/arch/arch.bpf.h).  The daemon's side is
 * symbolizer/cfi_x86_64.c.
 */
#ifndef PROFD_BPF_ARCH_X86_64_BPF_H
#define PROFD_BPF_ARCH_X86_64_BPF_H

#include <stdbool.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define USER_CS 0x33	/* __USER_CS: GDT entry 6, RPL 3 */
#define USER_DS 0x2b	/* __USER_DS: GDT entry 5, RPL 3 */
#define USER32_CS 0x23	/* __USER32_CS: GDT entry 4, RPL 3 (ia32 processes) */

/* The user registers a stack walk starts from: the instruction and stack
 * pointers, the frame pointer, and the one callee-saved register CFI most
 * often needs (rbx).  The sample record (abi/cpu.h) carries the same four. */
struct profd_uregs {
	__u64 ip, sp, fp, bx;
};

/* Did the sample interrupt user mode? */
static __always_inline bool arch__user_mode(const struct bpf_perf_event_data *ctx)
{
	return (ctx->regs.cs & 3) == 3;
}

/* Did it interrupt a 32-bit process in user mode? */
static __always_inline bool arch__compat_user(const struct bpf_perf_event_data *ctx)
{
	return (ctx->regs.cs & 0xffff) == USER32_CS;
}

/* A return address as the frame-pointer walk reads it: as it is. */
static __always_inline __u64 arch__ret_addr(__u64 ra)
{
	return ra;
}

/* The kernel stack pointer of a sample taken in kernel mode. */
static __always_inline __u64 arch__ksp(const struct bpf_perf_event_data *ctx)
{
	return ctx->regs.rsp;
}

/* The sample's own registers, taken in user mode. */
static __always_inline void arch__sample_uregs(const struct bpf_perf_event_data *ctx,
					       struct profd_uregs *out)
{
	out->ip = ctx->regs.rip;
	out->sp = ctx->regs.rsp;
	out->fp = ctx->regs.rbp;
	out->bx = ctx->regs.rbx;
}

/*
 * The registers the task had in user mode, from kernel mode: entry code
 * saved them as a pt_regs at the top of the task's kernel stack, which is
 * THREAD_SIZE (16 KiB, 32 KiB with KASAN) aligned, 16 bytes lower with
 * FRED's padding.  A sample taken on an interrupt stack finds no user
 * frame there: cs and ss must say user mode, or the caller falls back to
 * the kernel's own walk.  *base: the stack's lowest address.
 */
static __always_inline bool arch__uregs_at_top(__u64 ksp, struct profd_uregs *out, __u64 *base)
{
	struct pt_regs r;

#pragma unroll
	for (int i = 0; i < 4; i++) {
		__u64 size = i < 2 ? 16384 : 32768;
		__u64 pad = (i & 1) ? 16 : 0;
		__u64 top = (ksp & ~(size - 1)) + size - pad;

		if (bpf_probe_read_kernel(&r, sizeof(r), (void *)(top - sizeof(r))))
			continue;
		if ((r.cs & 0xffff) == USER_CS && (r.ss & 0xffff) == USER_DS) {
			out->ip = r.rip;
			out->sp = r.rsp;
			out->fp = r.rbp;
			out->bx = r.rbx;
			*base = top + pad - size;
			return true;
		}
	}
	return false;
}

/*
 * At an allocator probe (heap.bpf.c), delta bytes pushed after the call:
 * the return address is on the stack, and the call returns with the stack
 * pointer above it.  0, or -1 if the stack is unreadable.
 */
static __always_inline int arch__call_return(struct pt_regs *ctx, __u32 delta, __u64 *ret_ip,
					     __u64 *ret_sp)
{
	if (bpf_probe_read_user(ret_ip, sizeof(*ret_ip), (void *)(PT_REGS_SP(ctx) + delta)))
		return -1;
	*ret_sp = PT_REGS_SP(ctx) + delta + 8;
	return 0;
}

#endif
