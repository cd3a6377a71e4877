// SPDX-License-Identifier: BSD-2-Clause
/*
 * The API's handlers and their route table.  Over 600 lines because it is
 * every route: the HTTP mechanics are httpd.c's, parsing is reqparse.c's,
 * rendering render.c's, so what is left is each route's own logic.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <json-c/json.h>

#include "cpu/sampler.h"
#include "cpu/unwind.h"
#include "heap/heap.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/stagecpu.h"
#include "pprof/pprof.h"
#include "proc/procs.h"
#include "proc/titles.h"
#include "profile/builder.h"
#include "profile/labels.h"
#include "profile/memgov.h"
#include "render/render.h"
#include "server/api.h"
#include "server/http.h"
#include "server/httpd.h"
#include "server/page.h"
#include "server/reqparse.h"
#include "symbolizer/symbolizer.h"
#include "tracer/bpfobj.h"
#include "tracer/stackcopy.h"

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
	struct memgov *memgov;
	const struct targets *targets;
	unsigned labels;	/* the default label set */
	struct job *post;	/* the POST /profile/cpu running, not yet cancelled */
	int64_t start_ns;
};

/*
 * A profile being taken, then built, for a parked request.  Taking it (the
 * session) is the loop's; building and encoding it is the builder
 * thread's, which owns the job from builder__submit() until job_built().
 */
struct job {
	struct api *api;
	struct httpd_req *req;		/* NULL once the client went away */
	struct session *session;	/* a CPU profile */
	struct heap_build *heap;	/* or a heap profile */
	struct render_opts render;
	const char *disposition;	/* Content-Disposition, or NULL */
	const char *content_type;	/* NULL: render's */
	bool cancelled;			/* a POST ended by DELETE answers 204 */
	bool building;			/* the builder thread has it */
	/* What the builder made: */
	const char *failed;		/* what failed, or NULL */
	uint8_t *data;
	size_t len;
};

static void job_free(struct job *j)
{
	if (!j)
		return;
	if (j->api->post == j)
		j->api->post = NULL;
	session__free(j->session);
	heap_build__free(j->heap);
	free(j->data);
	free(j);
}

/* On the builder thread: symbolize, build and encode.  Touches nothing of
 * the loop's but the ended session, the heap build and the symbolizer. */
static int job_build(void *arg)
{
	struct job *j = arg;
	struct pprof *p = NULL;
	int64_t cpu0;
	int err;

	if (j->session)
		err = session__build(j->session, j->api->sym, &p);
	else
		err = heap_build__run(j->heap, j->api->sym, &p);
	if (err) {
		j->failed = j->session ? "building the profile" : "building the heap profile";
		return err;
	}
	cpu0 = clock__thread_cpu_ns();
	err = render__profile(p, &j->render, &j->data, &j->len);
	pprof__free(p);
	if (err) {
		j->failed = "encoding the profile";
		return err;
	}
	log__info("encoded %zu bytes in %.1f ms CPU", j->len, (clock__thread_cpu_ns() - cpu0) / 1e6);
	return 0;
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
		httpd_req__error(r, 500, "%s failed: %s", j->failed ?: "building the profile",
				 strerror(-err));
		job_free(j);
		return;
	}
	if (j->disposition)
		httpd_req__add_header(r, "Content-Disposition", j->disposition);
	httpd_req__reply_data(r, 200, j->content_type ?: render__content_type(j->render.format),
			      j->data, j->len);
	j->data = NULL;
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
	err = session__snapshot(s);
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
		if (j->api->post == j)
			j->api->post = NULL;
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
static int job_start(struct job *j, int frequency, int seconds, unsigned labels,
		     const struct targets *targets, bool own_targets)
{
	struct httpd_req *r = j->req;
	char errbuf[256] = "";
	int err;

	err = sampler__start(j->api->sm,
			     &(struct session_opts){
				     .frequency = frequency,
				     .seconds = seconds,
				     .targets = targets,
				     .labels = labels,
				     .done = on_session_done,
				     .ctx = j,
			     },
			     &j->session, errbuf, sizeof(errbuf));
	if (err) {
		job_free(j);
		if (err == -EBUSY)
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
	if (a->post) {
		httpd_req__reply_string(r, 409, MSG_ALREADY_RUNNING);
		goto cleanup;
	}
	j = job_new(a, r);
	if (!j)
		goto cleanup;
	j->render.format = RENDER_PPROF;
	j->render.gzip = args.archive;
	j->content_type = args.archive ? "application/gzip" : "application/octet-stream";
	j->disposition = args.archive ? "attachment; filename=\"profile.pb.gz\"" :
					"attachment; filename=\"profile.pb\"";
	/* The sampler copies the targets, so args.targets may go right after. */
	if (!job_start(j, args.frequency, args.seconds, args.labels,
		       targets__whole_system(&args.targets) ? a->targets : &args.targets,
		       !targets__whole_system(&args.targets)))
		a->post = j;
cleanup:
	targets__free(&args.targets);
	json_object_put(root);
	free(text);
}

static void on_profile_status(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;

	if (a->post)
		httpd_req__reply_string(r, 200, MSG_IN_PROGRESS);
	else
		httpd_req__reply(r, 204, NULL, NULL);
}

static void on_profile_stop(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;
	struct job *post = a->post;

	if (!post) {
		httpd_req__reply_string(r, 412, MSG_NOT_RUNNING);
		return;
	}
	/* The POST answers 204 from its done callback, after this reply. */
	post->cancelled = true;
	a->post = NULL;
	session__stop(post->session);
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
	if (render__parse_format(f, format)) {
		httpd_req__error(r, 400, "format must be pprof, folded or svg");
		return -EINVAL;
	}
	return 0;
}

/*
 * Go's net/http/pprof CPU endpoint, for `go tool pprof` and Grafana Alloy's
 * pyroscope.scrape.  Each request is its own session: scrapes never cancel
 * each other or the POST session (force=true is accepted for that reason
 * and changes nothing).
 */
static void on_pprof_profile(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;
	long seconds = SCRAPE_DEFAULT_SECONDS, freq = SCRAPE_DEFAULT_FREQ;
	struct render_opts ro = {.gzip = true, .title = "CPU flamegraph"};
	unsigned labels;
	struct evkeyvalq q;
	const char *force;
	char errbuf[160];
	struct job *j;

	if (get_query(r, &q, &ro.format) || get_labels(a, r, &q, &labels, &ro))
		goto cleanup;
	if (reqparse__query_int(&q, "seconds", 1, SCRAPE_MAX_SECONDS, &seconds, errbuf,
				sizeof(errbuf)) ||
	    reqparse__query_int(&q, "frequency", SAMPLER_MIN_FREQ, SAMPLER_MAX_FREQ, &freq,
				errbuf, sizeof(errbuf)) ||
	    reqparse__query_str(&q, "force", &force, errbuf, sizeof(errbuf))) {
		httpd_req__error(r, 400, "%s", errbuf);
		goto cleanup;
	}
	j = job_new(a, r);
	if (!j)
		goto cleanup;
	j->render = ro;
	if (ro.format == RENDER_PPROF)
		j->disposition = "attachment; filename=\"profile\"";
	job_start(j, (int)freq, (int)seconds, labels, a->targets, false);
cleanup:
	evhttp_clear_headers(&q);
}

/*
 * The heap now: Go's four heap sample types.  /debug/pprof/allocs is the
 * same profile with alloc_space as its default type, as Go serves it.
 */
static void on_heap(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;
	bool allocs = !strcmp(httpd_req__route(r), "/debug/pprof/allocs");
	struct render_opts ro = {.gzip = true};
	struct evkeyvalq q;
	struct job *j;
	unsigned labels;
	int err;

	TAILQ_INIT(&q);
	if (!a->heap) {
		httpd_req__error(r, 409, "heap profiling is off: start the daemon with "
					 "`profd serve --heap` (see docs/api.md)");
		return;
	}
	if (get_query(r, &q, &ro.format) || get_labels(a, r, &q, &labels, &ro))
		goto cleanup;
	j = job_new(a, r);
	if (!j)
		goto cleanup;
	/* The maps are read here, on the loop; symbolizing is the builder's. */
	err = heap__build_begin(a->heap, allocs ? "alloc_space" : "inuse_space", labels, &j->heap);
	if (err) {
		job_free(j);
		httpd_req__error(r, 500, "building the heap profile failed: %s", strerror(-err));
		goto cleanup;
	}
	ro.title = allocs ? "Heap allocations (bytes)" : "Heap in use (bytes)";
	j->render = ro;
	if (ro.format == RENDER_PPROF)
		j->disposition = "attachment; filename=\"profile\"";
	err = httpd_req__park(r, on_client_gone, j);
	if (err) {
		job_free(j);
		httpd_req__error(r, 500, "out of memory");
		goto cleanup;
	}
	job_submit(j);
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

static void on_health(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;
	struct sampler_stats st;
	struct json_object *o = json_object_new_object();
	int err = o ? 0 : -ENOMEM;

	sampler__stats(a->sm, &st);
	err = err ?: json_add(o, "status", json_object_new_string("ok"));
	err = err ?: json_add(o, "profiling_in_progress", json_object_new_boolean(a->post != NULL));
	err = err ?: json_add(o, "sessions_running", json_object_new_int(st.sessions_running));
	err = err ?: json_add(o, "uptime_seconds",
			      json_object_new_int64((clock__mono_ns() - a->start_ns) / 1000000000LL));
	if (err) {
		json_object_put(o);
		o = NULL;
	}
	httpd_req__reply_json(r, 200, o);
}

/* Entries of /proc/self/fd, less the one reading it. */
static uint64_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	uint64_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n ? n - 1 : 0;
}

/* Resident memory, from /proc/self/statm: 0 if it cannot be read. */
static uint64_t resident_bytes(void)
{
	unsigned long long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

enum metric_unit {
	METRIC_COUNT,
	METRIC_SECONDS,	/* value in nanoseconds, shown in seconds */
};

struct metric {
	const char *name;	/* with its labels, if any: name{label="v"} */
	const char *type, *help;
	uint64_t value;
	enum metric_unit unit;
};

/* One metric in the text format; HELP and TYPE once per family (a row
 * whose name before '{' is the previous row's shares them). */
static int metric_print(struct evbuffer *buf, const struct metric *m, const struct metric *prev)
{
	size_t fam = strcspn(m->name, "{");
	int n = 0;

	if (!prev || strncmp(prev->name, m->name, fam) || (prev->name[fam] && prev->name[fam] != '{'))
		n = evbuffer_add_printf(buf, "# HELP %.*s %s.\n# TYPE %.*s %s\n", (int)fam, m->name,
					m->help, (int)fam, m->name, m->type);
	if (n < 0)
		return -ENOMEM;
	if (m->unit == METRIC_SECONDS)
		n = evbuffer_add_printf(buf, "%s %" PRIu64 ".%09" PRIu64 "\n", m->name,
					m->value / 1000000000u, m->value % 1000000000u);
	else
		n = evbuffer_add_printf(buf, "%s %" PRIu64 "\n", m->name, m->value);
	return n < 0 ? -ENOMEM : 0;
}

/* What the churn of processes costs, event by event: one family for the
 * counts, one for the CPU, a row per kind of event. */
static int event_metrics(struct evbuffer *buf, const struct bpfobj_event_stats *es)
{
	static const char *const kinds[BPFOBJ_EVENT_KINDS] = {
		[BPFOBJ_EV_TITLE] = "title", [BPFOBJ_EV_NEW] = "new", [BPFOBJ_EV_FORK] = "fork",
		[BPFOBJ_EV_EXEC] = "exec",   [BPFOBJ_EV_RUN] = "run", [BPFOBJ_EV_EXIT] = "exit",
		[BPFOBJ_EV_FIRST] = "first",
	};
	static const struct metric family[] = {
		{"profd_process_events_total", "counter",
		 "Process events handled: fork, exec, exit, new (sampled, unknown), run (first "
		 "sample in a new program's own text), first (first sample after an exec, when execs are "
		 "read lazily), title (a title read at exit_group)", 0, METRIC_COUNT},
		{"profd_process_event_cpu_seconds_total", "counter",
		 "CPU seconds the event loop spent on process events, by event, estimated from one "
		 "event in 16 of each kind (the proc_events stage of profd_stage_cpu_seconds_total is "
		 "their exact sum)", 0, METRIC_SECONDS},
	};
	char names[2][BPFOBJ_EVENT_KINDS][80];
	int err = 0;

	for (size_t f = 0; !err && f < 2; f++) {
		for (int k = 0; !err && k < BPFOBJ_EVENT_KINDS; k++) {
			struct metric m = family[f];

			snprintf(names[f][k], sizeof(names[f][k]), "%s{event=\"%s\"}", family[f].name,
				 kinds[k]);
			m.name = names[f][k];
			m.value = f ? es->cpu_ns[k] : es->count[k];
			err = metric_print(buf, &m, k ? &(struct metric){.name = names[f][k - 1]} : NULL);
		}
	}
	return err;
}

static void on_metrics(struct httpd_req *r, void *ctx)
{
	struct api *a = ctx;
	struct evbuffer *buf = evbuffer_new();
	struct sampler_stats st;
	struct procs_stats ps;
	struct heap_stats hs = {};
	struct debuginfod_stats ds;
	struct unwind_stats us;
	struct stackcopy_stats cs;
	struct titles_stats ts;
	struct builder_stats bs;
	struct bpfobj_event_stats es;
	struct memgov_stats ms;
	const struct stagecpu *loop = bpfobj__stagecpu(a->obj);
	int err = buf ? 0 : -ENOMEM;

	/* Every figure first, then the table: each row holds its own value. */
	sampler__stats(a->sm, &st);
	procs__stats(bpfobj__procs(a->obj), &ps);
	if (a->heap)
		heap__stats(a->heap, &hs);
	symbolizer__debuginfod_stats(a->sym, &ds);
	sampler__unwind_stats(a->sm, &us);
	bpfobj__stack_stats(a->obj, &cs);
	titles__stats(bpfobj__titles(a->obj), &ts);
	builder__stats(a->builder, &bs);
	bpfobj__event_stats(a->obj, &es);
	memgov__stats(a->memgov, &ms);

	const struct metric metrics[] = {
		/* The daemon's own cost, with the names Prometheus' clients use. */
		{"process_cpu_seconds_total", "counter",
		 "Total user and system CPU time spent in seconds", (uint64_t)clock__cpu_ns(),
		 METRIC_SECONDS},
		{"process_resident_memory_bytes", "gauge", "Resident memory size in bytes",
		 resident_bytes(), METRIC_COUNT},
		{"profd_stage_cpu_seconds_total{stage=\"drain\"}", "counter",
		 "CPU seconds by stage: drain (reading the BPF rings), proc_events (the "
		 "process-event ring: fork, exec, exit, titles at exit), unwind (user stacks), "
		 "titles (process titles read from /proc), all on the event loop's "
		 "thread, each charged once; build (profiles built and encoded, on the builder "
		 "thread)", loop->ns[BPFOBJ_STAGE_DRAIN], METRIC_SECONDS},
		{"profd_stage_cpu_seconds_total{stage=\"proc_events\"}", "counter", NULL,
		 loop->ns[BPFOBJ_STAGE_PROC_EVENTS], METRIC_SECONDS},
		{"profd_stage_cpu_seconds_total{stage=\"unwind\"}", "counter", NULL,
		 loop->ns[BPFOBJ_STAGE_UNWIND], METRIC_SECONDS},
		{"profd_stage_cpu_seconds_total{stage=\"titles\"}", "counter", NULL,
		 loop->ns[BPFOBJ_STAGE_TITLES], METRIC_SECONDS},
		{"profd_stage_cpu_seconds_total{stage=\"build\"}", "counter", NULL, bs.cpu_ns,
		 METRIC_SECONDS},
		{"profd_samples_total", "counter", "CPU samples received", st.samples, METRIC_COUNT},
		{"profd_samples_lost_total", "counter",
		 "Samples dropped because a buffer or table was full", st.lost, METRIC_COUNT},
		{"profd_sessions_running", "gauge", "Profiling sessions running",
		 (uint64_t)st.sessions_running, METRIC_COUNT},
		{"profd_sessions_started_total", "counter", "Profiling sessions started",
		 st.sessions_started, METRIC_COUNT},
		{"profd_symbolizer_cache_bytes", "gauge", "Estimated bytes held by the symbol cache",
		 symbolizer__cache_bytes(a->sym), METRIC_COUNT},
		{"profd_symbolizer_cache_objects", "gauge", "ELF objects held by the symbol cache",
		 symbolizer__cache_objects(a->sym), METRIC_COUNT},
		{"profd_processes_tracked", "gauge", "Processes whose memory maps profd holds",
		 ps.processes, METRIC_COUNT},
		{"profd_processes_evicted_total", "counter",
		 "Processes dropped from the table to stay within its bound", ps.evictions, METRIC_COUNT},
		{"profd_process_maps_bytes", "gauge", "Estimated bytes held by memory-map snapshots",
		 ps.maps_bytes, METRIC_COUNT},
		{"profd_heap_sampled_total", "counter", "Heap allocations sampled", hs.sampled, METRIC_COUNT},
		{"profd_heap_probe_hits_total", "counter", "Allocator probe hits", hs.calls, METRIC_COUNT},
		{"profd_debuginfod_requests_total", "counter",
		 "Debug files asked of the DEBUGINFOD_URLS servers", ds.requests, METRIC_COUNT},
		{"profd_debuginfod_found_total", "counter", "Debug files debuginfod gave", ds.found, METRIC_COUNT},
		{"profd_debuginfod_failed_total", "counter",
		 "debuginfod fetches that failed (missing, time limit, no server)", ds.failed, METRIC_COUNT},
		{"profd_debuginfod_pending", "gauge", "debuginfod fetches queued or running",
		 ds.pending, METRIC_COUNT},
		{"profd_unwind_table_bytes", "gauge",
		 "Bytes of the CFI row cache the unwinder works from (fixed)", us.table_bytes, METRIC_COUNT},
		{"profd_unwind_samples_total", "counter", "User stacks unwound", us.samples, METRIC_COUNT},
		{"profd_unwind_incomplete_total", "counter",
		 "User stacks that did not reach a thread's outermost frame", us.incomplete, METRIC_COUNT},
		{"profd_unwind_cfi_frames_total", "counter", "Frames unwound by CFI", us.cfi_frames, METRIC_COUNT},
		{"profd_unwind_fp_frames_total", "counter",
		 "Frames taken from the kernel side's frame-pointer walk", us.fp_frames, METRIC_COUNT},
		{"profd_stack_copy_executables", "gauge",
		 "Executables whose samples copy more than the default user stack", cs.exes, METRIC_COUNT},
		{"profd_stack_copy_raises_total", "counter",
		 "Times an executable's stack copy was raised", cs.raised, METRIC_COUNT},
		{"profd_process_titles", "gauge",
		 "Processes whose title labels (backend_type, ...) profd holds", ts.processes, METRIC_COUNT},
		{"profd_process_title_reads_total", "counter",
		 "Reads of a process's title from /proc (rate-limited per process)", ts.reads, METRIC_COUNT},
		{"profd_process_exit_titles_total", "counter",
		 "Titles the kernel side read as a process called exit_group", ts.exit_titles,
		 METRIC_COUNT},
		{"profd_process_exit_titles_used_total", "counter",
		 "Of those, the labels of a process sampled but gone before its title was read",
		 ts.exit_titles_used, METRIC_COUNT},
		{"profd_heap_probe_cost_ppm", "gauge",
		 "Cost of the heap probes over the last --heap-budget window, millionths of one CPU",
		 (uint64_t)(hs.cost_ratio * 1e6 + 0.5), METRIC_COUNT},
		{"profd_heap_detached", "gauge",
		 "1 once --heap-budget has stopped heap tracking (its probes detached)",
		 (uint64_t)hs.detached, METRIC_COUNT},
		{"profd_processes_limit", "gauge",
		 "Bound on processes tracked (config max_processes)", ps.max, METRIC_COUNT},
		{"profd_processes_exited", "gauge",
		 "Processes tracked that have exited, kept for profiles still running", ps.exited, METRIC_COUNT},
		{"profd_process_maps_reads_total", "counter",
		 "/proc/PID/maps files read (at a process's first sample, exec, or an address "
		 "outside its known mappings)", ps.maps_reads, METRIC_COUNT},
		{"profd_process_maps_truncated_total", "counter",
		 "Memory-map reads cut at max_maps_bytes or max_maps_entries", ps.truncated, METRIC_COUNT},
		{"profd_symbolizer_cache_objects_limit", "gauge",
		 "Bound on ELF objects in the symbol cache (config max_objects)",
		 symbolizer__max_objects(a->sym), METRIC_COUNT},
		{"profd_open_fds", "gauge", "File descriptors the daemon has open", open_fds(), METRIC_COUNT},
		{"profd_ring_reads_cut_total", "counter",
		 "Reads of the BPF rings cut short to let the event loop run (the rest is read "
		 "on its next pass)", bpfobj__drain_cuts(a->obj), METRIC_COUNT},
		{"profd_unwind_cache_bytes", "gauge",
		 "Estimated bytes held by the unwinder's own object cache (call frame information)",
		 symbolizer__cache_bytes(a->unwind_sym), METRIC_COUNT},
		{"profd_unwind_cache_objects", "gauge", "ELF objects held by the unwinder's cache",
		 symbolizer__cache_objects(a->unwind_sym), METRIC_COUNT},
		{"profd_builds_total", "counter",
		 "Profiles built and encoded by the builder thread", bs.jobs_done, METRIC_COUNT},
		{"profd_builds_queued", "gauge",
		 "Profiles waiting for the builder thread, the one it is building included",
		 (uint64_t)bs.queued, METRIC_COUNT},
		{"profd_build_seconds_total", "counter",
		 "Wall-clock seconds the builder thread spent building (milliseconds / 1000, "
		 "rounded down)", bs.busy_ns / 1000000000ull, METRIC_COUNT},
		{"profd_memory_limit_bytes", "gauge",
		 "The daemon's memory limit (max_memory_mb; 0: none)", ms.limit_bytes, METRIC_COUNT},
		{"profd_memory_used_bytes", "gauge",
		 "Anonymous and shared-memory resident bytes, what max_memory_mb limits",
		 ms.used_bytes, METRIC_COUNT},
		{"profd_memory_pressure_total", "counter",
		 "Checks that found the daemon over max_memory_mb (each evicts from the symbol "
		 "caches)", ms.pressure, METRIC_COUNT},
		{"profd_memory_freed_bytes_total", "counter",
		 "Resident bytes those evictions gave back, as measured", ms.freed_bytes, METRIC_COUNT},
		{"profd_memory_coarse", "gauge",
		 "1 while memory pressure has profiles symbolized without DWARF (no lines, no "
		 "inlined frames)", (uint64_t)ms.coarse, METRIC_COUNT},
	};

	for (size_t i = 0; !err && i < sizeof(metrics) / sizeof(metrics[0]); i++)
		err = metric_print(buf, &metrics[i], i ? &metrics[i - 1] : NULL);
	if (!err)
		err = event_metrics(buf, &es);
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

/* {"pids": [...], "exes": [...]}; both empty is the whole system. */
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
	{EVHTTP_REQ_GET, "/profile/cpu", on_profile_status},
	{EVHTTP_REQ_DELETE, "/profile/cpu", on_profile_stop},
	{EVHTTP_REQ_GET, "/debug/pprof/profile", on_pprof_profile},
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
}

/* Each stop queues that session's done callback, which replies. */
static void on_shutdown(void *ctx)
{
	struct api *a = ctx;
	int n = 0;

	a->post = NULL;
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
	a->sm = opts->sampler;
	a->sym = opts->sym;
	a->unwind_sym = opts->unwind_sym;
	a->builder = opts->builder;
	a->heap = opts->heap;
	a->memgov = opts->memgov;
	a->targets = opts->targets;
	a->labels = opts->labels;
	a->start_ns = clock__mono_ns();
	err = httpd__new(base,
			 &(struct httpd_opts){
				 .host = opts->host,
				 .port = opts->port,
				 .routes = routes,
				 .ctx = a,
				 .on_shutdown = on_shutdown,
				 .max_connections = opts->max_connections,
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
