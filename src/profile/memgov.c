// SPDX-License-Identifier: BSD-2-Clause
/*
 * memgov: max_memory_mb: measures the daemon's memory, evicts from the
 * symbol caches, then has them symbolize without DWARF (the contract:
 * memgov.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "profile/builder.h"
#include "profile/memgov.h"
#include "symbolizer/symbolizer.h"

/*
 * Of the limit, what each symbol cache's estimate may reach unless
 * symbol_cache_bytes says otherwise: the estimate undercounts by 1.3 to
 * 2.5 times (39 MB estimated at ~85 MB anonymous under churn), so a half
 * and an eighth leave room for the rest.  A quarter was tried: under the
 * compute simulation's churn the builder's working set (libc's and
 * libpython's DWARF, ~27 MB estimated) did not fit, objects were evicted
 * and reloaded within every build, and a 20 s profile took 23-97 ms of CPU
 * to build instead of 9-45.
 */
#define MEMGOV_SYM_SHARE 2
#define MEMGOV_UNWIND_SHARE 8
/*
 * Each eviction leaves a cache this percent of what it held, but never a
 * bound under 1/MEMGOV_FLOOR_SHARE of its usual one.  Without the floor,
 * every check still over the limit halved the bound again: under the
 * compute simulation's churn at --max-memory 24 the builder's cache ended
 * at one object, every build reopened the other ~38 (up to 1.97 s of CPU
 * for a 20 s profile), and the daemon took 3.9% of a CPU at 20.8 MiB, under
 * its limit, for as long as the pressure lasted.
 */
#define MEMGOV_SHRINK_PERCENT 50
#define MEMGOV_FLOOR_SHARE 4
/*
 * Pressure lasts at least this long, then ends once under
 * MEMGOV_RESUME_PERCENT: coarse mode alone takes the daemon far under the
 * limit (48 -> 8 MiB with six copies of libc's DWARF), so without it every
 * build would overshoot again.  Doubles each time pressure comes back.
 */
#define MEMGOV_DWELL_MIN_NS (60 * 1000000000ll)
#define MEMGOV_DWELL_MAX_NS (3600 * 1000000000ll)
/* Start-up: what the kernel's symbols (~6 MiB) and the first objects'
 * symbol tables take on top of what the daemon holds when it starts. */
#define MEMGOV_RUN_HEADROOM (16u << 20)

enum memgov_state {
	MEMGOV_OK,
	MEMGOV_EVICTED,	/* over once: the caches' bounds are lowered */
	MEMGOV_COARSE,	/* over again: no DWARF either */
};

struct memgov {
	struct memgov_opts o;
	struct event *timer;
	size_t sym_bytes, unwind_bytes;	/* the caches' bounds, when not under pressure */
	enum memgov_state state;
	/* A job is queued on the builder; no other check acts until it is done. */
	bool busy;
	/* For the job, set before it is submitted: */
	enum memgov_state next;
	uint64_t before;		/* bytes used when the check found it over */
	size_t caches_before;		/* and the symbol caches' estimate then */
	uint64_t pressure, freed;
	int64_t dwell_ns;		/* how long the next pressure lasts at least */
	int64_t until_ns;		/* the current one's end, at the earliest */
};

/*
 * What max_memory_mb limits: RssAnon + RssShmem.  Anonymous pages are the
 * heap (DWARF libdw decompressed, its per-CU caches, every table of ours,
 * what malloc keeps free) and shared memory the memfd copies of debug files
 * not owned by root: both are the daemon's until it frees them, and its
 * caches decide how much there is.  File pages are left out: the binary and
 * its libraries (~17 MiB from start-up, whatever the limit) and the debug
 * files libdwfl maps, clean pages the kernel can take back.  statm's
 * "shared" column would be a shorter read but lumps shared memory in with
 * files.  One read of ~1.5 KB, every few seconds.
 */
uint64_t memgov__used_bytes(void)
{
	static const char *const keys[] = {"\nRssAnon:", "\nRssShmem:"};
	char buf[4096];
	uint64_t kb = 0;
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *p = strstr(buf, keys[i]);

		if (p)
			kb += strtoull(p + strlen(keys[i]), NULL, 10);
	}
	return kb << 10;
}

static double mib(uint64_t bytes)
{
	return bytes / 1048576.0;
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* On the builder thread: the only place sym is changed after start-up. */
static int reclaim_run(void *arg)
{
	struct memgov *g = arg;

	if (g->next == MEMGOV_OK) {
		symbolizer__set_coarse(g->o.sym, false);
		symbolizer__set_limits(g->o.sym, g->sym_bytes, g->o.max_objects);
		return 0;
	}
	if (g->next == MEMGOV_COARSE && !symbolizer__coarse(g->o.sym)) {
		/* Dropping DWARF is the lever: without it the objects hold their
		 * symbol tables only, so the bound the eviction halved comes back
		 * and a profile's objects fit again. */
		symbolizer__set_coarse(g->o.sym, true);
		symbolizer__set_limits(g->o.sym, g->sym_bytes, g->o.max_objects);
	} else {
		symbolizer__shrink(g->o.sym, MEMGOV_SHRINK_PERCENT,
				   g->sym_bytes / MEMGOV_FLOOR_SHARE);
	}
	/* Every arena, the loop's too: free() keeps what it can reuse. */
	malloc_trim(0);
	return 0;
}

/* Back on the loop: measure what the eviction gave, say so once per change. */
static size_t caches_bytes(const struct memgov *g)
{
	return symbolizer__cache_bytes(g->o.sym) + symbolizer__cache_bytes(g->o.unwind_sym);
}

static void reclaim_done(void *arg, int err)
{
	struct memgov *g = arg;
	uint64_t used;

	g->busy = false;
	if (err)
		return;	/* -ECANCELED: shutting down */
	if (g->next == MEMGOV_OK) {
		log__info("memory: %.1f MiB, under %d%% of max_memory_mb %zu: symbol caches "
			  "back to their bounds%s", mib(memgov__used_bytes()),
			  MEMGOV_RESUME_PERCENT, g->o.limit_bytes >> 20,
			  g->state == MEMGOV_COARSE ? ", with DWARF" : "");
		g->state = MEMGOV_OK;
		return;
	}
	used = memgov__used_bytes();
	if (used < g->before)
		g->freed += g->before - used;
	if (g->next == MEMGOV_EVICTED && g->state == MEMGOV_OK)
		log__warn("memory: %.1f MiB, over max_memory_mb %zu: evicted from the symbol "
			  "caches (estimated %.1f -> %.1f MiB) and gave free heap back: now %.1f MiB",
			  mib(g->before), g->o.limit_bytes >> 20, mib(g->caches_before),
			  mib(caches_bytes(g)), mib(used));
	else if (g->next == MEMGOV_COARSE && g->state != MEMGOV_COARSE)
		log__warn("memory: still %.1f MiB, over max_memory_mb %zu: symbolizing without "
			  "DWARF (function names from symbol tables, no lines or inlined frames) "
			  "for %.0f s at least, then until under %d%%; now %.1f MiB", mib(g->before),
			  g->o.limit_bytes >> 20, (g->until_ns - clock__mono_ns()) / 1e9,
			  MEMGOV_RESUME_PERCENT, mib(used));
	g->state = g->next;
}

/* Queue what the builder's symbolizer must do; the loop's own is done now. */
static void reclaim(struct memgov *g, enum memgov_state next, uint64_t used)
{
	int err;

	g->next = next;
	g->before = used;
	g->caches_before = caches_bytes(g);
	if (next == MEMGOV_OK)
		symbolizer__set_limits(g->o.unwind_sym, g->unwind_bytes, g->o.max_objects);
	else
		symbolizer__shrink(g->o.unwind_sym, MEMGOV_SHRINK_PERCENT,
				   g->unwind_bytes / MEMGOV_FLOOR_SHARE);
	g->busy = true;
	err = builder__submit(g->o.builder, reclaim_run, reclaim_done, g);
	if (err) {
		g->busy = false;
		log__warn("memory: cannot queue the eviction: %s", strerror(-err));
	}
}

void memgov__check(struct memgov *g)
{
	uint64_t used, limit;

	if (!g || !g->o.limit_bytes || g->busy)
		return;
	limit = g->o.limit_bytes;
	used = memgov__used_bytes();
	if (used > limit) {
		if (g->state == MEMGOV_OK) {
			g->until_ns = clock__mono_ns() + g->dwell_ns;
			if (g->dwell_ns < MEMGOV_DWELL_MAX_NS)
				g->dwell_ns *= 2;
		}
		g->pressure++;
		/* Evicting first, since the names stay as good; DWARF goes only
		 * when evicting was not enough, and each check over the limit
		 * evicts again. */
		reclaim(g, g->state == MEMGOV_OK ? MEMGOV_EVICTED : MEMGOV_COARSE, used);
	} else if (g->state != MEMGOV_OK && used < limit / 100 * MEMGOV_RESUME_PERCENT &&
		   clock__mono_ns() >= g->until_ns) {
		reclaim(g, MEMGOV_OK, used);
	}
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	memgov__check(arg);
}

int memgov__new(struct event_base *base, const struct memgov_opts *opts, struct memgov **out)
{
	struct timeval tv = {MEMGOV_CHECK_S, 0};
	struct memgov *g = calloc(1, sizeof(*g));
	size_t limit = opts->limit_bytes;
	uint64_t used;

	if (!g)
		return -ENOMEM;
	g->o = *opts;
	g->dwell_ns = MEMGOV_DWELL_MIN_NS;
	g->sym_bytes = g->unwind_bytes = opts->sym_bytes ?: SYMBOLIZER_DEFAULT_MAX_BYTES;
	if (limit && !opts->sym_bytes) {
		g->sym_bytes = min_size(g->sym_bytes, limit / MEMGOV_SYM_SHARE);
		g->unwind_bytes = min_size(g->unwind_bytes, limit / MEMGOV_UNWIND_SHARE);
	}
	if (limit) {
		g->timer = event_new(base, -1, EV_PERSIST, on_timer, g);
		if (!g->timer || event_add(g->timer, &tv)) {
			memgov__free(g);
			return -ENOMEM;
		}
		used = memgov__used_bytes();
		if (used + MEMGOV_RUN_HEADROOM > limit)
			log__warn("memory: max_memory_mb %zu is below what the daemon needs to run: "
				  "%.1f MiB at start, and ~%u MiB more for the kernel's symbols and "
				  "the first objects; it will run over the limit, evicting and "
				  "symbolizing coarsely", limit >> 20, mib(used),
				  MEMGOV_RUN_HEADROOM >> 20);
	}
	symbolizer__set_limits(opts->sym, g->sym_bytes, opts->max_objects);
	symbolizer__set_limits(opts->unwind_sym, g->unwind_bytes, opts->max_objects);
	*out = g;
	return 0;
}

void memgov__stats(struct memgov *g, struct memgov_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->used_bytes = memgov__used_bytes();
	if (!g)
		return;
	st->limit_bytes = g->o.limit_bytes;
	st->pressure = g->pressure;
	st->freed_bytes = g->freed;
	st->coarse = g->state == MEMGOV_COARSE;
}

void memgov__free(struct memgov *g)
{
	if (!g)
		return;
	if (g->timer)
		event_free(g->timer);
	free(g);
}
