/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uprobe_event: uprobes made in tracefs (uprobe_events), one kernel probe
 * each, and perf events on them for one process and the children it forks.
 *
 * Why not libbpf's per-process uprobes: each of those is a probe of its
 * own (a uprobe consumer), so a hit runs every attached process's filter;
 * and a forked child is not covered until the daemon hears of the fork.
 * One tracefs probe has one consumer, however many processes have perf
 * events on it; its filter accepts exactly their memory, so the kernel
 * puts breakpoints nowhere else; and a perf event opened with inherit
 * follows forks from the child's first instruction (the kernel relies on
 * the breakpoints that fork copies, trace_uprobe_filter_add).  A BPF
 * program attached to any one perf event of a probe runs on every hit
 * that the filter accepts (trace_call_bpf runs the probe's prog_array).
 */
#ifndef PROFD_UPROBE_EVENT_H
#define PROFD_UPROBE_EVENT_H

#include <stdbool.h>
#include <stdint.h>

/* This daemon's group of events in tracefs: "profd_<pid>". */
const char *uprobe_event__group(void);

/*
 * Make a probe named name (letters, digits, '_') in this daemon's group on
 * the file open as fd (resolved by the kernel as /proc/self/fd/N, so the
 * probe is on that very file, whatever its path is now), at file offset
 * offset; ret: on the function's return.  Returns the event's id (> 0) or
 * negative errno.
 */
int uprobe_event__create(const char *name, int fd, uint64_t offset, bool ret);

/* Remove a probe made by uprobe_event__create: 0 or negative errno
 * (-EBUSY while perf events are open on it). */
int uprobe_event__remove(const char *name);

enum uprobe_event_flags {
	/* And every child it forks from then on, from the child's first
	 * instruction.  Closing the event removes the children's too. */
	UPROBE_EVENT_INHERIT = 1,
	/*
	 * pid has not mapped the file yet: the kernel writes the breakpoints
	 * when it does (uprobe_mmap), and opening skips the walk over every
	 * process mapping the file (trace_uprobe_filter_add: enable_on_exec),
	 * so it takes microseconds, not milliseconds.  If pid had mapped it
	 * already, it gets no breakpoint there.
	 */
	UPROBE_EVENT_UNMAPPED = 2,
};

/*
 * A perf event on probe id for process pid alone (its memory: every
 * thread of it), with enum uprobe_event_flags.  Returns the fd or
 * negative errno (-ESRCH: pid is gone).
 */
int uprobe_event__open(int id, int pid, unsigned int flags);

/*
 * A disabled dummy event on pid that its children do not inherit, so that
 * their perf contexts are not marked as clones of pid's: the kernel swaps
 * clones between tasks at a context switch instead of switching their
 * events (perf_event_context_sched_out), and the uprobe filter matches an
 * event's own task, so a child that exited holding a sibling's swapped
 * events took that sibling's breakpoints with it (seen on 6.18: 1 child
 * in 60 to 1 in 4 untracked when many run at once).  Returns the fd or
 * negative errno.
 */
int uprobe_event__noclone(int pid);

/*
 * Remove the groups a daemon left behind when it died (profd_<pid> of a
 * pid that is gone or is no profd).  The number of probes removed.
 */
int uprobe_event__clean_stale(void);

#endif
