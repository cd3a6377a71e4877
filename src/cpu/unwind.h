/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind: completes the user stacks the kernel side walked by frame
 * pointers, from what the sample also carries (registers, a copy of the
 * stack at the stack pointer) and the objects' CFI.
 *
 * From the sample's registers, frame by frame with each object's CFI
 * (.eh_frame, .debug_frame) over the stack the sample copied; where the
 * copy ends, the kernel side's frame-pointer walk continues it, from the
 * frame both went through, each of its frames checked against CFI.  Code
 * without frame pointers (libc, libcrypto, ld.so, CPython,
 * -fomit-frame-pointer builds), leaf functions, prologues, PLT stubs and
 * signal frames all unwind.  When the copy was too short, the result says
 * how much would have done: the daemon then asks the kernel side for more
 * for that executable (bpfobj__stack_need).  docs/architecture.md has the
 * design and its figures.
 */
#ifndef PROFD_UNWIND_H
#define PROFD_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct procs;
struct profd_sample;
struct symbolizer;
struct unwind;

struct unwind_result {
	bool complete;		/* reached a thread's outermost frame */
	bool need_more;		/* stopped for want of stack beyond the copy */
	uint64_t want;		/* then: bytes from sp that the next frame needed */
	bool below_fp;		/* and all of it lay below the innermost frame pointer + 16 */
	uint64_t used;		/* complete from the copy alone: the bytes from sp it read */
	const char *stop;	/* why an incomplete stack ended (PROFD_DEBUG_UNWIND=1 logs it) */
	uint64_t last_pc;	/* the last pc the CFI walk stood on */
};

struct unwind_stats {
	uint64_t samples;
	uint64_t incomplete;	/* did not reach a thread's outermost frame */
	uint64_t need_more;	/* of which: the copy ended too soon */
	uint64_t cfi_frames;	/* frames unwound by CFI */
	uint64_t fp_frames;	/* frames taken from the frame-pointer walk */
	uint64_t expr_steps;	/* CFI steps by expression (PLT, signal frames) */
	uint64_t row_hits, row_misses;
	size_t table_bytes;	/* the CFI row cache, fixed */
};

/* trace: log every step (PROFD_DEBUG_UNWIND=2). */
struct unwind *unwind__new(struct symbolizer *sym, bool trace);
void unwind__free(struct unwind *u);
/* Between batches (a session's end): the pages the CFI lookups read out of
 * the objects' files leave the daemon's RSS (symbolizer__release_pages). */
void unwind__release_pages(struct unwind *u);

/*
 * One sample, as the unwinder takes it: plain registers and bytes, nothing
 * of the BPF wire format (unwind__user_frames() reads that), so recorded
 * samples can be unwound in unit tests (tests/unit/cpu/test_unwind.c).
 * x86-64's registers: the ones its CFI needs to find callers.
 */
struct unwind_sample {
	uint32_t pid;
	uint32_t exec_seq;	/* which of its mappings apply (proc/procs.h) */
	uint64_t ip, sp, bp, bx;	/* user registers where the sample was taken */
	bool regs;		/* ip..bx were taken; else only the walk below is known */
	bool fp_clean;		/* the frame-pointer walk ended on a saved rbp of 0 */
	const uint64_t *fp;	/* the kernel side's frame-pointer walk: ip, return addresses */
	size_t nfp;
	const uint8_t *stack;	/* a copy of the user stack, [sp, sp + stack_len) */
	uint64_t stack_len;
};

/* The user frames of s, completed, into out (max entries).  Returns how many. */
size_t unwind__frames(struct unwind *u, struct procs *procs, const struct unwind_sample *s,
		      uint64_t *out, size_t max, struct unwind_result *res);
/* The same for a sample as the kernel side sent it (size bytes). */
size_t unwind__user_frames(struct unwind *u, struct procs *procs, const struct profd_sample *s,
			   size_t size, uint64_t *out, size_t max, struct unwind_result *res);
void unwind__stats(const struct unwind *u, struct unwind_stats *st);

#endif
