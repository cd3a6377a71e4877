/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The contract between offcpu.bpf.c and user space (cpu/offcpu.c): off-CPU
 * time of target threads, sampled by duration.  Includes nothing itself.
 *
 * A kept switch reaches the daemon as two records on the sample ring, in
 * this order: at switch-out, a profd_sample (abi/cpu.h) flagged
 * PROFD_SF_OFFCPU, whose `session` is the mask of off-CPU sessions that
 * target the thread and whose `pad` is the thread's switch number; at
 * switch-in, a profd_offcpu_end with the time it was off CPU and the
 * probability it was kept with.
 */
#ifndef PROFD_BPF_OFFCPU_H
#define PROFD_BPF_OFFCPU_H

/*
 * Mean off-CPU nanoseconds a kept switch stands for, by default (the
 * daemon may set another, offcpu_period_ns).  A switch is kept with
 * probability p = min(1, m / period), m being the thread's recent mean
 * off-CPU time, decided at switch-out before its own time is known; its
 * weight is time / p.  So the estimate of each stack's time is unbiased
 * (Horvitz-Thompson), a thread that sleeps for periods of 10 ms or more
 * has every switch kept, and one that blocks for 20 us every 30 us costs
 * a stack about every 10 ms of its off-CPU time.
 */
#define PROFD_OFFCPU_PERIOD_NS 10000000ull
/* p in 1/65536ths; never below 64 (1/1024), which bounds a weight. */
#define PROFD_OFFCPU_P_ONE 65536
#define PROFD_OFFCPU_P_MIN 64

/* profd_offcpu_end.type: an event type of abi/targets.h's enum. */
struct profd_offcpu_end {
	__u32 type;		/* PROFD_EV_OFFCPU */
	__u32 tid;
	__u32 pid;
	__u16 seq;		/* the sample's pad: which switch of the thread */
	__u16 flags;		/* PROFD_OE_* */
	__u32 p;		/* the probability it was kept with, 1/65536ths */
	__u32 wait_event;	/* PROFD_OE_WAIT: the PostgreSQL wait event at switch-out */
	__u64 ns;		/* off CPU: switch-out to switch-in */
	__u32 pg_major;		/* PROFD_OE_WAIT: its PostgreSQL's major version, 0: unknown */
	__u32 pad;
	__u64 off_ns;		/* when it went off CPU (CLOCK_MONOTONIC): which sessions'
				 * windows the wait overlaps, and by how much */
};

/* profd_offcpu_end.flags */
#define PROFD_OE_WAIT 1		/* wait_event was read from the process */
#define PROFD_OE_NO_WAIT 2	/* a postgres process whose wait event is unknown: no symbol,
				 * or its memory could not be read */
#define PROFD_OE_RUNQ 4		/* switched out runnable (preempted or yielding, for wall-clock
				 * sessions only): its time was runqueue delay, not a wait */

/* Counters, a per-CPU array indexed by enum profd_offcpu_stat. */
enum profd_offcpu_stat {
	PROFD_OSTAT_SWITCHES = 0,	/* switch-outs of target threads, blocked (or preempted,
					 * while a wall-clock session runs) */
	PROFD_OSTAT_KEPT,		/* of them kept: stacks taken */
	PROFD_OSTAT_LOST_RINGBUF,	/* kept, but the ring was full */
	PROFD_OSTAT_NO_UREGS,		/* no user registers found: kernel stack only */
	PROFD_OSTAT_LOST_THREADS,	/* a wait in progress lost with its slot (above) */
	PROFD_OSTAT_NR,
};

/*
 * offcpu_threads: an array of slots in sets of two, tid's set being tid
 * modulo the sets; its size a power of two sized from pid_max at load
 * (cpu/cpu_bpf.c), at most this many slots (6 MiB of kernel memory, 1.5
 * at pid_max 32768, where the LRU hash it replaced took 7.5 MiB whatever
 * pid_max was).  Up to pid_max 131072 a set holds every tid that maps to
 * it.  Above (systemd sets 4194304), a third thread of a set takes the
 * slot of one on CPU; if both wait, it takes the first's, whose wait is
 * lost (counted, PROFD_OSTAT_LOST_THREADS).
 */
#define PROFD_OFFCPU_SLOTS_MAX 131072
/* The key of way (0 or 1) of tid's set; set_mask: the sets less one. */
#define PROFD_OFFCPU_KEY(tid, set_mask, way) (((tid) & (set_mask)) * 2 + (way))

/* Thread state, offcpu_threads' value: kernel only. */
struct profd_offcpu_thread {
	__u64 off_ns;		/* when it went off CPU blocked; 0: on CPU or not watched */
	__u64 mean_ns;		/* its recent off-CPU time, an exponential mean */
	__u32 tid;		/* whose slot it is (0: nobody's yet) */
	__u32 pid;		/* and its process's: another's is another thread */
	__u32 p;		/* the kept probability of the switch in progress; 0: not kept */
	__u32 epoch;		/* offcpu_epoch when it went off CPU: older is stale */
	__u32 wait_event;	/* the wait event of the kept switch in progress */
	__u32 long_mean_us;	/* the recent mean of its waits in a postgres class that
				 * may be long (Lock, BufferPin, Timeout), kept apart: such
				 * waits differ from its others by orders of magnitude.  In
				 * microseconds (71 min), so that the slot stays 48 bytes */
	__u16 seq;		/* its kept switches, mod 65536 */
	__u16 flags;		/* PROFD_OE_* of the kept switch in progress */
	__u16 pg_major;
	__u16 in_long;		/* the switch in progress is one of long_mean_us's */
};

#endif
