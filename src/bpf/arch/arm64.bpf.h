/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arm64's registers, for the CPU sampler (cpu.bpf.c) and the allocator
 * probes (heap.bpf.c): the same names as x86_64.bpf.h.  A perf sample's
 * context is the UAPI struct user_pt_regs (regs[31], sp, pc, pstate),
 * stable ABI, so nothing here needs BTF.
 *
 * The frame record is {x29, x30} at x29, as x86-64's {rbp, return address}
 * at rbp: the frame-pointer walk is the same.  The return addresses in it
 * (and in x30 between paciasp and autiasp) may carry a pointer
 * authentication code above the address bits: stripped here, before they
 * leave the kernel.  The sample record's bx carries x30, the link
 * register: a leaf function (or any function before it saved x30) has its
 * caller only there, which the daemon's CFI (symbolizer/cfi_arm64.c) reads.
 */
#ifndef PROFD_BPF_ARCH_ARM64_BPF_H
#define PROFD_BPF_ARCH_ARM64_BPF_H

#include <stdbool.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define PSR_MODE_MASK 0x0000000f	/* EL and SP selection: 0 is EL0t, user mode */
#define PSR_MODE32_BIT 0x00000010	/* an AArch32 (compat) task */
/*
 * The address bits of a user pointer: Linux's user address space is 48
 * bits (VA_BITS 48, and a 52-bit one only gives addresses above 2^48 to a
 * process that asks); the PAC sits above them, the top byte is TBI's tag.
 */
#define ARM64_ADDR_MASK 0x0000ffffffffffffULL
/* The bits a return address keeps once its PAC is stripped: the user
 * address space's, 2^VA_BITS (39 on the compute VMs' kernels: the PAC
 * starts at bit 39 there).  Set by the daemon (sample.bpf.h); 0: 48 bits. */
extern const volatile __u64 user_addr_mask;

struct profd_uregs {
	__u64 ip, sp, fp, bx;	/* pc, sp, x29, x30 (lr) */
};

/* A return address from a frame record or x30: its PAC stripped. */
static __always_inline __u64 arch__ret_addr(__u64 ra)
{
	__u64 m = user_addr_mask;

	return ra & (m ? m : ARM64_ADDR_MASK);
}

static __always_inline bool arch__user_mode(const struct bpf_perf_event_data *ctx)
{
	return (ctx->regs.pstate & PSR_MODE_MASK) == 0;
}

static __always_inline bool arch__compat_user(const struct bpf_perf_event_data *ctx)
{
	return arch__user_mode(ctx) && (ctx->regs.pstate & PSR_MODE32_BIT);
}

static __always_inline __u64 arch__ksp(const struct bpf_perf_event_data *ctx)
{
	return ctx->regs.sp;
}

static __always_inline void arch__sample_uregs(const struct bpf_perf_event_data *ctx,
					       struct profd_uregs *out)
{
	out->ip = ctx->regs.pc;
	out->sp = ctx->regs.sp;
	out->fp = ctx->regs.regs[29];
	out->bx = ctx->regs.regs[30];
}

/*
 * The user registers from kernel mode: el0 entry saved a struct pt_regs
 * at the top of the task's kernel stack (task_pt_regs), whose first part
 * is a user_pt_regs.  The stack is THREAD_SIZE aligned: 16 KiB, 32 KiB
 * with KASAN, 64 KiB with 64 KiB pages.  struct pt_regs is 336 bytes in
 * 6.1 to 6.16 (stackframe and pmr's changes kept its size), 320 since
 * lockdep_hardirqs and exit_rcu left it, 352 with CONFIG_ARM64_POE: each
 * candidate must read as user mode, AArch64, with a pc and sp in the user
 * address range (a kernel thread's is zeroed: pc 0 is refused).
 */
static __always_inline bool arch__uregs_at_top(__u64 ksp, struct profd_uregs *out, __u64 *base)
{
	static const __u32 sizes[3] = {336, 320, 352};
	struct user_pt_regs r;

#pragma unroll
	for (int i = 0; i < 9; i++) {
		__u64 size = 16384ULL << (i / 3);
		__u64 top = (ksp & ~(size - 1)) + size;

		if (bpf_probe_read_kernel(&r, sizeof(r), (void *)(top - sizes[i % 3])))
			continue;
		if ((r.pstate & (PSR_MODE_MASK | PSR_MODE32_BIT)) || (r.pstate >> 32) || !r.pc ||
		    (r.pc & 3) || r.pc > ARM64_ADDR_MASK || !r.sp || r.sp > ARM64_ADDR_MASK)
			continue;
		out->ip = r.pc;
		out->sp = r.sp;
		out->fp = r.regs[29];
		out->bx = r.regs[30];
		*base = top - size;
		return true;
	}
	return false;
}

/*
 * At an allocator probe (heap.bpf.c): a bl left the return address in x30
 * and the stack pointer as it was, so the call returns with this sp.  The
 * probe sits on the entry or just past a BTI landing pad, never past
 * paciasp (heap/place_arm64.c): x30 is not signed yet, but strip anyway.
 */
static __always_inline int arch__call_return(struct pt_regs *ctx, __u32 delta, __u64 *ret_ip,
					     __u64 *ret_sp)
{
	*ret_ip = arch__ret_addr(PT_REGS_RET(ctx));
	*ret_sp = PT_REGS_SP(ctx) + delta;
	return 0;
}

#endif
