/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * place_arch: one allocator probe placer per architecture, behind
 * uprobe_place__choose (uprobe_place.c picks by the object's ELF machine).
 * Each starts from site->offset = entry_offset, stack_delta 0, and sets
 * offset, stack_delta, emulated, wrapper and note.  The BPF side's half
 * (where the return address is at the probe) is bpf/arch/'s
 * arch__call_return.
 */
#ifndef PROFD_HEAP_PLACE_ARCH_H
#define PROFD_HEAP_PLACE_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap/uprobe_place.h"

#define WRAPPER_MAX 64		/* bytes: a function this small that jumps away is a wrapper */

void place_x86_64__choose(const uint8_t *code, size_t len, uint64_t vaddr, uint32_t fn,
			  const struct uprobe_fwd *fwd, struct uprobe_site *site);
void place_arm64__choose(const uint8_t *code, size_t len, uint64_t vaddr, uint32_t fn,
			 const struct uprobe_fwd *fwd, struct uprobe_site *site);

/* Argument registers the BPF side reads for fn (enum profd_alloc_fn). */
int uprobe_place__nargs(uint32_t fn);
/* Is a tail jump to `to` one to another probed allocator (or a PLT slot)? */
bool uprobe_place__forwards(const struct uprobe_fwd *fwd, uint64_t to);

#endif
