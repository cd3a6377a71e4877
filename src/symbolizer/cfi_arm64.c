// SPDX-License-Identifier: BSD-2-Clause
/*
 * arm64's registers for the CFI reader (cfi_arch.h): AAPCS64's DWARF
 * numbers (x0-x30 are 0-30, sp 31).  The return address column is x30,
 * the link register, which the sample carries as bx: a leaf function
 * keeps its caller there ("same value", libdw's initial rule for x30),
 * and the unwinder takes it from there (SYM_REG_LR).
 *
 * Pointer authentication: code built with -mbranch-protection=pac-ret
 * signs x30 (paciasp) before saving it, and its CFI toggles the "return
 * address is signed" state with DW_CFA_AARCH64_negate_ra_state.  No such
 * state is needed here, since an unwinder does not authenticate: every
 * return address is stripped to its address bits, signed or not (a user
 * address has no bits above them).  libdw 0.188 reads the rows around the
 * opcode right (tests/unit/cpu/test_unwind_self.c unwinds through them).  The kernel side strips the frame-pointer walk's
 * (bpf/arch/arm64.bpf.h).
 */
#include <elf.h>

#include "symbolizer/cfi_arch.h"

const struct cfi_arch cfi_arch_arm64 = {
	.name = "arm64",
	.e_machine = EM_AARCH64,
	.sp = 31,
	.bp = 29,	/* x29, the frame pointer */
	.bx = 30,	/* x30, the link register */
	.ra = 30,
	.pc = -1,	/* no DWARF number: CFI never reads it */
	.record_any_cfa = true,
	.pac = true,
};
