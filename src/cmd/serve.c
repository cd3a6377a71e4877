// SPDX-License-Identifier: BSD-2-Clause
/*
 * profd serve: the daemon.  Loads the BPF sampler once, then answers the
 * HTTP API (server/api.c) until SIGTERM or SIGINT, which stop every running
 * session so each waiting client still gets its profile.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "cmd/commands.h"
#include "cmd/env.h"
#include "cmd/pipeline.h"
#include "cmd/sdnotify.h"
#include "cmd/serve_args.h"
#include "cpu/sampler.h"
#include "heap/heap.h"
#include "lib/buildinfo.h"
#include "lib/log.h"
#include "lib/strbuf.h"
#include "pprof/pprof.h"
#include "proc/procs.h"
#include "profile/builder.h"
#include "profile/labels.h"
#include "profile/memgov.h"
#include "server/api.h"
#include "server/config.h"
#include "symbolizer/symbolizer.h"
#include "tracer/bpfobj.h"
#include "tracer/kernel.h"


struct serve {
	struct event_base *base;
	struct api *api;
	bool stopping;
};

static void on_watchdog(evutil_socket_t fd, short what, void *arg)
{
	sdnotify__send_or_warn("WATCHDOG=1");
}

static void on_drained(void *ctx)
{
	struct serve *sv = ctx;

	event_base_loopbreak(sv->base);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct serve *sv = arg;

	if (sv->stopping) {
		log__warn("%s again: exiting without waiting for replies", strsignal(sig));
		event_base_loopbreak(sv->base);
		return;
	}
	sv->stopping = true;
	log__info("%s: shutting down", strsignal(sig));
	sdnotify__send_or_warn("STOPPING=1");
	api__shutdown(sv->api, on_drained, sv);
}

/*
 * Signals whose default is to end the process, which a supervisor or an
 * operator may send without meaning that (a terminal's hang-up, logrotate's
 * HUP, a USR1 for "reload"): the daemon says so and goes on serving.  It has
 * no log file to reopen (it writes to stderr: journald, or the inittab's
 * redirection) and re-reads no setting while it runs; a restart does.
 */
static const int kept_signals[] = {SIGHUP, SIGUSR1, SIGUSR2};
#define NKEPT (sizeof(kept_signals) / sizeof(kept_signals[0]))

static void on_kept_signal(evutil_socket_t sig, short what, void *arg)
{
	log__info("%s: ignored, still serving (profd logs to stderr, with no file to reopen, "
		  "and re-reads its settings only when restarted)", strsignal(sig));
}

/* One bound of the /debug/pprof/ routes' profiles: 0 in the config is Pyroscope's
 * default (def), CONFIG_LIMIT_NONE none (0 to pprof). */
static size_t scrape_limit(size_t v, size_t def)
{
	return v == CONFIG_LIMIT_NONE ? 0 : v ? v : def;
}

static struct pprof_limits scrape_limits(const struct config_limits *l)
{
	return (struct pprof_limits){
		scrape_limit(l->max_profile_samples, PPROF_PYROSCOPE_MAX_SAMPLES),
		scrape_limit(l->max_profile_bytes, PPROF_PYROSCOPE_MAX_BYTES),
	};
}

int serve__main(int argc, char **argv)
{
	struct serve sv = {};
	struct config cfg = {};
	struct strbuf kernel_line = {};
	struct pipeline pl = {};
	struct env env;
	struct heap *heap = NULL;
	struct memgov *memgov = NULL;
	struct event *sigint = NULL, *sigterm = NULL, *watchdog = NULL, *kept[NKEPT] = {};
	uint64_t watchdog_usec;
	const char *listen;
	char host[256], errbuf[256], labels[LABELS_LIST_MAX];
	bool help = false;
	size_t mem_mb;
	int port, err;

	err = serve_args__parse(argc, argv, &cfg, &help);
	/* First, in the format and at the level the options asked for, so that
	 * every log of a run says what ran, even one that stops on its options
	 * (after what stopped it, then). */
	if (!help)
		log__info("%s", buildinfo__line());
	if (err || help) {
		if (help)
			serve_args__usage(stdout);
		goto cleanup;
	}
	listen = cfg.listen ? cfg.listen : CONFIG_DEFAULT_LISTEN;
	if (config__parse_listen(listen, host, sizeof(host), &port)) {
		log__error("--listen must be ADDR:PORT (e.g. %s), not '%s'", CONFIG_DEFAULT_LISTEN,
			   listen);
		err = -EINVAL;
		goto cleanup;
	}
	/*
	 * A default target that is gone, or not there yet, must not stop the
	 * daemon: under Restart= or an inittab's respawn that is a restart
	 * loop, and a stale pid in a config file would never start again.  A
	 * gone pid is dropped, a path not there yet waited for; only a
	 * malformed name (which no restart mends) fails.
	 */
	cfg.targets.defaults = true;
	if (targets__drop_gone(&cfg.targets, errbuf, sizeof(errbuf)))
		log__warn("%s; still serving /health, /metrics and requests naming targets", errbuf);
	err = targets__check(&cfg.targets, errbuf, sizeof(errbuf));
	if (err) {
		log__error("default targets: %s", errbuf);
		goto cleanup;
	}
	for (size_t i = 0; i < cfg.targets.nexes; i++)
		if (strchr(cfg.targets.exes[i], '/') && !cfg.targets.exe_ids[i].ok)
			log__warn("default target %s does not exist yet: its processes are "
				  "profiled once it does", cfg.targets.exes[i]);
	/* A client that hangs up mid-reply must not kill the daemon. */
	signal(SIGPIPE, SIG_IGN);

	env__read(&env);
	/* Off-CPU profiles are served on request, like CPU profiles. */
	err = pipeline__open(&pl, cfg.heap, true, cfg.exit_hook, &env);
	if (err)
		goto cleanup;
	procs__set_limits(bpfobj__procs(pl.obj), cfg.limits.max_processes,
			  cfg.limits.max_maps_bytes, cfg.limits.max_maps_entries);
	/* Before anything is submitted to the builder: it sets pl.sym's bounds. */
	mem_mb = cfg.limits.max_memory_mb ?: MEMGOV_MAX_MEMORY_DEFAULT;
	err = memgov__new(pl.base,
			  &(struct memgov_opts){
				  .limit_bytes = mem_mb == MEMGOV_MAX_MEMORY_NONE ? 0 : mem_mb << 20,
				  .builder = pl.builder,
				  .sym = pl.sym,
				  .unwind_sym = pl.unwind_sym,
				  .sym_bytes = cfg.limits.symbol_cache_bytes,
				  .max_objects = cfg.limits.max_objects,
			  },
			  &memgov);
	if (err)
		goto cleanup;
	/* The sessions' stacks get a quarter of the limit: 16 sessions at
	 * 1000 Hz on distinct deep stacks took the daemon to 360 MB. */
	if (mem_mb != MEMGOV_MAX_MEMORY_NONE)
		sampler__set_stack_limit(pl.sm, (size_t)mem_mb << 20 >> 2);
	sampler__set_offcpu_period(pl.sm, cfg.off_cpu_period_us * 1000);
	sv.base = pl.base;
	if (cfg.heap) {
		err = heap__start(pl.base, pl.obj,
				  &(struct heap_opts){
					  .targets = &cfg.targets,
					  .sample_bytes = cfg.heap_sample_bytes ?: HEAP_DEFAULT_SAMPLE_BYTES,
					  .budget_percent = cfg.heap_budget,
					  .max_attach = cfg.heap_max_attach,
					  .all_processes = cfg.heap_all_processes,
				  },
				  &heap, errbuf, sizeof(errbuf));
		if (err) {
			log__error("%s", errbuf);
			goto cleanup;
		}
	}
	err = api__new(sv.base,
		       &(struct api_opts){
			       .host = host,
			       .port = port,
			       .obj = pl.obj,
			       .sampler = pl.sm,
			       .builder = pl.builder,
			       .sym = pl.sym,
			       .unwind_sym = pl.unwind_sym,
			       .heap = heap,
			       .memgov = memgov,
			       .targets = &cfg.targets,
			       .max_connections = cfg.max_connections,
			       .allowed_hosts = (const char *const *)cfg.allowed_hosts,
			       .labels = cfg.labels,
			       .scrape_limits = scrape_limits(&cfg.limits),
		       },
		       &sv.api);
	if (err)
		goto cleanup;
	sigint = evsignal_new(sv.base, SIGINT, on_signal, &sv);
	sigterm = evsignal_new(sv.base, SIGTERM, on_signal, &sv);
	if (!sigint || !sigterm || event_add(sigint, NULL) || event_add(sigterm, NULL)) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < NKEPT; i++) {
		kept[i] = evsignal_new(sv.base, kept_signals[i], on_kept_signal, &sv);
		if (!kept[i] || event_add(kept[i], NULL)) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	kernel__describe(bpfobj__features(pl.obj),
			 cfg.heap ? heap__probes_text(bpfobj__features(pl.obj),
						      cfg.heap_all_processes ||
							      targets__whole_system(&cfg.targets)) :
				    NULL,
			 &kernel_line);
	log__info("%s", kernel_line.buf ?: "kernel: ?");
	labels__format(cfg.labels, labels);
	log__info("listening on %s (default targets: %s; labels: %s)", listen,
		  targets__whole_system(&cfg.targets) ? "the whole system" :
		  cfg.targets.npids || cfg.targets.nexes ? "as configured" : "none left",
		  *labels ? labels : "none");
	{
		struct pprof_limits sl = scrape_limits(&cfg.limits);

		log__info("/debug/pprof/ profiles are coarsened past %zu samples or %zu bytes "
			  "(0: no bound; --max-profile-samples, --max-profile-bytes)",
			  sl.max_samples, sl.max_bytes);
	}
	watchdog_usec = sdnotify__watchdog_usec();
	if (watchdog_usec) {
		struct timeval tv = {watchdog_usec / 1000000, watchdog_usec % 1000000};

		watchdog = event_new(sv.base, -1, EV_PERSIST, on_watchdog, NULL);
		if (!watchdog || event_add(watchdog, &tv)) {
			err = -ENOMEM;
			goto cleanup;
		}
		log__info("systemd watchdog: WATCHDOG=1 every %.1f s from the event loop",
			  watchdog_usec / 1e6);
	}
	sdnotify__send_or_warn("READY=1");
	event_base_dispatch(sv.base);
	log__info("stopped");
cleanup:
	/* The builder first: it waits for the profile it is building, and
	 * hands every job back while the API, heap and sessions they use are
	 * all still there. */
	builder__free(pl.builder);
	pl.builder = NULL;
	memgov__free(memgov);	/* after the builder: its job may have been queued */
	/* Then sessions: they hold links the sampler detaches. */
	api__free(sv.api);
	heap__free(heap);
	if (sigint)
		event_free(sigint);
	if (sigterm)
		event_free(sigterm);
	for (size_t i = 0; i < NKEPT; i++)
		if (kept[i])
			event_free(kept[i]);
	if (watchdog)
		event_free(watchdog);
	pipeline__close(&pl);
	config__free(&cfg);
	strbuf__free(&kernel_line);
	return err ? 1 : 0;
}
