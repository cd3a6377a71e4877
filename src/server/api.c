// SPDX-License-Identifier: BSD-2-Clause
/*
 * api: the API's route table and its handlers.  The HTTP mechanics are
 * httpd.c's, parsing reqparse.c's, rendering render.c's, /metrics' table
 * metrics.c's: what is left is each route's own logic.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <json-c/json.h>

#include "cpu/sampler.h"
#include "heap/heap.h"
#include "lib/buildinfo.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/strbuf.h"
#include "pprof/pprof.h"
#include "profile/builder.h"
#include "profile/labels.h"
#include "profile/job.h"
#include "profile/memgov.h"
#include "profile/source.h"
#include "render/render.h"
#include "server/api.h"
#include "server/config.h"
#include "server/http.h"
#include "server/httpd.h"
#include "server/metrics.h"
#include "server/page.h"
#include "server/reqparse.h"
#include "symbolizer/symbolizer.h"
#include "tracer/bpfobj.h"

/* The API's body limit is ours, so that a too-large body gets a JSON 413. */
#define API_MAX_BODY (64 << 10)
#define API_MAX_QUERY_PARAMS 64

/* POST /profile/cpu, as compute_ctl defines it. */
#define POST_DEFAULT_FREQ 100
#define POST_DEFAULT_SECONDS 5
#define POST_MAX_SECONDS 60
/* GET /debug/pprof/profile, as Go's net/http/pprof defines it. */
#define SCRAPE_DEFAULT_SECONDS 30
#define SCRAPE_MAX_SECONDS 3600
#define SCRAPE_DEFAULT_FREQ 99
/* GET /profile/cpu with parameters, as the profiling RFC defines it. */
#define RFC_DEFAULT_SECONDS 5
#define RFC_DEFAULT_FREQ 99

/* compute_ctl's exact strings: clients compare them. */
#define MSG_IN_PROGRESS "Profiling is currently in progress."
#define MSG_ALREADY_RUNNING "Profiling is already in progress."
#define MSG_STOPPED "Profiling stopped successfully."
#define MSG_NOT_RUNNING "Profiling is not in progress, there is nothing to stop."

struct api {
	struct httpd *httpd;
	struct bpfobj *obj;
	struct sampler *sm;
	struct symbolizer *sym;		/* the builder thread's */
	struct symbolizer *unwind_sym;	/* for /metrics only */
	struct builder *builder;
	struct heap *heap;
	struct event_base *base;
	struct memgov *memgov;
	struct targets *targets;
	unsigned labels;	/* the default label set */
	struct pprof_limits scrape_limits;	/* bounds of the /debug/pprof/ routes' profiles */
	uint64_t coarsened;		/* profiles coarsened to their limits */
	uint64_t coarsened_samples;	/* samples those lost by merging */
	/*
	 * The one profile /profile/cpu takes at a time, by POST (compute_ctl's)
	 * or by GET with parameters (the RFC's), until it is answered; NULL
	 * once DELETE cancelled it or a GET with force=true took its place.
	 */
	struct job *cpu_job;
	int64_t start_ns;
	int64_t alloy_seconds_warned_ns;	/* warn_alloy_heap_seconds(): when last said; 0 never */
};

/*
 * A profile being taken, then built, for a parked request.  Taking it (a
 * CPU session, or the heap's maps) is the loop's; building and encoding it
 * (profile/job.h) is the builder thread's, which owns the job from
 * builder__submit() until job_built().  Whatever the profile, it is built
 * through its source (profile/source.h): snapshot on the loop, build on the
 * builder, free.
 */
struct job {
	struct api *api;
	struct httpd_req *req;		/* NULL once the client went away */
	struct profile_job pj;		/* its source, render options, and what was built */
	struct session *session;	/* a CPU profile's, while it runs: pj.src owns it */
	const char *disposition;	/* Content-Disposition, or NULL */
	const char *content_type;	/* NULL: render's */
	struct event *delay;		/* a heap delta's (?seconds=): its end */
	bool cancelled;			/* a POST ended by DELETE answers 204 */
	bool building;			/* the builder thread has it */
};

static void job_free(struct job *j)
{
	if (!j)
		return;
	if (j->api->cpu_job == j)
		j->api->cpu_job = NULL;
	if (j->delay)
		event_free(j->delay);
	profile_job__release(&j->pj);
	free(j);
}

/* On the builder thread: symbolize, build and encode.  Touches nothing of
 * the loop's but the profile's source and the symbolizer. */
static int job_build(void *arg)
{
	struct job *j = arg;
	int err = profile_job__build(&j->pj, j->api->sym);

	if (!err)
		log__info("encoded %zu bytes in %.1f ms CPU", j->pj.len, j->pj.render_cpu_ns / 1e6);
	return err;
}

/* Back on the loop: answer, unless the client went away meanwhile. */
static void job_built(void *arg, int err)
{
	struct job *j = arg;
	struct httpd_req *r = j->req;

	j->building = false;
	/* A build is when the symbol cache grows: see at once what it cost. */
	memgov__check(j->api->memgov);
	if (!r) {
		job_free(j);
		return;
	}
	if (j->cancelled) {
		job_free(j);
		httpd_req__reply(r, 204, NULL, NULL);
		return;
	}
	if (err == -ECANCELED) {
		job_free(j);
		httpd_req__error(r, 503, "the daemon is stopping");
		return;
	}
	if (err) {
		httpd_req__error(r, 500, "%s failed: %s", j->pj.failed ?: "building the profile",
				 strerror(-err));
		job_free(j);
		return;
	}
	if (j->pj.coarsen.coarsened) {
		const struct pprof_coarsen_result *c = &j->pj.coarsen;

		j->api->coarsened++;
		j->api->coarsened_samples += c->samples_before - c->samples_after;
		log__info("coarsened the profile to its limits: %zu samples, %zu bytes -> %zu "
			  "samples, %zu bytes", c->samples_before, c->bytes_before, c->samples_after,
			  c->bytes_after);
	}
	if (j->disposition)
		httpd_req__add_header(r, "Content-Disposition", j->disposition);
	httpd_req__reply_data(r, 200, j->content_type ?: render__content_type(j->pj.render.format),
			      j->pj.data, j->pj.len);
	j->pj.data = NULL;
	job_free(j);
}

/* Hand j, parked, to the builder; on failure answer and free it. */
static void job_submit(struct job *j)
{
	struct httpd_req *r = j->req;
	int err;

	j->building = true;
	err = builder__submit(j->api->builder, job_build, job_built, j);
	if (err) {
		j->building = false;
		job_free(j);
		httpd_req__error(r, 500, "cannot build the profile: %s", strerror(-err));
	}
}

static void on_session_done(struct session *s, void *ctx)
{
	struct job *j = ctx;
	struct httpd_req *r = j->req;
	int err;

	if (j->cancelled) {
		job_free(j);
		httpd_req__reply(r, 204, NULL, NULL);
		return;
	}
	/* The quick half here, on the loop: what the build needs of the
	 * process table, as it is now. */
	err = profile_source__snapshot(j->pj.src);
	if (err) {
		job_free(j);
		httpd_req__error(r, 500, "building the profile failed: %s", strerror(-err));
		return;
	}
	job_submit(j);
}

/*
 * The client hung up while its profile was being taken.  Nobody wants the
 * profile any more: free the session now rather than keep its perf events
 * running.
 */
static void on_client_gone(struct httpd_req *r, void *arg)
{
	struct job *j = arg;

	if (j->building) {
		/* The builder thread has it: job_built() frees it. */
		j->req = NULL;
		if (j->api->cpu_job == j)
			j->api->cpu_job = NULL;
	} else {
		job_free(j);
	}
	httpd_req__abandon(r);
}

/*
 * Start j's session and park its request until it ends.  own_targets: the
 * targets came with the request, so a bad one is the client's error (422),
 * not the server's (500).  On failure the request has been answered and j
 * freed.
 */
static int job_start_kind(struct job *j, enum session_kind kind, int frequency, int seconds,
			  unsigned labels, const struct targets *targets, bool own_targets)
{
	struct httpd_req *r = j->req;
	char errbuf[256] = "";
	int err;

	/* A default pid that exited since is dropped (logged once), not a 500
	 * on every request; with nothing left, the client is told why. */
	if (!own_targets && targets__drop_gone(j->api->targets, errbuf, sizeof(errbuf))) {
		job_free(j);
		httpd_req__error(r, 404, "%s", errbuf);
		return -ESRCH;
	}
	err = sampler__start(j->api->sm,
			     &(struct session_opts){
				     .kind = kind,
				     .frequency = frequency,
				     .seconds = seconds,
				     .targets = targets,
				     .labels = labels,
				     .done = on_session_done,
				     .ctx = j,
			     },
			     &j->session, errbuf, sizeof(errbuf));
	if (!err)
		j->pj.src = session__source(j->session);
	if (err) {
		job_free(j);
		if (err == -EBUSY || err == -EOPNOTSUPP)
			httpd_req__error(r, 503, "%s", errbuf);
		else if (own_targets && (err == -ESRCH || err == -ENOENT || err == -EINVAL))
			httpd_req__error(r, 422, "targets: %s", errbuf);
		else
			httpd_req__error(r, 500, "cannot start profiling: %s", errbuf);
		return err;
	}
	httpd_req__park(r, on_client_gone, j);
	return 0;
}

/* A CPU session's job_start_kind(). */
static int job_start(struct job *j, int frequency, int seconds, unsigned labels,
		     const struct targets *targets, bool own_targets)
{
	return job_start_kind(j, SESSION_CPU, frequency, seconds, labels, targets, own_targets);
}

static struct job *job_new(struct api *a, struct httpd_req *r)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j) {
		httpd_req__error(r, 500, "out of memory");
		return NULL;
	}
	j->api = a;
	j->req = r;
	return j;
}

static void on_profile_post(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;
	struct post_args args = {.frequency = POST_DEFAULT_FREQ, .seconds = POST_DEFAULT_SECONDS,
				 .labels = a->labels};
	struct json_object *root = NULL;
	struct job *j;
	char errbuf[256];
	char *text = NULL;
	size_t len;
	int err;

	if (!http__content_type_is(httpd_req__ev(r), "application/json")) {
		httpd_req__error(r, 415, "Content-Type must be application/json");
		goto cleanup;
	}
	err = http__body(httpd_req__ev(r), API_MAX_BODY, &text, &len);
	if (err == -E2BIG) {
		httpd_req__error(r, 413, "the body is larger than %d bytes", API_MAX_BODY);
		goto cleanup;
	}
	if (err) {
		httpd_req__error(r, 500, "cannot read the body: %s", strerror(-err));
		goto cleanup;
	}
	root = reqparse__json(text, len, errbuf, sizeof(errbuf));
	if (!root) {
		httpd_req__error(r, 400, "%s", errbuf);
		goto cleanup;
	}
	if (reqparse__post_args(root, POST_MAX_SECONDS, &args, errbuf, sizeof(errbuf))) {
		httpd_req__error(r, 422, "%s", errbuf);
		goto cleanup;
	}
	if (a->cpu_job) {
		httpd_req__reply_string(r, 409, MSG_ALREADY_RUNNING);
		goto cleanup;
	}
	j = job_new(a, r);
	if (!j)
		goto cleanup;
	j->pj.render.format = RENDER_PPROF;
	j->pj.render.gzip = args.archive;
	j->content_type = args.archive ? "application/gzip" : "application/octet-stream";
	j->disposition = args.archive ? "attachment; filename=\"profile.pb.gz\"" :
					"attachment; filename=\"profile.pb\"";
	/* The sampler copies the targets, so args.targets may go right after. */
	if (!job_start_kind(j, args.kind, args.frequency, args.seconds, args.labels,
			    targets__whole_system(&args.targets) ? a->targets : &args.targets,
			    !targets__whole_system(&args.targets)))
		a->cpu_job = j;
cleanup:
	targets__free(&args.targets);
	json_object_put(root);
	free(text);
}

static void on_profile_stop(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;
	struct job *j = a->cpu_job;

	if (!j) {
		httpd_req__reply_string(r, 412, MSG_NOT_RUNNING);
		return;
	}
	/* Its request answers 204 from its done callback, after this reply. */
	j->cancelled = true;
	a->cpu_job = NULL;
	session__stop(j->session);
	httpd_req__reply_string(r, 200, MSG_STOPPED);
}

/*
 * labels= and split= of a GET route into *labels (the daemon's default when
 * absent) and ro->split.  The split label is added to the labels, so that
 * the flamegraph has something to split by.  Answers 400 and returns
 * -EINVAL if bad.
 */
static int get_labels(struct api *a, struct httpd_req *r, const struct evkeyvalq *q,
		      unsigned *labels, struct render_opts *ro)
{
	const char *list, *split;
	char errbuf[256];
	unsigned bit = 0;

	*labels = a->labels;
	if (reqparse__query_str(q, "labels", &list, errbuf, sizeof(errbuf)) ||
	    reqparse__query_str(q, "split", &split, errbuf, sizeof(errbuf)) ||
	    (list && labels__parse(list, labels, errbuf, sizeof(errbuf))) ||
	    (split && labels__split(split, &ro->split, &bit, errbuf, sizeof(errbuf)))) {
		httpd_req__error(r, 400, "%s", errbuf);
		return -EINVAL;
	}
	*labels |= bit;
	return 0;
}

/*
 * max_samples= and max_bytes= of a GET route: what its pprof may hold
 * before it is coarsened (0: no bound), over *lim, the route's default.
 * Answers 400 and returns -EINVAL if bad.
 */
static int get_limits(struct httpd_req *r, const struct evkeyvalq *q, struct pprof_limits *lim)
{
	long samples = (long)lim->max_samples, bytes = (long)lim->max_bytes;
	char errbuf[160];

	if (reqparse__query_int(q, "max_samples", 0, CONFIG_MAX_PROFILE_SAMPLES, &samples, errbuf,
				sizeof(errbuf)) ||
	    reqparse__query_int(q, "max_bytes", 0, CONFIG_MAX_PROFILE_BYTES, &bytes, errbuf,
				sizeof(errbuf))) {
		httpd_req__error(r, 400, "%s", errbuf);
		return -EINVAL;
	}
	if (bytes && bytes < CONFIG_MIN_PROFILE_BYTES) {
		httpd_req__error(r, 400, "max_bytes must be 0 (no bound) or at least %d",
				 CONFIG_MIN_PROFILE_BYTES);
		return -EINVAL;
	}
	lim->max_samples = (size_t)samples;
	lim->max_bytes = (size_t)bytes;
	return 0;
}

/*
 * Content-Disposition of a profile, by route and format: a download gets a
 * file name, as Go's net/http/pprof gives one ("profile", "heap"); a
 * flamegraph or folded stacks stay inline, for a browser to show, and are
 * saved under a name that says what they are.
 */
static const struct {
	const char *route;
	const char *pprof, *svg, *folded;
} dispositions[] = {
	{"/debug/pprof/profile", "attachment; filename=\"profile\"",
	 "inline; filename=\"profile.svg\"", "inline; filename=\"profile.txt\""},
	{"/debug/pprof/heap", "attachment; filename=\"heap\"", "inline; filename=\"heap.svg\"",
	 "inline; filename=\"heap.txt\""},
	{"/debug/pprof/allocs", "attachment; filename=\"allocs\"",
	 "inline; filename=\"allocs.svg\"", "inline; filename=\"allocs.txt\""},
	{"/debug/pprof/offcpu", "attachment; filename=\"offcpu\"",
	 "inline; filename=\"offcpu.svg\"", "inline; filename=\"offcpu.txt\""},
	{"/debug/fgprof", "attachment; filename=\"fgprof\"", "inline; filename=\"fgprof.svg\"",
	 "inline; filename=\"fgprof.txt\""},
	{"/profile/cpu", "attachment; filename=\"profile.pb.gz\"",
	 "inline; filename=\"profile.svg\"", "inline; filename=\"profile.txt\""},
	{"/profile/heap", "attachment; filename=\"heap.pb.gz\"", "inline; filename=\"heap.svg\"",
	 "inline; filename=\"heap.txt\""},
};

static const char *disposition(struct httpd_req *r, enum render_format f)
{
	const char *route = httpd_req__route(r);

	/* Go's ?debug=1 text is shown where it is asked for, as Go serves it. */
	if (f == RENDER_GO_HEAP_TEXT)
		return NULL;
	for (size_t i = 0; i < sizeof(dispositions) / sizeof(dispositions[0]); i++) {
		if (strcmp(dispositions[i].route, route))
			continue;
		return f == RENDER_SVG ? dispositions[i].svg :
		       f == RENDER_FOLDED ? dispositions[i].folded : dispositions[i].pprof;
	}
	return NULL;
}

/* The query of a GET route, and its format=; answers 400 and returns -EINVAL if bad. */
static int get_query(struct httpd_req *r, struct evkeyvalq *q, enum render_format *format)
{
	const char *query = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(httpd_req__ev(r)));
	const char *f;
	char errbuf[160];
	int err;

	err = reqparse__query(query, API_MAX_QUERY_PARAMS, q);
	if (err) {
		httpd_req__error(r, 400, err == -E2BIG ? "more than %d query parameters" :
					 "malformed query string", API_MAX_QUERY_PARAMS);
		return -EINVAL;
	}
	if (reqparse__query_str(q, "format", &f, errbuf, sizeof(errbuf))) {
		httpd_req__error(r, 400, "%s", errbuf);
		return -EINVAL;
	}
	/* The RFC's third heap format is jemalloc's own profiler's dump. */
	if (f && !strcmp(f, "jemalloc")) {
		httpd_req__error(r, 400, "format=jemalloc is not served: profd's heap profiles "
					 "come from probes on the targets' allocators, not from "
					 "jemalloc's profiler; ask for format=pprof, svg or folded");
		return -EINVAL;
	}
	if (render__parse_format(f, format)) {
		httpd_req__error(r, 400, "format must be pprof, folded or svg");
		return -EINVAL;
	}
	return 0;
}

/* What a GET route that takes a profile over time asks for in its query
 * (the defaults are the route's). */
struct session_query {
	struct render_opts ro;		/* format= (get_query's) and split= */
	struct pprof_limits lim;	/* max_samples=, max_bytes= */
	unsigned labels;		/* labels= */
	long seconds, freq;		/* seconds=, frequency= */
	const char *force;		/* force=, or NULL; q's */
};

/*
 * q's labels=, split=, max_samples=, max_bytes=, seconds=, frequency= and
 * force= into *sq, over its defaults: the same checks for every route that
 * takes a session.  Answers 400 and returns -EINVAL if bad.
 */
static int get_session_query(struct api *a, struct httpd_req *r, const struct evkeyvalq *q,
			     struct session_query *sq)
{
	char errbuf[160];

	if (get_labels(a, r, q, &sq->labels, &sq->ro) || get_limits(r, q, &sq->lim))
		return -EINVAL;
	if (reqparse__query_int(q, "seconds", 1, SCRAPE_MAX_SECONDS, &sq->seconds, errbuf,
				sizeof(errbuf)) ||
	    reqparse__query_int(q, "frequency", SAMPLER_MIN_FREQ, SAMPLER_MAX_FREQ, &sq->freq,
				errbuf, sizeof(errbuf)) ||
	    reqparse__query_str(q, "force", &sq->force, errbuf, sizeof(errbuf))) {
		httpd_req__error(r, 400, "%s", errbuf);
		return -EINVAL;
	}
	return 0;
}

/*
 * A scrape: a profile of kind over ?seconds= of the targets, as Go's
 * net/http/pprof CPU endpoint takes one, for `go tool pprof` and Grafana
 * Alloy's pyroscope.scrape.  Each request is its own session: scrapes never
 * cancel each other or the POST session (force=true is accepted for that
 * reason and changes nothing).  frequency= is checked on every route, and
 * means nothing off CPU: Alloy sends a scrape block's params to each of
 * its paths.
 */
static void take_scrape(struct api *a, struct httpd_req *r, enum session_kind kind,
			const char *title, const char *value)
{
	struct session_query sq = {
		.ro = {.gzip = true, .title = title, .value = value},
		.lim = a->scrape_limits,
		.seconds = SCRAPE_DEFAULT_SECONDS,
		.freq = SCRAPE_DEFAULT_FREQ,
	};
	struct evkeyvalq q;
	struct job *j;

	if (get_query(r, &q, &sq.ro.format) || get_session_query(a, r, &q, &sq))
		goto cleanup;
	j = job_new(a, r);
	if (!j)
		goto cleanup;
	j->pj.render = sq.ro;
	j->pj.limits = sq.lim;
	j->disposition = disposition(r, sq.ro.format);
	job_start_kind(j, kind, (int)sq.freq, (int)sq.seconds, sq.labels, a->targets, false);
cleanup:
	evhttp_clear_headers(&q);
}

/* Go's CPU profile route. */
static void on_pprof_profile(struct httpd_req *r, void *ctx)
{
	take_scrape(ctx, r, SESSION_CPU, "CPU flamegraph", NULL);
}

/*
 * Off-CPU time of the targets: where their threads blocked and for how
 * long, sampled at context switches (cpu/offcpu.h).  Its sessions share the
 * CPU route's slots and behave as its do.
 */
static void on_pprof_offcpu(struct httpd_req *r, void *ctx)
{
	take_scrape(ctx, r, SESSION_OFFCPU, "Off-CPU flamegraph", "offcpu");
}

/*
 * Wall-clock time of the targets, on and off CPU (preempted too) per stack
 * in one profile (sampler.h's SESSION_WALL), where Go's fgprof serves it
 * and so where Grafana Alloy's profile.fgprof block looks by default.
 */
static void on_fgprof(struct httpd_req *r, void *ctx)
{
	take_scrape(ctx, r, SESSION_WALL, "Wall-clock flamegraph", "time");
}

/* A heap delta's ?seconds= are over (or the daemon is stopping): what
 * changed since its base, built as any profile. */
static void on_heap_delta_end(evutil_socket_t fd, short what, void *arg)
{
	struct job *j = arg;
	struct httpd_req *r = j->req;
	int err;

	(void)fd;
	(void)what;
	err = profile_source__snapshot(j->pj.src);
	if (err) {
		job_free(j);
		httpd_req__error(r, 500, "building the heap profile failed: %s", strerror(-err));
		return;
	}
	job_submit(j);
}

/* compute_ctl's status request: is a profile being taken on /profile/cpu? */
static void on_profile_status(struct httpd_req *r, struct api *a)
{
	if (a->cpu_job)
		httpd_req__reply_string(r, 200, MSG_IN_PROGRESS);
	else
		httpd_req__reply(r, 204, NULL, NULL);
}

/* The parameters that make GET /profile/cpu take a profile: the RFC's four,
 * and the labels every GET profile route takes. */
static const char *const rfc_params[] = {"format", "seconds", "frequency", "force",
					 "labels", "split", NULL};

static bool query_has_any(const struct evkeyvalq *q, const char *const *names)
{
	const struct evkeyval *kv;

	TAILQ_FOREACH(kv, q, next)
		for (const char *const *n = names; *n; n++)
			if (!strcmp(kv->key, *n))
				return true;
	return false;
}

/*
 * GET /profile/cpu.  Bare (no parameter above), it is compute_ctl's status
 * request.  With any, it takes a profile as the profiling RFC's Rust
 * services do: format pprof or svg (folded too), seconds 5, frequency 99
 * Hz.  The route takes one profile at a time, whether by POST or by GET:
 * while one runs, another GET is 409 unless it says force=true, which
 * ends the running one (its client gets what was sampled so far, as
 * neon's pageserver answers a cancelled profile) and takes this one.
 */
static void on_profile_get(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;
	struct session_query sq = {
		.ro = {.gzip = true, .title = "CPU flamegraph"},
		/* A compute route: no bound unless the request asks (max_samples=). */
		.lim = {0, 0},
		.seconds = RFC_DEFAULT_SECONDS,
		.freq = RFC_DEFAULT_FREQ,
	};
	struct job *old = a->cpu_job, *j;
	bool forced = false;
	struct evkeyvalq q;

	if (get_query(r, &q, &sq.ro.format))
		goto cleanup;
	if (!query_has_any(&q, rfc_params)) {
		on_profile_status(r, a);
		goto cleanup;
	}
	if (get_session_query(a, r, &q, &sq))
		goto cleanup;
	if (sq.force && strcmp(sq.force, "true") && strcmp(sq.force, "false")) {
		httpd_req__error(r, 400, "force must be true or false");
		goto cleanup;
	}
	forced = sq.force && !strcmp(sq.force, "true");
	if (old && !forced) {
		httpd_req__error(r, 409, "a profile is being taken on /profile/cpu already (by %s): "
				 "add force=true to end it, its client getting what was sampled "
				 "so far, and take this one instead",
				 old->req ? http__method_name(httpd_req__method(old->req)) : "?");
		goto cleanup;
	}
	j = job_new(a, r);
	if (!j)
		goto cleanup;
	j->pj.render = sq.ro;
	j->pj.limits = sq.lim;
	j->disposition = disposition(r, sq.ro.format);
	/* Started before the old one ends: if it cannot start, the old one
	 * goes on. */
	if (job_start(j, (int)sq.freq, (int)sq.seconds, sq.labels, a->targets, false))
		goto cleanup;
	if (old) {
		struct session_stats st = {0};

		if (old->session && !old->building)
			session__stats(old->session, &st);
		log__info("force=true: the /profile/cpu profile running ends after %.1f s, "
			  "with what it sampled", st.duration_ns / 1e9);
		/* Its done callback builds what it has and answers its client;
		 * a profile already being built is answered as it would be. */
		if (!old->building)
			session__stop(old->session);
	}
	a->cpu_job = j;
cleanup:
	evhttp_clear_headers(&q);
}

/* Once an hour at most: the warning's own log lines must not churn. */
#define ALLOY_WARN_EVERY_NS (3600LL * 1000000000LL)

/*
 * A heap route asked for a delta (?seconds=) by Grafana Alloy.  Alloy's
 * memory profile is not a delta one: it sends seconds= there only when its
 * scrape block sets params and scrapes a delta profile (CPU, off-CPU)
 * too, since it adds that profile's seconds to the block's params map,
 * which all of the block's profile types share (grafana/alloy,
 * pyroscope/scrape/target.go, targetsFromGroup).  The scrape then gets the
 * change over 59 s, as Go's net/http/pprof serves it, and Alloy takes
 * deltas of those again: the heap it stores is wrong.  It is Alloy's
 * config that can fix it (docs/operations.md), so it is said in the log,
 * and the request is served as asked (a memory block with delta = true
 * means it).
 */
static void warn_alloy_heap_seconds(struct api *a, struct httpd_req *r, long seconds)
{
	const char *ua = evhttp_find_header(evhttp_request_get_input_headers(httpd_req__ev(r)),
					    "User-Agent");
	int64_t now = clock__mono_ns();

	if (!ua || strncmp(ua, "Alloy/", 6))
		return;
	if (a->alloy_seconds_warned_ns && now - a->alloy_seconds_warned_ns < ALLOY_WARN_EVERY_NS)
		return;
	a->alloy_seconds_warned_ns = now;
	log__warn("Grafana Alloy asked %s for seconds=%ld: the change over %ld s, which Alloy "
		  "takes deltas of again, unless its memory block says delta = true.  Alloy adds a "
		  "delta profile's seconds to its scrape block's params, which every profile "
		  "type of the block shares: leave params out of a block that scrapes the heap "
		  "beside CPU (set them as __param_NAME target labels), see docs/operations.md "
		  "(said once an hour)",
		  httpd_req__route(r), seconds, seconds);
}

/*
 * The heap now: Go's four heap sample types.  /debug/pprof/allocs is the
 * same profile with alloc_space as its default type, as Go serves it.  As
 * Go's net/http/pprof: ?debug=1 (or 2) is the legacy text form, and
 * ?seconds=N the change over the next N seconds (both maps read now and
 * then, subtracted); the two do not go together.
 */
static void on_heap(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;
	bool allocs = !strcmp(httpd_req__route(r), "/debug/pprof/allocs");
	struct render_opts ro = {.gzip = true};
	/* The compute route (/profile/heap) has no bound unless asked. */
	struct pprof_limits lim = strncmp(httpd_req__route(r), "/debug/pprof/", 13) ?
				  (struct pprof_limits){0, 0} : a->scrape_limits;
	long debug = 0, seconds = 0;
	struct evkeyvalq q;
	char errbuf[160];
	struct job *j;
	unsigned labels;
	int err;

	TAILQ_INIT(&q);
	if (!a->heap) {
		httpd_req__error(r, 409, "heap profiling is off: start the daemon with "
					 "`profd serve --heap` (see docs/api.md)");
		return;
	}
	if (get_query(r, &q, &ro.format) || get_labels(a, r, &q, &labels, &ro) ||
	    get_limits(r, &q, &lim))
		goto cleanup;
	/* seconds=0: no delta, as Go. */
	if (reqparse__query_int(&q, "debug", 0, 2, &debug, errbuf, sizeof(errbuf)) ||
	    reqparse__query_int(&q, "seconds", 0, SCRAPE_MAX_SECONDS, &seconds, errbuf,
				sizeof(errbuf))) {
		httpd_req__error(r, 400, "%s", errbuf);
		goto cleanup;
	}
	if (debug && seconds) {
		httpd_req__error(r, 400, "seconds and debug params are incompatible");
		goto cleanup;
	}
	if (seconds)
		warn_alloy_heap_seconds(a, r, seconds);
	if (debug)
		ro.format = RENDER_GO_HEAP_TEXT;
	j = job_new(a, r);
	if (!j)
		goto cleanup;
	/* The maps are read here, on the loop; symbolizing is the builder's. */
	err = heap__source(a->heap, allocs ? "alloc_space" : "inuse_space", labels, &j->pj.src);
	if (!err && debug)
		heap__source_sampled(j->pj.src);
	if (!err && seconds) {
		err = heap__source_mark(j->pj.src);
		j->delay = err ? NULL : evtimer_new(a->base, on_heap_delta_end, j);
		if (!err && !j->delay)
			err = -ENOMEM;
	} else {
		err = err ?: profile_source__snapshot(j->pj.src);
	}
	if (err) {
		job_free(j);
		httpd_req__error(r, 500, "building the heap profile failed: %s", strerror(-err));
		goto cleanup;
	}
	ro.title = allocs ? "Heap allocations (bytes)" : "Heap in use (bytes)";
	j->pj.render = ro;
	j->pj.limits = lim;
	j->disposition = disposition(r, ro.format);
	err = httpd_req__park(r, on_client_gone, j);
	if (err) {
		job_free(j);
		httpd_req__error(r, 500, "out of memory");
		goto cleanup;
	}
	if (j->delay) {
		struct timeval tv = {seconds, 0};

		evtimer_add(j->delay, &tv);
	} else {
		job_submit(j);
	}
cleanup:
	evhttp_clear_headers(&q);
}

/* Add v to object o or array o (key NULL); v is o's or freed, even on failure. */
static int json_add(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v || (key ? json_object_object_add(o, key, v) : json_object_array_add(o, v))) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

/* {"version": "...", "commit": "...", ...}: buildinfo, for /health. */
static int version_json(struct json_object *o)
{
	const struct buildinfo *bi = buildinfo__get();
	const struct {
		const char *key, *value;
	} fields[] = {
		{"version", bi->version},     {"commit", bi->commit},     {"link", bi->link},
		{"sanitizer", bi->sanitizer}, {"compiler", bi->compiler}, {"libbpf", bi->libbpf},
		{"elfutils", bi->elfutils},
	};
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(fields) / sizeof(fields[0]); i++)
		err = json_add(o, fields[i].key, json_object_new_string(fields[i].value));
	return err;
}

static void on_health(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;
	struct sampler_stats st;
	struct json_object *o = json_object_new_object();
	struct json_object *version = json_object_new_object();
	int err = o && version ? 0 : -ENOMEM;

	sampler__stats(a->sm, &st);
	err = err ?: json_add(o, "status", json_object_new_string("ok"));
	err = err ?: json_add(o, "profiling_in_progress",
			      json_object_new_boolean(a->cpu_job != NULL));
	err = err ?: json_add(o, "sessions_running", json_object_new_int(st.sessions_running));
	err = err ?: json_add(o, "uptime_seconds",
			      json_object_new_int64((clock__mono_ns() - a->start_ns) / 1000000000LL));
	if (!err) {
		err = json_add(o, "version", version);	/* o owns it now, or it is freed */
		err = err ?: version_json(version);
		version = NULL;
	}
	json_object_put(version);	/* never added */
	if (err) {
		json_object_put(o);
		o = NULL;
	}
	httpd_req__reply_json(r, 200, o);
}

static void on_metrics(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;
	struct evbuffer *buf = evbuffer_new();
	const struct metrics_sources src = {
		.obj = a->obj,
		.sm = a->sm,
		.heap = a->heap,
		.sym = a->sym,
		.unwind_sym = a->unwind_sym,
		.builder = a->builder,
		.memgov = a->memgov,
		.profiles_coarsened = a->coarsened,
		.samples_coarsened = a->coarsened_samples,
	};
	int err = buf ? 0 : -ENOMEM;

	err = err ?: metrics__write(&src, buf);
	if (!err)
		err = httpd__metrics(a->httpd, buf) ? -ENOMEM : 0;
	if (err)
		httpd_req__error(r, 500, "out of memory");
	else
		httpd_req__reply(r, 200, "text/plain; version=0.0.4; charset=utf-8", buf);
	if (buf)
		evbuffer_free(buf);
}

/* The page: static, self-contained, allowed nothing from elsewhere. */
static void on_index(struct httpd_req *r, void *ctx)
{
	struct evbuffer *buf = evbuffer_new();
	size_t len;
	const char *html = page__index(&len);

	/* Flamegraphs show in sandboxed frames from blob: URLs (see page.html). */
	httpd_req__add_header(r, "Content-Security-Policy",
			      "default-src 'self'; script-src 'unsafe-inline'; "
			      "style-src 'unsafe-inline'; frame-src blob:; img-src 'self' data: blob:");
	if (!buf || evbuffer_add_reference(buf, html, len, NULL, NULL))
		httpd_req__error(r, 500, "out of memory");
	else
		httpd_req__reply(r, 200, "text/html; charset=utf-8", buf);
	if (buf)
		evbuffer_free(buf);
}

/*
 * Go's /debug/pprof/ index: the profiles served, each linked with what it
 * is.  Go links each to its ?debug=1 text; here a profile links to its
 * download, and to its flamegraph.
 */
static const struct {
	const char *name;
	const char *href;	/* the link to it: its name unless said */
	const char *flamegraph;	/* the link to its SVG */
	bool heap;		/* needs profd serve --heap */
	const char *desc;
} pprof_index[] = {
	{"allocs", NULL, "allocs?format=svg", true,
	 "A sampling of all past memory allocations of the targets since heap tracking "
	 "began (alloc_space by default)."},
	{"fgprof", "../fgprof", "../fgprof?seconds=10&amp;format=svg", false,
	 "Wall-clock time of the targets: on-CPU and off-CPU time (blocked, or waiting for a "
	 "CPU) per stack in one profile, as Go's fgprof serves it. You can specify the duration "
	 "in the seconds GET parameter (default 30) and the on-CPU sampling frequency in Hz in "
	 "frequency (default 99)."},
	{"heap", NULL, "heap?format=svg", true,
	 "A sampling of the memory allocations of live objects of the targets (inuse_space "
	 "by default)."},
	{"offcpu", NULL, "offcpu?seconds=10&amp;format=svg", false,
	 "Off-CPU time of the targets: where their threads waited (sleeps, I/O, locks) and "
	 "for how long, sampled at context switches. You can specify the duration in the "
	 "seconds GET parameter (default 30)."},
	{"profile", NULL, "profile?seconds=10&amp;format=svg", false,
	 "CPU profile of the targets. You can specify the duration in the seconds GET "
	 "parameter (default 30) and the sampling frequency in Hz in frequency (default 99). "
	 "After you get the profile file, use the go tool pprof command to investigate the "
	 "profile."},
};

static void on_pprof_index(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;
	size_t n = sizeof(pprof_index) / sizeof(pprof_index[0]), len;
	struct strbuf sb = {0};
	char *html;

	strbuf__adds(&sb, "<html>\n<head>\n<title>/debug/pprof/</title>\n<style>\n"
			  ".profile-name{\n\tdisplay:inline-block;\n\twidth:6rem;\n}\n"
			  "</style>\n</head>\n<body>\n/debug/pprof/<br>\n<br>\n"
			  "Types of profiles available:\n<table>\n"
			  "<thead><td>Profile</td><td>Flamegraph</td></thead>\n");
	for (size_t i = 0; i < n; i++)
		strbuf__addf(&sb, "<tr><td><a href='%s'>%s</a></td>"
				  "<td><a href='%s'>svg</a></td></tr>\n",
			     pprof_index[i].href ?: pprof_index[i].name, pprof_index[i].name,
			     pprof_index[i].flamegraph);
	strbuf__adds(&sb, "</table>\n<p>\nProfile Descriptions:\n<ul>\n");
	for (size_t i = 0; i < n; i++)
		strbuf__addf(&sb, "<li><div class=profile-name>%s: </div> %s%s</li>\n",
			     pprof_index[i].name, pprof_index[i].desc,
			     pprof_index[i].heap && !a->heap ?
				     " Off: start the daemon with profd serve --heap." : "");
	strbuf__adds(&sb, "</ul>\n</p>\n</body>\n</html>\n");
	html = strbuf__detach(&sb, &len);
	if (!html)
		httpd_req__error(r, 500, "out of memory");
	else
		httpd_req__reply_data(r, 200, "text/html; charset=utf-8", html, len);
}

/* Go's ServeMux sends /debug/pprof to the index, as its "/debug/pprof/" pattern does. */
static void on_pprof_redirect(struct httpd_req *r, void *ctx)
{
	httpd_req__add_header(r, "Location", "/debug/pprof/");
	httpd_req__reply(r, 301, NULL, NULL);
}

/* {"pids": [...], "exes": [...]}; both empty is the whole system, unless
 * "none_left": true says every default pid is gone. */
static int targets_json(struct json_object *o, const struct targets *t)
{
	struct json_object *pids = json_object_new_array(), *exes = json_object_new_array();
	int err;

	err = json_add(o, "pids", pids);
	if (err) {
		json_object_put(exes);
		return err;
	}
	err = json_add(o, "exes", exes);
	for (size_t i = 0; !err && i < t->npids; i++)
		err = json_add(pids, NULL, json_object_new_int(t->pids[i]));
	for (size_t i = 0; !err && i < t->nexes; i++)
		err = json_add(exes, NULL, json_object_new_string(t->exes[i]));
	/* Empty lists with every default pid gone: nothing, not the whole system. */
	if (!err && !targets__whole_system(t) && !t->npids && !t->nexes)
		err = json_add(o, "none_left", json_object_new_boolean(1));
	return err;
}

struct sessions_walk {
	struct json_object *list;
	int err;
};

static void session_json(struct httpd_req *q, void *arg, void *ctx)
{
	struct sessions_walk *w = ctx;
	struct job *j = arg;
	struct session_stats st;
	struct json_object *s;
	int err = w->err;

	if (err || !j || !j->session)
		return;
	session__stats(j->session, &st);
	s = json_object_new_object();
	err = json_add(w->list, NULL, s);
	err = err ?: json_add(s, "route", json_object_new_string(httpd_req__route(q)));
	err = err ?: json_add(s, "method", json_object_new_string(http__method_name(
						 httpd_req__method(q))));
	err = err ?: json_add(s, "frequency", json_object_new_int(st.frequency));
	err = err ?: json_add(s, "started_unix", json_object_new_int64(st.start_ns / 1000000000LL));
	err = err ?: json_add(s, "elapsed_seconds", json_object_new_double(st.duration_ns / 1e9));
	err = err ?: json_add(s, "samples", json_object_new_int64((int64_t)st.samples));
	w->err = err;
}

/* The page's view of the daemon: its default targets and the sessions running. */
static void on_sessions(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;
	struct json_object *o = json_object_new_object();
	struct json_object *targets = json_object_new_object();
	struct sessions_walk w = {.list = json_object_new_array()};
	int err;

	if (!o) {
		json_object_put(targets);
		json_object_put(w.list);
		httpd_req__error(r, 500, "out of memory");
		return;
	}
	/* From here o owns everything added to it, and freeing o frees it all. */
	err = json_add(o, "targets", targets);
	err = err ?: targets_json(targets, a->targets);
	if (err)
		json_object_put(w.list);
	else
		err = json_add(o, "sessions", w.list);
	w.err = err;
	if (!err)
		httpd__for_each_parked(a->httpd, session_json, &w);
	if (w.err) {
		json_object_put(o);
		httpd_req__error(r, 500, "out of memory");
		return;
	}
	httpd_req__reply_json(r, 200, o);
}

/* Every route, in one table. */
static const struct httpd_route routes[] = {
	{EVHTTP_REQ_POST, "/profile/cpu", on_profile_post},
	{EVHTTP_REQ_GET, "/profile/cpu", on_profile_get},
	{EVHTTP_REQ_DELETE, "/profile/cpu", on_profile_stop},
	{EVHTTP_REQ_GET, "/debug/pprof/", on_pprof_index},
	{EVHTTP_REQ_GET, "/debug/pprof", on_pprof_redirect},
	{EVHTTP_REQ_GET, "/debug/pprof/profile", on_pprof_profile},
	{EVHTTP_REQ_GET, "/debug/pprof/offcpu", on_pprof_offcpu},
	{EVHTTP_REQ_GET, "/debug/fgprof", on_fgprof},		/* Alloy's fgprof path */
	{EVHTTP_REQ_GET, "/profile/heap", on_heap},		/* the pageserver's name */
	{EVHTTP_REQ_GET, "/debug/pprof/heap", on_heap},
	{EVHTTP_REQ_GET, "/debug/pprof/allocs", on_heap},	/* Alloy's memory path */
	{EVHTTP_REQ_GET, "/health", on_health},
	{EVHTTP_REQ_GET, "/metrics", on_metrics},
	{EVHTTP_REQ_GET, "/", on_index},
	{EVHTTP_REQ_GET, "/sessions", on_sessions},
	{0, NULL, NULL},
};

static void stop_one(struct httpd_req *r, void *arg, void *ctx)
{
	struct job *j = arg;
	int *n = ctx;

	/* A profile being built has ended already: its reply follows the build. */
	if (j && j->session && !j->building) {
		session__stop(j->session);
		(*n)++;
	}
	/* A heap delta ends now, with what changed so far. */
	if (j && j->delay && !j->building && evtimer_pending(j->delay, NULL)) {
		evtimer_del(j->delay);
		event_active(j->delay, EV_TIMEOUT, 1);
		(*n)++;
	}
}

/* Each stop queues that session's done callback, which replies. */
static void on_shutdown(void *ctx)
{
	struct api *a = ctx;
	int n = 0;

	a->cpu_job = NULL;
	httpd__for_each_parked(a->httpd, stop_one, &n);
	if (n)
		log__info("stopping %d profiling session%s early", n, n == 1 ? "" : "s");
}

int api__new(struct event_base *base, const struct api_opts *opts, struct api **out)
{
	struct api *a = calloc(1, sizeof(*a));
	int err;

	if (!a)
		return -ENOMEM;
	a->obj = opts->obj;
	a->base = base;
	a->sm = opts->sampler;
	a->sym = opts->sym;
	a->unwind_sym = opts->unwind_sym;
	a->builder = opts->builder;
	a->heap = opts->heap;
	a->memgov = opts->memgov;
	a->targets = opts->targets;
	a->labels = opts->labels;
	a->scrape_limits = opts->scrape_limits;
	a->start_ns = clock__mono_ns();
	err = httpd__new(base,
			 &(struct httpd_opts){
				 .host = opts->host,
				 .port = opts->port,
				 .routes = routes,
				 .ctx = a,
				 .on_shutdown = on_shutdown,
				 .max_connections = opts->max_connections,
				 .allowed_hosts = opts->allowed_hosts,
				 /* Go's pprof and fgprof routes alike */
				 .pprof_errors_prefix = "/debug/",
			 },
			 &a->httpd);
	if (err) {
		free(a);
		return err;
	}
	*out = a;
	return 0;
}

void api__shutdown(struct api *a, void (*drained)(void *ctx), void *ctx)
{
	httpd__shutdown(a->httpd, drained, ctx);
}

void api__free(struct api *a)
{
	if (!a)
		return;
	httpd__free(a->httpd);
	free(a);
}
