/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uprobe_place: where to put the heap probes in an ELF object.
 *
 * A uprobe on an instruction the kernel emulates (x86-64: push reg,
 * jmp/jcc/call rel, nop) costs ~0.5 us per hit here; on one it must
 * single-step (glibc free()'s first instruction, test %rdi,%rdi) ~17.5 us.
 * Each architecture has its placer (place_arch.h).  On x86-64, for each
 * allocator entry point this decodes the function (capstone) and picks the
 * first emulated instruction that every call reaches with the argument
 * registers untouched: only instructions that write neither an argument
 * register nor anything but flags (or the stack pointer, by a push) may be
 * skipped, and none of the skipped-to addresses may be a branch target
 * inside the function.  When no such place is proven, the probe stays on
 * the entry (correct, but slow) and `note` says why.  On arm64 the probe
 * skips a BTI landing pad at the entry, never paciasp (place_arm64.c).
 */
#ifndef PROFD_UPROBE_PLACE_H
#define PROFD_UPROBE_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UPROBE_PLACE_MAX 16

struct uprobe_site {
	const char *name;	/* the symbol, e.g. "free" (static string) */
	uint32_t fn;		/* enum profd_alloc_fn */
	uint64_t entry_offset;	/* file offset of the function's entry */
	uint64_t offset;	/* file offset of the probe */
	uint16_t stack_delta;	/* bytes pushed between entry and probe */
	bool emulated;		/* the probed instruction is emulated */
	bool wrapper;		/* tail-jumps to another allocator: don't probe */
	char note[192];		/* how it was placed, for the log */
};

/*
 * Find the allocator entry points that the ELF file fd defines (in .symtab
 * or .dynsym) and place a probe on each.  Returns how many were found (0 if
 * the object has no allocator), or negative errno.  fd stays the caller's.
 */
int uprobe_place__find(int fd, struct uprobe_site *sites, size_t max);

/*
 * Where a small function's tail jump may land for it to count as a wrapper
 * of another probed allocator: that allocator's entry, or a PLT slot.
 */
struct uprobe_fwd {
	const uint64_t *entries;
	size_t nentries;
	uint64_t plt_start[2], plt_end[2];	/* .plt and .plt.sec */
};

/* Place one probe in the code bytes of a function of an ELF object for
 * machine e_machine (EM_X86_64, EM_AARCH64; exported for tests). */
void uprobe_place__choose(uint16_t e_machine, const uint8_t *code, size_t len, uint64_t vaddr,
			  uint32_t fn, const struct uprobe_fwd *fwd, struct uprobe_site *site);

#endif
