/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * titles: each sampled process's title labels (proc/proctitle.h), read
 * from /proc/PID/cmdline and /proc/PID/comm and kept, so that a process
 * that has exited by the time its profile is built (a pgbench -C backend)
 * is still labelled.
 *
 * Reads are rate-limited, never one per sample: a process is read when it
 * is first looked up (at its first sample), and again only when its entry
 * is older than the
 * re-read interval (a title changes: a backend forked from the postmaster
 * sets its own right after start-up, an autovacuum worker names its
 * database once it has picked one) or has been marked stale (the pid was
 * reused).  A process whose title changes keeps the labels of its latest
 * read.
 *
 * A process gone before it is read (a pgbench -C backend lives ~5 ms; its
 * samples are drained up to 800 ms later) is labelled from the title the
 * kernel side read as it called exit_group (titles__exit_title), kept for
 * the last TITLES_EXITS processes.  And a postgres process's first sample
 * comes with its title, read by the kernel side in its context
 * (titles__live_title): that is its first read, with no /proc read at all;
 * /proc is read only for the re-reads of one sampled for longer.  Where that hook is missing (no
 * syscall tracepoints), forks are watched instead: read a few times right
 * after they are forked (titles__watch), which costs three reads per fork
 * whether or not the process is ever sampled.
 * Two titles are known to change within milliseconds, and are read again
 * after TITLES_PROVISIONAL_NS: a postgres child that still shows the
 * postmaster's command line (forked, not titled yet: its parent is a
 * postgres process), which gets no labels until then, and an autovacuum
 * worker that has not picked its database yet.
 *
 * Bounded: at most `max` processes, the least recently looked-up evicted
 * (a quarter at a time); at most PROCTITLE_SCAN_MAX bytes of a title read.
 * Single-threaded: every call from the thread that owns it.
 */
#ifndef PROFD_TITLES_H
#define PROFD_TITLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc/proctitle.h"

#define TITLES_MAX 16384
/* Postgres binaries remembered as believed (pgexe.h): a few installed
 * major versions. */
#define TITLES_PG_KNOWN 4
#define TITLES_COMM_MAX 16	/* TASK_COMM_LEN */
#define TITLES_REREAD_NS 1000000000ll	/* at most one read a second per process */
#define TITLES_WATCH_MAX 1024
#define TITLES_POLL_MAX 64	/* titles read by one titles__poll() */
/* A forked postgres child has its title within ms (more on a loaded machine):
 * read at 5, 15 and 50 ms. */
#define TITLES_WATCH_STEPS 3
#define TITLES_WATCH_FIRST_NS 5000000ll
#define TITLES_WATCH_NS {TITLES_WATCH_FIRST_NS, 15000000ll, 50000000ll}

/* Exit titles kept for processes not looked up yet: at 100 exits a second,
 * 10 s of them, against samples drained within 100 ms. */
#define TITLES_EXITS 1024
#define TITLES_EXIT_TITLE_MAX 128	/* = PROFD_TITLE_MAX, the kernel side's */

/* A title about to change (see above): read again after this. */
#define TITLES_PROVISIONAL_NS 10000000ll
/* An event this soon after a process's exit_group is its own (see
 * titles__stale). */
#define TITLES_SAME_PROCESS_NS 1000000000ll

struct titles;

/* proc_root: "/proc", or a directory laid out like it (tests).  Copied. */
struct titles *titles__new(const char *proc_root, size_t max, int64_t reread_ns);
void titles__free(struct titles *t);

/*
 * pid's labels (all empty when its title matches no rule), read now if
 * pid is unknown, stale, or was read more than reread_ns before now_ns.
 * A failed re-read (the process exited) keeps what was read before.  NULL
 * if pid was never read, or on allocation failure.  Valid until the next
 * titles__ call.
 */
const struct proctitle *titles__get(struct titles *t, int pid, int64_t now_ns);
/* The same, where the caller knows the process's name (its comm, at most
 * TITLES_COMM_MAX bytes; the main thread's, as a sample of it says):
 * /proc/PID/comm is not read then.  NULL: read it. */
const struct proctitle *titles__get_named(struct titles *t, int pid, const char *comm,
					  int64_t now_ns);

/*
 * pid was just forked from a process of interest: read its title soon
 * (TITLES_WATCH_NS[] after now_ns), rather than when its first sample is
 * drained, which may be after it exited (a pgbench -C backend, an
 * autovacuum worker).  At most TITLES_WATCH_MAX forks are watched at once;
 * past that the fork is left to the sample path.
 */
void titles__watch(struct titles *t, int pid, int64_t now_ns);
/* Read the watched titles due by now_ns, at most TITLES_POLL_MAX of them.
 * The next due time (now_ns if some due ones were left), or -1 if none. */
int64_t titles__poll(struct titles *t, int64_t now_ns);

/*
 * pid's title as it exited at exit_ns (CLOCK_MONOTONIC; its comm, and its
 * title up to the first NUL, at most len bytes; forked: a forked child,
 * whose parent's command line is no title of its own): its labels from now
 * on, if it has an entry without them or with provisional ones; kept
 * otherwise for its first lookup.
 */
void titles__exit_title(struct titles *t, int pid, const char *comm, const char *title,
			size_t len, bool forked, int64_t exit_ns);
/*
 * pid's title as the kernel side read it at its first sample, at read_ns
 * (CLOCK_MONOTONIC), alive; the arguments as titles__exit_title's.  Its
 * first read, for an entry that has none (or provisional labels, or a
 * stale one): the process stays alive to the table, read again from /proc
 * after the re-read interval like any other.  Believed as an exit title
 * is: only a postgres binary's children have a title area (pgexe.h).
 */
void titles__live_title(struct titles *t, int pid, const char *comm, const char *title,
			size_t len, bool forked, int64_t read_ns);

/*
 * pid may be a new process (fork, exec, pid reuse, first seen) as of
 * event_ns: read it again on the next get.  Not when that is less than
 * TITLES_SAME_PROCESS_NS after its exit title: the process that exited is
 * being sampled as it tears down, and its exit title stays its labels.
 * event_ns 0: unconditionally.
 */
void titles__stale(struct titles *t, int pid, int64_t event_ns);
/* pid exited (reported at now_ns, CLOCK_MONOTONIC): keep its labels, and
 * never try to read it again until stale. */
void titles__exited(struct titles *t, int pid, int64_t now_ns);
/*
 * Drop the processes whose exit was reported before before_ns: the caller
 * knows no profile still to be built holds their samples.  Without this a
 * host that forks a backend per connection fills the table with the dead
 * (~240 bytes each) up to its bound.  Processes whose exit was never
 * reported stay until evicted.
 */
void titles__expire(struct titles *t, int64_t before_ns);

struct titles_stats {
	size_t processes;
	uint64_t reads;		/* /proc reads, successful or not */
	uint64_t evictions;
	uint64_t expired;	/* dropped by titles__expire: exited, no profile needs them */
	uint64_t watch_full;	/* forks not watched: the watch list was full */
	uint64_t exit_titles;	/* titles reported at exit_group */
	uint64_t exit_titles_used;	/* of those, labels of a process looked up */
	uint64_t live_titles;		/* titles reported at a first sample */
	uint64_t live_titles_used;	/* of those, a process's first read */
	uint64_t not_postgres;	/* postgres-like titles of processes not running postgres */
	uint64_t pg_known;	/* of the believed, those running a binary believed before */
};

void titles__stats(const struct titles *t, struct titles_stats *st);

#endif
