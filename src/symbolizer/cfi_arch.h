/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cfi_arch: what the CFI reader (cfi.c) must know of one architecture,
 * as a table per architecture (cfi_x86_64.c, cfi_arm64.c): the DWARF
 * numbers of the registers a sample carries, and how a return address
 * becomes a pc.  An object's table is picked by its ELF machine, so one
 * daemon reads either architecture's CFI (the unit tests read arm64
 * objects on x86-64, and the other way round under qemu).
 */
#ifndef PROFD_SYM_CFI_ARCH_H
#define PROFD_SYM_CFI_ARCH_H

#include <stdbool.h>
#include <stdint.h>

struct cfi_arch {
	const char *name;
	uint16_t e_machine;	/* EM_X86_64, EM_AARCH64 */
	/* DWARF register numbers of struct sym_regs' sp, bp (the frame
	 * pointer), bx (rbx; arm64: x30, the link register), and the
	 * return address column; pc: the pc's own number, -1 if none. */
	int sp, bp, bx, ra, pc;
	/*
	 * The frame record {caller's fp, return address} may be described
	 * from any CFA register (arm64: GCC keeps the CFA on sp after
	 * "stp x29, x30, [sp, -N]!; mov x29, sp"); else only as CFA = bp +
	 * 16 (x86-64's push %rbp; mov %rsp, %rbp).
	 */
	bool record_any_cfa;
	/* Return addresses may carry a pointer authentication code above
	 * the address bits (SYM_PAC_ADDR_MASK keeps the address). */
	bool pac;
};

extern const struct cfi_arch cfi_arch_x86_64;
extern const struct cfi_arch cfi_arch_arm64;

/* The table for an ELF machine; NULL for one profd can't unwind. */
const struct cfi_arch *cfi_arch__of(uint16_t e_machine);
/* This build's own architecture's: the samples' (NULL: none of ours). */
const struct cfi_arch *cfi_arch__host(void);

#endif
