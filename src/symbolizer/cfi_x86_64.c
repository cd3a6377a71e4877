// SPDX-License-Identifier: BSD-2-Clause
/*
 * x86-64's registers for the CFI reader (cfi_arch.h): the psABI's DWARF
 * numbers.  rbx rides along because ld.so's lazy-binding trampoline
 * (_dl_runtime_resolve) keeps its CFA there.  The kernel side's half is
 * bpf/arch/x86_64.bpf.h.
 */
#include <elf.h>

#include "symbolizer/cfi_arch.h"

const struct cfi_arch cfi_arch_x86_64 = {
	.name = "x86-64",
	.e_machine = EM_X86_64,
	.sp = 7,	/* rsp */
	.bp = 6,	/* rbp */
	.bx = 3,	/* rbx */
	.ra = 16,	/* the return address column, also rip */
	.pc = 16,
	.record_any_cfa = false,
	.pac = false,
};
