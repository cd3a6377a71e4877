/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind: completes the user stacks the kernel side walked by frame
 * pointers, from what the sample also carries (registers, a copy of the
 * stack at the stack pointer) and the objects' CFI.
 *
 * Today: the leaf's caller.  A frame-pointer walk starts from the caller's
 * frame when the sampled function has not pushed one (leaf functions,
 * prologues, epilogues), so it skips the caller; CFI says where the return
 * address is on the stack, and it is spliced in.
 */
#ifndef PROFD_UNWIND_H
#define PROFD_UNWIND_H

#include <stddef.h>
#include <stdint.h>

struct procs;
struct profd_sample;
struct symbolizer;
struct unwind;

struct unwind *unwind__new(struct symbolizer *sym);
void unwind__free(struct unwind *u);

/*
 * The user frames of sample s (size bytes), completed, into out (max
 * entries).  Returns how many.
 */
size_t unwind__user_frames(struct unwind *u, struct procs *procs, const struct profd_sample *s,
			   size_t size, uint64_t *out, size_t max);

#endif
