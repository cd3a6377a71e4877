// SPDX-License-Identifier: BSD-2-Clause
/*
 * place_arm64: an allocator probe's place in arm64 code (place_arch.h).
 * Instructions are 4 bytes, decoded here by their fixed fields: no
 * disassembler.
 *
 * Code built for BTI (-mbranch-protection=bti or standard) starts each
 * function that may be called indirectly with a landing pad, "bti c": on a
 * guarded page, an indirect branch (blr through the PLT, a function
 * pointer) must land on one, or the CPU raises a branch target exception.
 * A uprobe's brk in its place would be landed on instead: so the probe
 * goes on the next instruction, which every call reaches the same way (a
 * landing pad changes no register).
 *
 * Never past paciasp/pacibsp, which signs x30 with sp: a return probe (a
 * uretprobe, or a session's return) swaps x30 for its trampoline at the
 * probe, and past paciasp the swap would put an unsigned address where
 * autiasp expects the signed one (a fault with FEAT_FPAC, a poisoned
 * return without).  On paciasp itself the swap comes first, and the
 * trampoline is what gets signed and authenticated.
 *
 * The kernel simulates only branches, adr/adrp and literal loads
 * (arch/arm64/kernel/probes/simulate-insn.c); everything else, landing
 * pads and paciasp included, is single-stepped out of line.
 */
#include <stdio.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/abi/heap.h"
#include "heap/place_arch.h"

#define MAX_TARGETS 512

/* bti, bti c, bti j, bti jc: HINT #32, #34, #36, #38 */
static bool is_bti(uint32_t w)
{
	return (w & 0xffffff3f) == 0xd503241f;
}

/* paciasp, pacibsp: HINT #25, #27 (each also a landing pad for calls) */
static bool is_pac_sp(uint32_t w)
{
	return w == 0xd503233f || w == 0xd503237f;
}

static int64_t sext(uint64_t v, int bits)
{
	return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

/* A direct branch's target: b, bl, b.cond, cbz/cbnz, tbz/tbnz. */
static bool branch_target(uint32_t w, uint64_t at, uint64_t *to)
{
	/* Words, times 4 in unsigned arithmetic: a left shift of a negative
	 * offset is undefined in C (UBSan). */
	if ((w & 0x7c000000) == 0x14000000)	/* b, bl: imm26 */
		*to = at + (uint64_t)sext(w & 0x03ffffff, 26) * 4;
	else if ((w & 0xff000010) == 0x54000000 ||	/* b.cond: imm19 */
		 (w & 0x7e000000) == 0x34000000)	/* cbz, cbnz: imm19 */
		*to = at + (uint64_t)sext((w >> 5) & 0x7ffff, 19) * 4;
	else if ((w & 0x7e000000) == 0x36000000)	/* tbz, tbnz: imm14 */
		*to = at + (uint64_t)sext((w >> 5) & 0x3fff, 14) * 4;
	else
		return false;
	return true;
}

/* Simulated by the kernel rather than stepped out of line. */
static bool is_simulated(uint32_t w)
{
	uint64_t to;

	if (branch_target(w, 0, &to))
		return true;
	if ((w & 0xfffffc1f) == 0xd61f0000 || (w & 0xfffffc1f) == 0xd63f0000 ||
	    (w & 0xfffffc1f) == 0xd65f0000)
		return true;	/* br, blr, ret */
	if ((w & 0x1f000000) == 0x10000000)
		return true;	/* adr, adrp */
	if ((w & 0xbf000000) == 0x18000000 || (w & 0xff000000) == 0x98000000)
		return true;	/* ldr (literal), ldrsw (literal) */
	return false;
}

void place_arm64__choose(const uint8_t *code, size_t len, uint64_t vaddr, uint32_t fn,
			 const struct uprobe_fwd *fwd, struct uprobe_site *site)
{
	uint64_t targets[MAX_TARGETS];
	size_t n = len / 4, ntargets = 0;
	uint32_t w;

	if (n == 0) {
		snprintf(site->note, sizeof(site->note), "undecodable: entry, single-stepped");
		return;
	}
	for (size_t i = 0; i < n && ntargets < MAX_TARGETS; i++) {
		uint64_t at = vaddr + 4 * i, to;

		memcpy(&w, code + 4 * i, 4);	/* little-endian, as Linux runs arm64 */
		if (!branch_target(w, at, &to))
			continue;
		targets[ntargets++] = to;
		/* b (not bl) out of a small function to another allocator:
		 * glibc's reallocarray -> realloc.  Probing both would count
		 * the allocation twice. */
		if ((w & 0xfc000000) == 0x14000000 && len <= WRAPPER_MAX &&
		    uprobe_place__forwards(fwd, to)) {
			site->wrapper = true;
			snprintf(site->note, sizeof(site->note),
				 "%s tail-branches to %#lx: a wrapper, not probed", site->name,
				 (unsigned long)to);
			return;
		}
	}
	memcpy(&w, code, 4);
	if (!is_bti(w) || n < 2) {
		site->emulated = is_simulated(w);
		snprintf(site->note, sizeof(site->note), "%s entry (%#010x)%s", site->name, w,
			 site->emulated ? ", simulated" : ", single-stepped");
		return;
	}
	for (size_t t = 0; t < ntargets; t++) {
		if (targets[t] == vaddr + 4) {
			snprintf(site->note, sizeof(site->note),
				 "+0x4 after the landing pad is a branch target: entry, single-stepped");
			return;
		}
	}
	memcpy(&w, code + 4, 4);
	site->offset = site->entry_offset + 4;
	site->emulated = is_simulated(w);
	snprintf(site->note, sizeof(site->note), "%s+0x4, past the BTI landing pad (%s)%s",
		 site->name, is_pac_sp(w) ? "on paciasp" : "next instruction",
		 site->emulated ? ", simulated" : ", single-stepped");
	(void)fn;
}
