/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memgov: holds profd serve to max_memory_mb (--max-memory).
 *
 * The caches' own bounds are estimates (symbol_cache_bytes counts what an
 * object should hold; libdw's decompressed sections, its per-CU caches and
 * malloc's fragmentation come on top, ~2.5 times as much under churn), so
 * the governor measures what the daemon really holds and acts on that:
 *
 *   over the limit      evict: both symbol caches to half of what they hold,
 *                       then malloc_trim(0), so the pages go back to the kernel;
 *   over again          coarsen: the builder's symbolizer loads no DWARF
 *                       (names from symbol tables; no lines, no inlined frames),
 *                       and its bound comes back, since symbol tables alone fit;
 *   over, coarse        evict again, each cache down to a quarter of its usual
 *                       bound at least: below that a build reopens its objects
 *                       every time, and the limit costs CPU without end;
 *   under 70% of it     the caches' bounds and DWARF come back, once pressure
 *                       has lasted a minute (doubling each time it returns, up
 *                       to an hour): coarse mode alone takes the daemon far
 *                       under the limit, and would otherwise flap.
 *
 * It checks every MEMGOV_CHECK_S seconds on the loop, and after each profile
 * build (memgov__check).  The builder's symbolizer is changed by a job on
 * the builder thread, never from the loop.  One log line per change of
 * state; the counts are in memgov__stats() for /metrics.
 */
#ifndef PROFD_MEMGOV_H
#define PROFD_MEMGOV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct builder;
struct event_base;
struct memgov;
struct symbolizer;

#define MEMGOV_CHECK_S 5
/* --max-memory and max_memory_mb: MiB of anonymous memory the daemon holds
 * itself to, MEMGOV_MAX_MEMORY_MIN..MAX, or 0 for no limit.  Below the
 * minimum the daemon could not even hold the kernel's symbols. */
#define MEMGOV_MAX_MEMORY_DEFAULT 128
#define MEMGOV_MAX_MEMORY_MIN 8
#define MEMGOV_MAX_MEMORY_MAX (1L << 20)
#define MEMGOV_MAX_MEMORY_NONE ((size_t)-1)	/* what 0 (no limit) is stored as */
#define MEMGOV_RESUME_PERCENT 70	/* back to normal under this much of the limit */

struct memgov_opts {
	size_t limit_bytes;		/* 0: no limit (memgov only measures) */
	struct builder *builder;	/* sym is changed only by jobs run there */
	struct symbolizer *sym;		/* the builder thread's */
	struct symbolizer *unwind_sym;	/* the loop's */
	/* Each cache's byte bound (config symbol_cache_bytes), as given; 0:
	 * the default, within a share of the limit. */
	size_t sym_bytes;
	size_t max_objects;		/* and on objects (0: default) */
};

struct memgov_stats {
	uint64_t limit_bytes;		/* 0: none */
	uint64_t used_bytes;		/* what the limit applies to, now */
	uint64_t pressure;		/* checks that found the daemon over its limit */
	uint64_t freed_bytes;		/* measured drop across those checks' evictions */
	bool coarse;			/* symbolizing without DWARF */
};

/*
 * Set both symbolizers' bounds (see sym_bytes), and start
 * the timer.  Call before any job is submitted to the builder: it sets the
 * builder's symbolizer from this thread.  Warns when the limit is below what
 * the daemon needs just to run.  0 or negative errno.
 */
int memgov__new(struct event_base *base, const struct memgov_opts *opts, struct memgov **out);
/* Measure now, and evict or coarsen if over the limit.  On the loop. */
void memgov__check(struct memgov *g);
void memgov__stats(struct memgov *g, struct memgov_stats *st);
/* Anonymous and shared-memory resident bytes of this process: what
 * max_memory_mb limits (see memgov.c).  0 if unreadable. */
uint64_t memgov__used_bytes(void);
/* After builder__free(): a job of its own may be queued there.  NULL is fine. */
void memgov__free(struct memgov *g);

#endif
