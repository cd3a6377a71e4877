/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stackcopy: how much user stack the kernel side copies with each sample
 * of a process, learned per executable.
 *
 * A sample carries PROFD_STACK_SMALL bytes by default, which is all a
 * stack of frame-pointer code needs (its leaf's caller).  When unwinding
 * a process's sample ran out of copied stack (code without frame pointers
 * sits in it), its executable is remembered with the size that would have
 * done, rounded up to a power of two, and every process running it gets
 * that copy: those alive now (a walk of /proc), those that exec it later,
 * and, through the kernel side's fork handling, their children.  A
 * postgres backend forked for one transaction thus gets the copy from its
 * first sample on, because the postmaster has it.
 *
 * Once enough samples unwound complete, the copy is cut to what the
 * deepest of them read, with a margin (stackcopy__used).
 *
 * Bounded: STACKCOPY_MAX_EXES executables; the smallest need goes first.
 */
#ifndef PROFD_STACKCOPY_H
#define PROFD_STACKCOPY_H

#include <stdbool.h>
#include <stdint.h>

#define STACKCOPY_MAX_EXES 256

struct procs;
struct stackcopy;
struct tgidbits;

/* map_fd: the kernel side's proc_copy map (tgid -> bytes); bits: where a
 * process with an entry is said to have one (NULL: not mapped). */
struct stackcopy *stackcopy__new(int map_fd, struct tgidbits *bits, struct procs *procs,
				 uint32_t max_bytes);
void stackcopy__free(struct stackcopy *sc);

/*
 * pid's samples need bytes of stack (from its stack pointer).  below_fp:
 * that need lay below the sample's innermost frame pointer, so a copy that
 * ends there would have done.  As long as every need of an executable was
 * such, its copy ends at the frame pointer (PROFD_COPY_TO_FP): frame-pointer
 * code that calls into libc pays for the copy only when it is in libc.
 */
void stackcopy__need(struct stackcopy *sc, int pid, uint64_t bytes, bool below_fp);
/*
 * A sample of pid unwound complete from its copy alone, reading bytes of
 * it from sp (unwind_result.used).  After STACKCOPY_FIT_SAMPLES of them
 * since its last raise, an executable's copy is cut to what the deepest
 * read, with a margin; once.
 */
#define STACKCOPY_FIT_SAMPLES 64
void stackcopy__used(struct stackcopy *sc, int pid, uint64_t bytes);
/* pid now runs the executable procs knows for it (exec, or first seen). */
void stackcopy__exec(struct stackcopy *sc, int pid);

struct stackcopy_stats {
	uint64_t exes;		/* executables with a larger copy */
	uint64_t raised;	/* times a copy size went up */
	uint64_t fitted;	/* times one was cut to what samples read */
	uint64_t procs_set;	/* processes given a larger copy */
};
void stackcopy__stats(const struct stackcopy *sc, struct stackcopy_stats *st);

#endif
