/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * procstat: one process's /proc/PID/stat, parsed (proc(5)).  The line is
 * "PID (COMM) STATE PPID ...", and COMM is whatever the process named
 * itself: spaces, parentheses and ')' included.  So the fields are counted
 * from the last ')', never split from the start.  One parser for every
 * reader (the title rules' parent check, the postmaster scan, the kernel
 * side's title areas, the heap's start times), so a hostile comm is
 * handled, and tested, once.
 */
#ifndef PROFD_PROC_PROCSTAT_H
#define PROFD_PROC_PROCSTAT_H

#define PROCSTAT_COMM_MAX 64	/* a workqueue worker's shows more than TASK_COMM_LEN */

#define PROCSTAT_PF_EXITING 0x4	/* include/linux/sched.h: PF_EXITING */

struct procstat {
	char comm[PROCSTAT_COMM_MAX];	/* NUL-terminated, cut to fit */
	char state;			/* R, S, D, Z, ... */
	int ppid;
	/* Field 9: the kernel's PF_* flags, PROCSTAT_PF_EXITING among them
	 * from a process's exit until it is reaped. */
	unsigned long flags;
	unsigned long long starttime;	/* field 22: clock ticks after boot */
	/* Field 48 (since 3.5): where its argument area (the title) starts;
	 * 0 where the reader may not see it. */
	unsigned long long arg_start;
};

/* Parse a NUL-terminated stat line into out: 0, or -EINVAL if it is not
 * one (fields missing after the state and parent are left 0). */
int procstat__parse(const char *line, struct procstat *out);

/* Read and parse PROC_ROOT/PID/stat: 0, a negative errno (-ENOENT: gone),
 * or -EINVAL. */
int procstat__read(const char *proc_root, int pid, struct procstat *out);

#endif
