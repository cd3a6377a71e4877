/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * debuginfod: debug files fetched by build ID from the servers named in
 * DEBUGINFOD_URLS (elfutils' libdebuginfod), for objects that have none on
 * this machine.  Off, and no thread started, when DEBUGINFOD_URLS is unset
 * or empty.
 *
 * A fetch is a network transfer that can take minutes or never end, and
 * the symbolizer runs inside the daemon's event loop, so nothing here ever
 * waits for one.  debuginfod__request() answers from what is known now:
 * found (a path in libdebuginfod's cache), failed, or pending, in which
 * case it queues the build ID and returns at once.  One worker thread
 * fetches the queued IDs one by one; it touches nothing but its queue and
 * results, under a mutex that no one holds across a fetch, so a caller
 * waits at most for a few hash lookups.
 *
 * Every fetch has a time limit (DEBUGINFOD_MAXTIME, else
 * DEBUGINFOD_DEFAULT_LIMIT_S): libdebuginfod calls our progress function at
 * least once a second, and it cuts the transfer off once the limit has
 * passed, or at once when the module is freed.  A failed build ID is not
 * asked again for DEBUGINFOD_RETRY_S, and a server that didn't answer at
 * all (timeout, refused, unreachable) isn't contacted for that long either:
 * the queue fails fast instead of spending the limit on every ID.
 *
 * Bounded: DEBUGINFOD_QUEUE_MAX queued IDs (more are refused, and asked
 * again by the caller later) and DEBUGINFOD_RESULTS_MAX remembered results
 * (the least recently asked finished one is forgotten first).
 */
#ifndef PROFD_SYMBOLIZER_DEBUGINFOD_H
#define PROFD_SYMBOLIZER_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

#define DEBUGINFOD_QUEUE_MAX 64
#define DEBUGINFOD_RESULTS_MAX 1024
#define DEBUGINFOD_DEFAULT_LIMIT_S 30
#define DEBUGINFOD_RETRY_S 300

struct debuginfod;

struct debuginfod_stats {
	uint64_t requests;	/* build IDs queued for a fetch */
	uint64_t found;		/* fetches that gave a file */
	uint64_t failed;	/* fetches that didn't (missing, time limit, no server) */
	uint64_t pending;	/* queued or being fetched now */
};

/*
 * *out is NULL (and 0 returned) when DEBUGINFOD_URLS is unset or empty.
 * Otherwise the worker is started; negative errno if that fails.
 */
int debuginfod__new(struct debuginfod **out);
/* Cuts off a fetch in progress (within about a second) and joins the
 * worker.  NULL is fine. */
void debuginfod__free(struct debuginfod *d);

/*
 * The debug file of build_id (lowercase hex) as far as known now; never
 * blocks.  0: path (size bytes) holds the fetched file's path, to be opened
 * and checked like any other candidate.  -EINPROGRESS: queued (now or
 * before), ask again once debuginfod__generation() has changed.  -EAGAIN:
 * the queue is full, ask again likewise.  -ENOENT: failed recently; asking
 * before *retry_ns (CLOCK_MONOTONIC) gives the same answer.  -ENOSYS: d is
 * NULL (debuginfod is off).
 */
int debuginfod__request(struct debuginfod *d, const char *build_id, char *path, size_t size,
			int64_t *retry_ns);

/* The fetched file of build_id turned out unusable (gone from the cache,
 * another build ID): answer -ENOENT for it until DEBUGINFOD_RETRY_S from
 * now, then fetch it again. */
void debuginfod__reject(struct debuginfod *d, const char *build_id);

/* Changes whenever a fetch ends: the cheap test for "anything new?".
 * 0 for NULL. */
uint64_t debuginfod__generation(const struct debuginfod *d);

/* All 0 for NULL. */
void debuginfod__stats(struct debuginfod *d, struct debuginfod_stats *st);

#endif
