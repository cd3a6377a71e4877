// SPDX-License-Identifier: BSD-2-Clause
/*
 * debuginfod: one worker thread that fetches debug files by build ID with
 * libdebuginfod, so that no caller ever waits for the network (see
 * debuginfod.h for the contract).
 *
 * What is shared, and how: the results table and the queue live under
 * d->lock, which the worker drops for the whole of a fetch; the stop flag
 * and the generation are atomics, read without the lock (the generation on
 * every symbolizer lookup).  The libdebuginfod client, the deadline and
 * the server back-off belong to the worker alone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/htab.h"
#include "lib/log.h"
#include "symbolizer/debuginfod.h"

/*
 * libdebuginfod is opened only when DEBUGINFOD_URLS asks for it: linked,
 * it brings libcurl and ~27 more libraries (TLS, Kerberos, LDAP) into
 * every daemon, 5.2 MiB of RSS of which 0.9 anonymous, for a feature a
 * compute VM leaves off (docs/benchmarks.md, "A compute VM simulated").
 * The static build (make dist) links none, as Debian ships no
 * libdebuginfod.a and a static binary must not count on dlopen
 * (docs/operations.md, "The static build"): there the functions are
 * missing and debuginfod__new says so once instead of starting the worker.
 */
static struct {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id, int id_len, char **path);
	void *(*get_user_data)(debuginfod_client *c);
	void (*set_progressfn)(debuginfod_client *c, debuginfod_progressfn_t fn);
	void (*set_user_data)(debuginfod_client *c, void *data);
} lib;

#ifndef PROFD_STATIC
static const struct {
	const char *name;
	void **fn;
} lib_syms[] = {
	{"debuginfod_begin", (void **)&lib.begin},
	{"debuginfod_end", (void **)&lib.end},
	{"debuginfod_find_debuginfo", (void **)&lib.find_debuginfo},
	{"debuginfod_get_user_data", (void **)&lib.get_user_data},
	{"debuginfod_set_progressfn", (void **)&lib.set_progressfn},
	{"debuginfod_set_user_data", (void **)&lib.set_user_data},
};
#endif

/* 0 once every function is found; -ENOENT, said once, when not. */
static int lib_load(void)
{
	static int state = 1;	/* 1: not tried yet */
#ifndef PROFD_STATIC
	const char *why;
	void *h;
#endif

	if (state <= 0)
		return state;
#ifndef PROFD_STATIC
	/* Never closed: libcurl registers handlers that outlive the client. */
	h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	why = dlerror();
	for (size_t i = 0; h && i < sizeof(lib_syms) / sizeof(lib_syms[0]); i++) {
		*lib_syms[i].fn = dlsym(h, lib_syms[i].name);
		if (!*lib_syms[i].fn) {
			why = dlerror();
			h = NULL;
		}
	}
	state = h ? 0 : -ENOENT;
	if (state)
		log__warn("debuginfod: DEBUGINFOD_URLS is set, but libdebuginfod cannot be loaded "
			  "(%s; Debian's libdebuginfod1): debug files come from this machine only "
			  "(/usr/lib/debug, .gnu_debuglink)", why ? why : "unknown");
#else
	state = -ENOENT;
	/* Quoted in docs/operations.md, and t_dist_roots looks for it. */
	log__warn("debuginfod: DEBUGINFOD_URLS is set, but this profd was built "
		  "without libdebuginfod (the static build): debug files come "
		  "from this machine only (/usr/lib/debug, .gnu_debuglink)");
#endif
	return state;
}

/* Hex digits of the longest build ID asked for: obj.c reads at most 64
 * bytes of one. */
#define ID_MAX 128
#define NS_PER_S 1000000000ll

enum result_state { RES_PENDING, RES_FOUND, RES_FAILED };

struct result {
	char id[ID_MAX + 1];
	enum result_state state;
	char *path;		/* RES_FOUND: the file in libdebuginfod's cache */
	int64_t retry_ns;	/* RES_FAILED: fetched again after this */
	int64_t used_ns;	/* last asked for: the least recent goes first */
};

struct debuginfod {
	pthread_mutex_t lock;
	pthread_cond_t wake;	/* the queue got an ID, or stop was set */
	pthread_t thread;
	bool thread_started;

	/* Under lock. */
	struct result *res;
	size_t nres, res_cap;
	struct htab index;	/* id -> position in res */
	char queue[DEBUGINFOD_QUEUE_MAX][ID_MAX + 1];
	size_t qhead, qlen;
	struct debuginfod_stats st;

	/* Lock-free. */
	atomic_bool stop;
	_Atomic uint64_t gen;

	/* The worker's own. */
	debuginfod_client *client;
	int64_t limit_ns;	/* per fetch */
	int64_t deadline_ns;	/* of the fetch in progress */
	bool cut_off;		/* the progress function ended it */
	int64_t server_down_until;	/* no server answered: fail fast until then */
};

/* --- the results table --- */

static uint32_t id_hash(const char *id)
{
	return hash__final(hash__str(HASH_SEED, id));
}

static bool id_eq(const void *ctx, size_t pos, const void *key)
{
	return !strcmp(((const struct debuginfod *)ctx)->res[pos].id, key);
}

static long res_find(const struct debuginfod *d, const char *id)
{
	return htab__find(&d->index, id_hash(id), id_eq, d, id, NULL);
}

static void res_remove(struct debuginfod *d, size_t pos)
{
	size_t last = d->nres - 1;

	htab__remove(&d->index, id_hash(d->res[pos].id), pos);
	free(d->res[pos].path);
	if (pos != last) {
		d->res[pos] = d->res[last];
		htab__move(&d->index, id_hash(d->res[pos].id), last, pos);
	}
	d->nres--;
}

/*
 * Forget the least recently asked finished result.  Pending ones stay: the
 * worker looks its ID up when the fetch ends.  There is always a finished
 * one when the table is full, since at most DEBUGINFOD_QUEUE_MAX + 1 are
 * pending.
 */
static void res_evict(struct debuginfod *d)
{
	size_t victim = d->nres;

	for (size_t i = 0; i < d->nres; i++) {
		if (d->res[i].state == RES_PENDING)
			continue;
		if (victim == d->nres || d->res[i].used_ns < d->res[victim].used_ns)
			victim = i;
	}
	if (victim < d->nres)
		res_remove(d, victim);
}

/* A new pending entry for id: its position, or negative errno. */
static long res_add(struct debuginfod *d, const char *id, int64_t now)
{
	struct htab_slot *slot;
	struct result *r;
	int err;

	if (d->nres >= DEBUGINFOD_RESULTS_MAX)
		res_evict(d);
	err = htab__reserve(&d->index);
	err = err ?: array__grow(&d->res, &d->res_cap, d->nres + 1, sizeof(*d->res));
	if (err)
		return err;
	htab__find(&d->index, id_hash(id), id_eq, d, id, &slot);
	r = &d->res[d->nres];
	memset(r, 0, sizeof(*r));
	strcpy(r->id, id);
	r->state = RES_PENDING;
	r->used_ns = now;
	htab__set(&d->index, slot, id_hash(id), d->nres);
	return d->nres++;
}

/* --- the worker --- */

/*
 * libdebuginfod calls this about once a second while it waits for servers
 * (and per file while it cleans its cache): nonzero ends the fetch.
 */
static int progress(debuginfod_client *c, long a, long b)
{
	struct debuginfod *d = lib.get_user_data(c);

	if (atomic_load(&d->stop) || clock__mono_ns() > d->deadline_ns) {
		d->cut_off = true;
		return 1;
	}
	return 0;
}

/* Failures that say nothing answered, as opposed to "no such file". */
static bool server_down(int err)
{
	return err == -ETIME || err == -ECONNREFUSED || err == -EHOSTUNREACH ||
	       err == -ECONNRESET;
}

/* Fetch one debug file: 0 and *path (malloc'd), or negative errno. */
static int fetch(struct debuginfod *d, const char *id, char **path)
{
	int64_t now = clock__mono_ns();
	int fd;

	*path = NULL;
	if (now < d->server_down_until)
		return -EHOSTDOWN;
	d->deadline_ns = now + d->limit_ns;
	d->cut_off = false;
	/* Length 0: id is the build ID in hex. */
	fd = lib.find_debuginfo(d->client, (const unsigned char *)id, 0, path);
	if (fd >= 0) {
		close(fd);	/* the caller opens the path its own careful way */
		return *path ? 0 : -ENOENT;
	}
	free(*path);
	*path = NULL;
	/* Cut off, libdebuginfod says -ENOENT: the server hung, it didn't say no. */
	if ((d->cut_off && !atomic_load(&d->stop)) || server_down(fd))
		d->server_down_until = clock__mono_ns() + DEBUGINFOD_RETRY_S * NS_PER_S;
	return fd;
}

/* Record how the fetch of id ended; takes path.  Under lock. */
static void finish(struct debuginfod *d, const char *id, int err, char *path)
{
	long pos = res_find(d, id);
	struct result *r;

	d->st.pending--;
	if (pos < 0) {
		free(path);	/* can't happen: pending results aren't evicted */
		return;
	}
	r = &d->res[pos];
	if (!err) {
		r->state = RES_FOUND;
		r->path = path;
		d->st.found++;
	} else {
		free(path);
		r->state = RES_FAILED;
		r->retry_ns = clock__mono_ns() + DEBUGINFOD_RETRY_S * NS_PER_S;
		d->st.failed++;
	}
}

static void *worker(void *arg)
{
	struct debuginfod *d = arg;
	char id[ID_MAX + 1], *path;
	int err;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->qlen && !atomic_load(&d->stop))
			pthread_cond_wait(&d->wake, &d->lock);
		if (atomic_load(&d->stop))
			break;
		memcpy(id, d->queue[d->qhead], sizeof(id));
		d->qhead = (d->qhead + 1) % DEBUGINFOD_QUEUE_MAX;
		d->qlen--;
		pthread_mutex_unlock(&d->lock);

		err = fetch(d, id, &path);

		pthread_mutex_lock(&d->lock);
		finish(d, id, err, path);
		atomic_fetch_add(&d->gen, 1);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* --- public --- */

int debuginfod__new(struct debuginfod **out)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	const char *maxtime = getenv("DEBUGINFOD_MAXTIME");
	sigset_t all, old;
	struct debuginfod *d;
	long limit_s = 0;
	int err;

	*out = NULL;
	if (!urls || !*urls)
		return 0;
	if (lib_load())
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->wake, NULL);
	atomic_init(&d->stop, false);
	atomic_init(&d->gen, 0);
	/* The user's limit for libdebuginfod is ours too. */
	if (maxtime)
		limit_s = atol(maxtime);
	d->limit_ns = (limit_s > 0 ? limit_s : DEBUGINFOD_DEFAULT_LIMIT_S) * NS_PER_S;
	/* Made here, not in the worker: its first use initializes libcurl,
	 * which is best done before there are other threads. */
	d->client = lib.begin();
	if (!d->client) {
		err = -ENOMEM;
		goto cleanup;
	}
	lib.set_user_data(d->client, d);
	/* Ours replaces the one DEBUGINFOD_PROGRESS would print with. */
	lib.set_progressfn(d->client, progress);
	/* Signals are the event loop's: the worker blocks them all. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&d->thread, NULL, worker, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto cleanup;
	d->thread_started = true;
	*out = d;
	return 0;
cleanup:
	debuginfod__free(d);
	return err;
}

void debuginfod__free(struct debuginfod *d)
{
	if (!d)
		return;
	if (d->thread_started) {
		pthread_mutex_lock(&d->lock);
		atomic_store(&d->stop, true);
		pthread_cond_signal(&d->wake);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
	}
	if (d->client)
		lib.end(d->client);
	while (d->nres)
		res_remove(d, d->nres - 1);
	free(d->res);
	htab__free(&d->index);
	pthread_cond_destroy(&d->wake);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

int debuginfod__request(struct debuginfod *d, const char *build_id, char *path, size_t size,
			int64_t *retry_ns)
{
	struct result *r;
	int64_t now;
	long pos;
	int err;

	if (!d)
		return -ENOSYS;
	if (!build_id || !*build_id || strlen(build_id) > ID_MAX)
		return -EINVAL;
	now = clock__mono_ns();
	pthread_mutex_lock(&d->lock);
	pos = res_find(d, build_id);
	if (pos >= 0) {
		r = &d->res[pos];
		r->used_ns = now;
		if (r->state == RES_PENDING) {
			err = -EINPROGRESS;
			goto cleanup;
		}
		if (r->state == RES_FOUND) {
			err = strlen(r->path) < size ? 0 : -ENAMETOOLONG;
			if (!err)
				strcpy(path, r->path);
			goto cleanup;
		}
		if (now < r->retry_ns) {
			*retry_ns = r->retry_ns;
			err = -ENOENT;
			goto cleanup;
		}
		/* Failed long enough ago: fetch it again. */
	}
	if (d->qlen == DEBUGINFOD_QUEUE_MAX) {
		err = -EAGAIN;
		goto cleanup;
	}
	if (pos < 0) {
		pos = res_add(d, build_id, now);
		if (pos < 0) {
			err = pos;
			goto cleanup;
		}
	}
	d->res[pos].state = RES_PENDING;
	strcpy(d->queue[(d->qhead + d->qlen) % DEBUGINFOD_QUEUE_MAX], build_id);
	d->qlen++;
	d->st.requests++;
	d->st.pending++;
	pthread_cond_signal(&d->wake);
	err = -EINPROGRESS;
cleanup:
	pthread_mutex_unlock(&d->lock);
	return err;
}

void debuginfod__reject(struct debuginfod *d, const char *build_id)
{
	struct result *r;
	long pos;

	if (!d || !build_id)
		return;
	pthread_mutex_lock(&d->lock);
	pos = res_find(d, build_id);
	if (pos >= 0 && d->res[pos].state == RES_FOUND) {
		r = &d->res[pos];
		free(r->path);
		r->path = NULL;
		r->state = RES_FAILED;
		r->retry_ns = clock__mono_ns() + DEBUGINFOD_RETRY_S * NS_PER_S;
	}
	pthread_mutex_unlock(&d->lock);
}

uint64_t debuginfod__generation(const struct debuginfod *d)
{
	return d ? atomic_load(&d->gen) : 0;
}

void debuginfod__stats(struct debuginfod *d, struct debuginfod_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	*st = d->st;
	pthread_mutex_unlock(&d->lock);
}
