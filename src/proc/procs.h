/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * procs: what profd knows about each process it has been told of: its
 * executable mappings, its executable's identity and its name, read from
 * /proc while it is alive so that samples of processes that have since
 * exited can still be symbolized and attributed.  A forked child shares its
 * parent's mappings until it is read on its own (postgres backends are
 * forked, never exec'd).
 *
 * Bounded: at most `max` processes, exited ones evicted first, then the
 * least recently used, and exited ones dropped once no profile can still
 * need them (procs__expire); /proc/PID/maps is read up to
 * PROCS_MAPS_MAX_BYTES and PROCS_MAPS_MAX_ENTRIES executable mappings (or
 * the configured limits), since any local user can make a process with
 * millions of mappings.  A cut maps file is logged once per process, and
 * read again at most every 30 s rather than every second.
 *
 * Single-threaded: every call from the thread that owns it.
 */
#ifndef PROFD_PROCS_H
#define PROFD_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROCS_DEFAULT_MAX 16384
#define PROCS_MAPS_MAX_BYTES (4u << 20)
#define PROCS_MAPS_MAX_ENTRIES 8192
#define PROCS_NAME_LEN 16	/* TASK_COMM_LEN */

/* The vDSO's mapping has this path, device and inode 0 (see lib/mapped_file.h). */
#define PROC_MAP_VDSO "[vdso]"

struct proc_map {
	uint64_t start;
	uint64_t end;
	uint64_t offset;
	uint64_t dev;	/* makedev(major, minor) from the maps line */
	uint64_t ino;
	char *path;
	/* Another file (or another part of this one) was mapped here earlier
	 * in the same exec generation: an address here may be from either,
	 * so no frame is named from it (proc_maps__merge). */
	bool replaced;
};

/* Immutable once built; shared (refcounted) between forked processes and
 * held by profile builds while they use it. */
struct proc_maps {
	int refcnt;
	size_t n;
	struct proc_map *m;	/* sorted by start */
	bool truncated;		/* the maps file was larger than the limits */
};

/* The executable a process runs, as /proc/PID/exe shows it. */
struct proc_exe {
	uint64_t dev;		/* st_dev of stat("/proc/PID/exe") */
	uint64_t ino;
	const char *path;	/* as the process sees it, " (deleted)" removed */
	const char *name;	/* its last component */
};

struct procs;

struct procs *procs__new(size_t max);
/* Change the bounds (0: the default); evicts down to max at once. */
void procs__set_limits(struct procs *ps, size_t max, size_t maps_bytes, size_t maps_entries);
void procs__free(struct procs *ps);

/*
 * A process's mappings change at exec; the kernel side counts its execs
 * (exec_seq) and stamps samples with the count, so a sample taken before
 * an exec (a forked child still in its parent's code, a process inside
 * execve) is symbolized with the mappings it had then.  Each process keeps
 * its current and its previous generation.  PROCS_SEQ_LATEST: the newest.
 */
#define PROCS_SEQ_LATEST UINT32_MAX

/*
 * Where the kernel's count of pid's execs can be read: fn returns it, or
 * PROCS_SEQ_LATEST when it has none for pid.  With it, a maps read is kept
 * only for the generation the process was in throughout the read.
 */
typedef uint32_t (*procs_seq_fn)(void *ctx, int pid);
void procs__set_seq_source(struct procs *ps, procs_seq_fn fn, void *ctx);

/*
 * Read pid's mappings, executable and name now, as generation seq; or, when
 * ppid is non-zero (pid was just forked from it), take its parent's, which
 * are its own at fork whatever it has done since.  comm (may be NULL) names
 * it when /proc can no longer tell.  Returns 0, or negative errno when
 * nothing could be recorded.  When pid is no longer in generation seq (it
 * exec'd again), that generation keeps no mappings; the one it is in now
 * is read instead, unless it is held already (-ESTALE then).
 */
int procs__snapshot(struct procs *ps, int pid, int ppid, const char *comm, uint32_t seq);

/*
 * Mark pid's current mappings as read right after exec: ld.so has mapped
 * only itself and the executable, so the first address outside them reads
 * the maps again at once rather than after the once-a-second limit.
 */
void procs__provisional(struct procs *ps, int pid);

/*
 * The mappings for pid in generation seq: the recorded ones, or read now
 * if the process is alive and unknown.  NULL if unknown.  Valid until the
 * next procs__ call, unless the caller takes a reference with
 * proc_maps__get().
 */
const struct proc_maps *procs__maps(struct procs *ps, int pid, uint32_t seq);

/*
 * Like procs__maps, but if addr lies in no recorded mapping of the current
 * generation (a library was dlopen'd since), read the maps again, at most
 * once a second per process.
 */
const struct proc_maps *procs__maps_for(struct procs *ps, int pid, uint32_t seq, uint64_t addr);

/* pid's executable, read now if not yet known.  -ESRCH if unknown and gone. */
int procs__exe(struct procs *ps, int pid, struct proc_exe *out);

/* pid's name (the thread group leader's comm), or NULL. */
const char *procs__name(struct procs *ps, int pid);

/* The whole process exited: its entry goes first when room is needed. */
void procs__exited(struct procs *ps, int pid);

/* Drop the processes that exited before before_ns (CLOCK_MONOTONIC): the
 * caller knows no profile holds samples older than that. */
void procs__expire(struct procs *ps, int64_t before_ns);

/*
 * Like procs__maps, but never reads /proc: for building a profile after
 * the fact, when pid may have exited and been reused by another process
 * whose mappings must not name this one's samples.
 */
const struct proc_maps *procs__maps_known(struct procs *ps, int pid, uint32_t seq);

/* The mapping holding addr, or NULL. */
const struct proc_map *proc_maps__find(const struct proc_maps *pm, uint64_t addr);

/* Parse the text of a /proc/PID/maps file, at most max_entries executable
 * file mappings (exported for the unit tests and the fuzzer). */
int proc_maps__parse(const char *text, size_t len, size_t max_entries, struct proc_maps **out);
/*
 * pm is a new read of a process whose mappings in the same exec generation
 * were old.  Samples already taken may hold addresses of text unmapped
 * since: an old mapping that no new one overlaps is kept in pm (no code
 * runs there now, so an address in it is from before), up to max_entries.
 * A new mapping over an old one of another file or offset is marked
 * replaced.  0 or -ENOMEM (pm is then as read).
 */
int proc_maps__merge(const struct proc_maps *old, struct proc_maps *pm, size_t max_entries);
struct proc_maps *proc_maps__get(const struct proc_maps *pm);
void proc_maps__put(const struct proc_maps *pm);

struct procs_stats {
	size_t processes;
	size_t max;		/* the bound on processes */
	size_t exited;
	size_t maps_bytes;	/* estimated bytes held by snapshots */
	uint64_t evictions;
	uint64_t truncated;	/* maps files cut at the limits */
	uint64_t maps_reads;	/* /proc/PID/maps files read */
	uint64_t overtaken;	/* reads not kept: the process had exec'd again */
};

void procs__stats(const struct procs *ps, struct procs_stats *st);

#endif
