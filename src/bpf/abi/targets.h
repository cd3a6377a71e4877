/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The contract between targets.bpf.c and the daemon (tracer/bpfobj.c,
 * tracer/targets.c): which processes each consumer profiles, and the
 * process events the kernel side reports.  Includes nothing itself.
 *
 * Every map has one writer per key and field, so neither side's
 * read-modify-write can lose the other's update:
 *  - pid_targets, exe_targets: the daemon sets and clears them; the kernel
 *    only fills a brand-new child's entry at fork (from its parent's) and
 *    drops entries at exec (exe_targets) and exit;
 *  - proc_state: the kernel only;
 *  - proc_run: the daemon adds an entry, the kernel deletes it;
 *  - title_area: the daemon sets a process's entry; the kernel only fills
 *    a brand-new child's (from its parent's) and drops it at exec and exit;
 *  - tgid_bits: 64 processes a word, so both sides write a word, with
 *    atomic operations (the daemon through its mapping of the array).
 */
#ifndef PROFD_BPF_TARGETS_H
#define PROFD_BPF_TARGETS_H

#define PROFD_MAX_SESSIONS 16		/* CPU session slots: mask bits 0..15 */
#define PROFD_HEAP_BIT (1u << 31)	/* heap tracking's mask bit */
#define PROFD_COMM_LEN 16
#define PROFD_MAX_PROCS 32768		/* processes each table holds */
/* Words of a bit-per-pid array at most (tgid_bits' kinds, offcpu_waiting):
 * PID_MAX_LIMIT on 64-bit, 4M pids.  Each is sized from pid_max at load
 * (kernel__tid_words). */
#define PROFD_TID_WORDS ((4u << 20) / 64)

/* tgid_bits: a process may have an entry in this map (targets.bpf.h).
 * Kind K's bit for tgid is bit tgid % 64 of word K * words + tgid / 64. */
enum profd_tgid_bit {
	PROFD_TGID_TARGET = 0,	/* pid_targets */
	PROFD_TGID_COPY,	/* proc_copy */
	PROFD_TGID_NR,
};

enum profd_event_type {
	PROFD_EV_SAMPLE = 1,
	PROFD_EV_PROC = 2,
	PROFD_EV_TITLE = 3,
	PROFD_EV_OFFCPU = 4,	/* struct profd_offcpu_end (abi/offcpu.h), on the sample ring */
	PROFD_EV_WAKE = 5,	/* no payload: a CPU's ring of small samples is half full (abi/cpu.h) */
};

/* Why the kernel side reports a process. */
enum profd_proc_reason {
	PROFD_PROC_NEW = 1,	/* sampled, and unknown (or its executable unresolved) */
	PROFD_PROC_FORK = 2,	/* forked from a process of interest */
	PROFD_PROC_EXEC = 3,	/* exec'd: ld.so has not mapped the libraries yet */
	PROFD_PROC_RUN = 4,	/* first sample in the executable's own text after exec */
	PROFD_PROC_EXIT = 5,	/* the whole process has exited */
	PROFD_PROC_FIRST = 6,	/* first sample of a process whose fork or exec was not reported
				 * (lazy_procs); ppid: its parent when it has not exec'd since */
};

struct profd_proc_event {
	__u32 type;		/* PROFD_EV_PROC */
	__u32 reason;		/* enum profd_proc_reason */
	__u32 pid;		/* the process (tgid) */
	__u32 ppid;		/* FORK: the parent; otherwise 0 */
	__u32 exec_seq;		/* the process's exec count (see profd_proc_state) */
	__u32 pad;
	__u64 ktime;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	char comm[PROFD_COMM_LEN];	/* the reporting thread's name (after exec: the new one) */
};

/*
 * A process's title as it called exit_group (struct profd_title_event):
 * read by the kernel side from the process's argument area, whose address
 * the daemon gave (title_area).  After exit_group the address space goes,
 * and /proc/PID/cmdline with it; a postgres backend that lives 5 ms is
 * labelled from this.  Reported on the process-event ring, not waking the
 * daemon.
 *
 * Also at a process's first CPU sample (PROFD_TE_LIVE in flags), read the
 * same way, just before the sample: the daemon labels the sample from it
 * instead of reading /proc/PID/cmdline, its comm and its exe (~50 us a
 * backend under connection churn, where nearly every sampled backend is
 * sampled once).
 */
#define PROFD_TITLE_MAX 128
#define PROFD_TE_LIVE (1u << 16)	/* flags: read at the first sample, alive */

struct profd_title_event {
	__u32 type;		/* PROFD_EV_TITLE */
	__u32 pid;		/* the process (tgid) */
	__u32 exec_seq;		/* its exec count, as profd_proc_event's */
	__u32 flags;		/* its title_area's PROFD_TA_* */
	__u64 ktime;		/* bpf_ktime_get_ns() at exit_group: CLOCK_MONOTONIC */
	char comm[PROFD_COMM_LEN];	/* the exiting thread's name */
	char title[PROFD_TITLE_MAX];	/* up to its first NUL; NUL-terminated */
};

/* title_area value: where a process keeps its title (/proc/PID/stat's
 * arg_start), inherited by the children it forks; and where its wait event
 * is (a postgres backend's: proc/pgwait.h), for off-CPU profiles. */
struct profd_title_area {
	__u64 addr;
	__u32 flags;		/* PROFD_TA_* */
	__u32 pg_major;		/* PostgreSQL's major version, 0: unknown */
	__u64 wait_addr;	/* &my_wait_event_info (a __u32 *), 0: unknown */
};

/* Handed down at fork: the process is a forked child (of a postmaster),
 * so its title, if still its parent's, says nothing of what it is. */
#define PROFD_TA_FORKED 1

/* exe_targets value: which consumers target the process's executable. */
struct profd_exe_state {
	__u32 mask;
	__u32 gen;		/* valid while it equals filter_gen; 0: never */
};

/* proc_state value, kept by the kernel side alone. */
struct profd_proc_state {
	__u32 asked_gen;	/* filter_gen when the daemon was last asked to resolve it */
	__u32 flags;		/* PROFD_PS_* */
	/*
	 * Execs since profd first saw it.  Samples and events carry it, so
	 * the daemon symbolizes a sample taken before an exec (a forked child
	 * still in its parent's code, a process in execve) with the mappings
	 * it had then, not with the new program's.
	 */
	__u32 exec_seq;
	__u32 ppid;		/* lazy_procs: its parent, while it runs what it forked with */
};

#define PROFD_PS_NEED_RUN 1	/* exec'd; report RUN when proc_run's range is reached */
#define PROFD_PS_NEED_FIRST 2	/* forked or exec'd under lazy_procs; report FIRST at its first sample */
#define PROFD_PS_KNOWN 4	/* the daemon has been told of it: its exit is reported */
#define PROFD_PS_EXITED 8	/* past sched_process_exit, tearing down (state_at_free) */
#define PROFD_PS_TITLED 16	/* sampled: its title reported then (PROFD_TE_LIVE), if it has one */

/*
 * Processes whose titles mean labels (postgres rewrites its argument area):
 * their execs are reported at once, so the daemon can tell the kernel side
 * where the title lives before the first child is forked.
 */
#define PROFD_TITLE_COMM_A "postgres"
#define PROFD_TITLE_COMM_B "postmaster"

/* proc_run value: the executable's text, [lo, hi), written by the daemon at EXEC. */
struct profd_text_range {
	__u64 lo;
	__u64 hi;
};

/* Field offsets in classic tracepoint records, read by the daemon from tracefs. */
struct profd_tp_offsets {
	__u32 newtask_pid;		/* task/task_newtask: pid */
	__u32 newtask_flags;		/* task/task_newtask: clone_flags */
	__u32 exit_group_dead;		/* sched/sched_process_exit: group_dead, 0 if absent */
	__u32 free_pid;			/* sched/sched_process_free: pid */
	__u32 pad;
};

#endif
