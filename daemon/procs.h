/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * procs: snapshots of processes' executable mappings, taken while they are
 * alive so that samples of processes that have since exited can still be
 * symbolized.  A forked child shares its parent's snapshot until it is
 * read on its own (postgres backends are forked, never exec'd).
 *
 * Bounded: at most `max` processes; the least recently used are evicted.
 */
#ifndef PROFD_PROCS_H
#define PROFD_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proc_map {
	uint64_t start;
	uint64_t end;
	uint64_t offset;
	uint64_t dev;	/* makedev(major, minor) from the maps line */
	uint64_t ino;
	char *path;
};

/* Immutable once built; shared (refcounted) between forked processes. */
struct proc_maps {
	int refcnt;
	size_t n;
	struct proc_map *m;	/* sorted by start */
};

struct procs;

struct procs *procs__new(size_t max);
void procs__free(struct procs *ps);

/*
 * Read /proc/PID/maps now.  If the process is already gone, and ppid is
 * non-zero, it inherits the parent's snapshot (it was forked from it).
 * Returns 0, or negative errno when nothing could be recorded.
 */
int procs__snapshot(struct procs *ps, int pid, int ppid);

/* Drop pid's snapshot (e.g. it exec'd) so the next lookup reads afresh. */
void procs__forget(struct procs *ps, int pid);

/*
 * The snapshot for pid: the recorded one, or one read now if the process
 * is alive.  NULL if unknown.  Valid until the next procs__ call.
 */
const struct proc_maps *procs__get(struct procs *ps, int pid);

/*
 * Like procs__get, but if addr lies in no recorded mapping (a library was
 * dlopen'd since), read the maps again, at most once a second per process.
 */
const struct proc_maps *procs__get_for(struct procs *ps, int pid, uint64_t addr);

/* The mapping holding addr, or NULL. */
const struct proc_map *proc_maps__find(const struct proc_maps *pm, uint64_t addr);

/* Parse the text of a /proc/PID/maps file (exported for unit tests). */
int proc_maps__parse(const char *text, struct proc_maps **out);
void proc_maps__put(struct proc_maps *pm);

size_t procs__count(const struct procs *ps);

#endif
