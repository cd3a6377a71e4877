/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cfi: call frame information for the unwinder (cpu/unwind.c), from the
 * symbolizer's objects: a row per address, and one unwinding step.  The
 * registers are named for their job, the same on every architecture: sp,
 * bp the frame pointer (rbp, x29) and bx one more (rbx; arm64's link
 * register x30).  Which DWARF registers those are is each architecture's
 * table (cfi_arch.h: cfi_x86_64.c, cfi_arm64.c), picked by the object's
 * ELF machine.  The rest of the symbolizer's users never see registers
 * (symbolizer.h).
 */
#ifndef PROFD_SYM_CFI_H
#define PROFD_SYM_CFI_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolizer/symbolizer.h"

/*
 * A return address's address bits where it may carry a pointer
 * authentication code above them (arm64, row.pac): the user address
 * space's bits (symbolizer__user_addr_mask), the PAC and TBI's tag byte
 * above.
 */
#define SYM_PAC_ADDR_MASK (symbolizer__user_addr_mask())

/*
 * One row of an object's call frame information (.eh_frame, else
 * .debug_frame): how the caller's registers follow from these.  Offsets
 * are bytes; "AT" means saved in memory at CFA + off; "LR": the return
 * address is in bx, the link register (arm64: a leaf, or any function
 * before it saved x30).
 */
enum sym_cfa_rule { SYM_CFA_EXPR = 0, SYM_CFA_SP, SYM_CFA_BP, SYM_CFA_BX };
enum sym_reg_rule { SYM_REG_EXPR = 0, SYM_REG_SAME, SYM_REG_UNDEF, SYM_REG_AT, SYM_REG_LR };

struct sym_cfi {
	uint8_t cfa;		/* sym_cfa_rule: CFA = sp, bp or bx + cfa_off */
	uint8_t ra;		/* sym_reg_rule of the return address */
	uint8_t bp;		/* and of the caller's frame pointer */
	uint8_t bx;		/* and bx (ld.so's trampoline keeps its CFA in rbx) */
	bool signal;		/* a signal trampoline: the caller's pc is exact */
	bool pac;		/* strip return addresses to SYM_PAC_ADDR_MASK */
	/* The caller's fp and the return address saved as a frame record
	 * {fp, ra}, where the kernel side's frame-pointer walk reads them. */
	bool frame_record;
	int32_t cfa_off, ra_off, bp_off, bx_off;
	uint64_t fde_start;	/* where this row starts applying, as a vaddr */
};

/* Registers of one frame; the caller's sp is the CFA. */
struct sym_regs {
	uint64_t pc, sp, bp, bx;
	bool bp_ok, bx_ok;	/* bp, bx are known */
};

/*
 * Does a function's entry have the return address in the link register
 * (bx), on the architecture the samples come from (arm64), rather than on
 * the stack (x86-64)?  For code without CFI: PLT stubs on arm64, crt code.
 */
bool symbolizer__ra_in_lr(void);
/* The bits of a user address on this machine below where a return
 * address's PAC starts: 2^VA_BITS - 1 on arm64 (39 or 48 bits), found
 * once from this process's stack; 48 bits where nothing is signed. */
uint64_t symbolizer__user_addr_mask(void);

/* Read 8 bytes of the target's memory (its copied stack): 0 or -errno. */
typedef int (*sym_read_fn)(void *ctx, uint64_t addr, uint64_t *val);

/* The CFI row at file_offset.  -ENOENT when no CFI covers it. */
int symbolizer__cfi(struct symbolizer *s, const struct sym_object_key *key, uint64_t file_offset,
		    struct sym_cfi *row);

/*
 * One unwinding step by the row at file_offset, expressions included (PLT
 * stubs, signal frames): the caller's registers, pc 0 at the outermost
 * frame.  Negative errno when memory it needs isn't readable (-EFAULT from
 * rd) or the rule is one we can't evaluate.
 */
int symbolizer__cfi_eval(struct symbolizer *s, const struct sym_object_key *key,
			 uint64_t file_offset, const struct sym_regs *in, sym_read_fn rd, void *ctx,
			 struct sym_regs *caller);

#endif
