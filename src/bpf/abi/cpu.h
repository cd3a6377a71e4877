/* SPDX-License-Identifier: BSD-2-Clause */
/* The contract between cpu.bpf.c and user space (cpu/sampler.c, cpu/unwind.c, tracer/stackcopy.c).  Includes nothing itself. */
#ifndef PROFD_BPF_CPU_H
#define PROFD_BPF_CPU_H

#define PROFD_MAX_STACK 127		/* frames per stack: perf's kernel.perf_event_max_stack */
#define PROFD_FRAMES_MAX 256		/* room for both stacks in a sample */
/*
 * User stack a sample carries, from the stack pointer up, for the daemon to
 * unwind code without frame pointers by CFI.  A process whose stacks need
 * more (the daemon learns which and how much: proc_copy) gets that, up to
 * PROFD_STACK_MAX; any other PROFD_STACK_SMALL, enough for a leaf's caller.
 */
#define PROFD_STACK_MAX 32768
#define PROFD_STACK_SMALL 128
/* proc_copy flag: copy no further than the innermost frame pointer + 16. */
#define PROFD_COPY_TO_FP (1u << 31)

/* sessions value flags */
#define PROFD_SESSION_ACTIVE 1
#define PROFD_SESSION_ALL 2	/* whole system: no target filter */
#define PROFD_SESSION_EXE 4	/* has executable targets */

struct profd_session_cfg {
	__u32 flags;
};

/* Per-session counters, in a per-CPU array indexed session * PROFD_STAT_NR + stat. */
enum profd_stat {
	PROFD_STAT_SAMPLES = 0,	/* samples emitted for this session */
	PROFD_STAT_LOST_RINGBUF,	/* ring buffer full: sample dropped */
	PROFD_STAT_LOST_PROCS,	/* process table full: state unknown, dropped */
	PROFD_STAT_ERR_USTACK,	/* user frame unreadable: sample kept, stack ends there */
	PROFD_STAT_ERR_KSTACK,	/* kernel stack walk failed: sample kept, user frames only */
	PROFD_STAT_NO_UREGS,	/* user registers not found: frames from the kernel's walk */
	PROFD_STAT_STACK_BYTES,	/* bytes of user stack copied, in all */
	PROFD_STAT_EXIT_SNAP,	/* samples whose user state is the exit_group snapshot */
	PROFD_STAT_NR,
};

/* profd_sample.flags */
#define PROFD_SF_TENTATIVE 1	/* the process's executable is not resolved yet: the daemon decides */
#define PROFD_SF_KERNEL 2	/* the sample interrupted kernel mode */
#define PROFD_SF_UREGS 4	/* ip, sp, bp are the user registers */
#define PROFD_SF_FP_CLEAN 8	/* the frame-pointer walk ended at a frame whose caller is 0 */
#define PROFD_SF_EXITING 16	/* user state as the thread called exit_group (see exit_snaps) */
/* A 32-bit (ia32) process in user mode: its user frames are the kernel's own
 * frame-pointer walk, which knows the 32-bit frame layout; no registers or
 * stack copy (the daemon's CFI is x86-64's). */
#define PROFD_SF_COMPAT 32
/* Taken at a switch-out by offcpu.bpf.c: `session` is a mask of sessions,
 * the weight follows in a profd_offcpu_end (abi/offcpu.h). */
#define PROFD_SF_OFFCPU 64

/*
 * One sample: this header, then nk kernel frames and nu user frames
 * (innermost first, ip first), then, at stack_off, stack_len bytes of user
 * stack from sp.
 */
struct profd_sample {
	__u32 type;		/* PROFD_EV_SAMPLE */
	__u32 session;
	__u32 pid;
	__u32 tid;
	__u16 nk;
	__u16 nu;
	__u16 flags;		/* PROFD_SF_* */
	__u16 stack_len;
	__u64 ip;		/* user registers, when PROFD_SF_UREGS */
	__u64 sp;
	__u64 bp;
	__u64 bx;		/* a CFA register too: ld.so's lazy-binding trampoline */
	char comm[16];		/* thread name */
	__u32 exec_seq;		/* the process's exec count: which of its mappings apply */
	__u16 stack_off;	/* where the stack copy starts, from the start of the sample */
	__u16 pad;
	/* followed by __u64 frames[nk + nu], then __u8 stack[stack_len] */
};


/*
 * CPU samples go to a ring per CPU, cpu_rings, an array the daemon maps,
 * not to the shared BPF ring buffer: a BPF ring record costs ~350 ns on
 * the development VM (its spinlock, its positions shared by all CPUs, the
 * record header's commit), a plain write to this CPU's own memory ~100;
 * and a sample with a stack copy dirties only its CPU's lines, not a ring
 * every CPU writes (docs/benchmarks.md).  One writer per ring: only the
 * perf_event program writes it, and the kernel never runs a perf_event
 * program nested in another on the same CPU (bpf_prog_active, which
 * bpf_overflow_handler takes).
 * The program owns head, the daemon tail;
 * both count bytes ever written, so head - tail is what waits.  A record
 * starts at data[head % PROFD_CPURING_BYTES] and is written whole there,
 * into the slack past the end if it must: records never wrap.
 */
#define PROFD_CPURING_BYTES (128u << 10)	/* a power of two */
#define PROFD_CPURING_HDR 128u			/* head and tail, a cache line each */
/* Room for the largest record past the end (PROFD_CPURING_REC_MAX); the
 * whole a number of pages, as an array's mapping is. */
#define PROFD_CPURING_SLACK ((44u << 10) - PROFD_CPURING_HDR)
/* Wake the daemon when this much waits (its timer drains every 100-800 ms). */
#define PROFD_CPURING_WAKE (PROFD_CPURING_BYTES / 2)

struct profd_cpuring {
	__u64 head;		/* bytes written: the program's */
	__u8 pad0[56];
	__u64 tail;		/* bytes read: the daemon's */
	__u8 pad1[56];
	__u8 data[PROFD_CPURING_BYTES + PROFD_CPURING_SLACK];
};

/* A record in a profd_cpuring: this header, then a profd_sample and what
 * follows it.  len counts the header and is a multiple of 8. */
struct profd_cpuring_rec {
	__u32 len;
	__u32 pad;
};

/*
 * Record sizes, cpu.bpf.c's sample_small and sample_full after the
 * header (it asserts them).  A small record is the sample with every
 * frame and the small stack copy, with the room its reads may overshoot
 * into.  A full one puts its copy after room for every frame, at
 * PROFD_CPURING_FULL_HDR, and is that much plus what it copied, up to
 * PROFD_STACK_MAX.  The program keeps the room a record may take free;
 * the daemon takes a record longer than PROFD_CPURING_REC_MAX for a bad one.
 */
#define PROFD_CPURING_FULL_HDR                                                              \
	(sizeof(struct profd_cpuring_rec) + sizeof(struct profd_sample) + PROFD_FRAMES_MAX * 8)
#define PROFD_CPURING_REC_SMALL (PROFD_CPURING_FULL_HDR + 2 * PROFD_STACK_SMALL)
/* copy_full's reads as the verifier bounds them: whole pages after a partial one */
#define PROFD_CPURING_REC_MAX (PROFD_CPURING_FULL_HDR + PROFD_STACK_MAX + 8192)
_Static_assert(PROFD_CPURING_REC_MAX <= PROFD_CPURING_SLACK, "a record fits past a ring's end");
_Static_assert(PROFD_CPURING_REC_SMALL % 8 == 0 && PROFD_CPURING_FULL_HDR % 8 == 0,
	       "the room kept is whole words, as a record's length");

#endif
