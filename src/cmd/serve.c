// SPDX-License-Identifier: BSD-2-Clause
/*
 * profd serve: the daemon.  Loads the BPF sampler once, then answers the
 * HTTP API (server/api.c) until SIGTERM or SIGINT, which stop every running
 * session so each waiting client still gets its profile.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/env.h"
#include "cmd/pipeline.h"
#include "cmd/sdnotify.h"
#include "cpu/sampler.h"
#include "heap/heap.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/strbuf.h"
#include "proc/procs.h"
#include "profile/builder.h"
#include "profile/labels.h"
#include "profile/memgov.h"
#include "server/api.h"
#include "server/config.h"
#include "server/httpd.h"
#include "symbolizer/symbolizer.h"
#include "tracer/bpfobj.h"
#include "tracer/kernel.h"


struct serve {
	struct event_base *base;
	struct api *api;
	bool stopping;
};

static void serve_usage(FILE *f)
{
	fprintf(f,
		"usage: profd serve [--listen ADDR:PORT] [--pid PID]... [--exe NAME_OR_PATH]...\n"
		"                   [--config FILE] [--labels LIST] [--max-memory MB]\n"
		"\n"
		"  --listen ADDR:PORT  where to serve the HTTP API (default %s;\n"
		"                      IPv6 as [::1]:7117).  It hands out every profiled\n"
		"                      process's stacks: keep it on loopback\n"
		"  --pid PID           profile this process (and its children) by default\n"
		"  --exe NAME|PATH     profile every process running this executable by default\n"
		"                      (no --pid and no --exe: the whole system)\n"
		"  --config FILE       JSON: {\"listen\": \"%s\",\n"
		"                      \"pids\": [...], \"exes\": [...], \"heap\": false,\n"
		"                      \"heap_sample_bytes\": N, \"heap_budget\": PCT,\n"
		"                      \"max_connections\": N, \"labels\": \"LIST\", and the\n"
		"                      cache bounds max_processes, max_maps_bytes,\n"
		"                      max_maps_entries, max_objects, symbol_cache_bytes,\n"
		"                      max_memory_mb\n"
		"                      (docs/operations.md)};\n"
		"                      --listen overrides it, --pid and --exe add to it\n"
		"  --heap              track the targets' heap from start-up (uprobes on malloc\n"
		"                      & co.): GET /profile/heap, /debug/pprof/heap, .../allocs\n"
		"  --heap-sample-bytes N  mean bytes between sampled allocations (default 524288)\n"
		"  --heap-budget PCT   stop heap tracking (detach its probes) once they cost over\n"
		"                      PCT %% of one CPU for %d s (default: no budget)\n"
		"  --max-connections N HTTP connections open at once; past it 503 (default %d)\n"
		"  --labels LIST       the labels samples carry unless a request asks otherwise:\n"
		"                      pid, tid, thread_name, process_name, backend_type,\n"
		"                      database, user, default, all (default: process_name,\n"
		"                      backend_type, database, user)\n"
		"  --max-memory MB     hold the daemon's own memory (anonymous resident) under\n"
		"                      MB MiB by evicting symbol caches, then symbolizing\n"
		"                      without DWARF (default %d; 0: no limit)\n"
		"\n"
		"Routes: POST|GET|DELETE /profile/cpu, GET /debug/pprof/profile, /profile/heap,\n"
		"/debug/pprof/heap, /debug/pprof/allocs, /health, /metrics, /.\n"
		"See docs/api.md.\n",
		CONFIG_DEFAULT_LISTEN, CONFIG_DEFAULT_LISTEN, HEAP_BUDGET_WINDOW_S,
		HTTPD_DEFAULT_MAX_CONNECTIONS, MEMGOV_MAX_MEMORY_DEFAULT);
}

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

enum { OPT_HEAP_BUDGET = 0x100, OPT_MAX_MEMORY };	/* long options without a short one */

/* Options, then the config file under them: flags override or add. */
static int serve__parse_args(int argc, char **argv, struct config *cfg, bool *help)
{
	static const struct option longopts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"pid", required_argument, NULL, 'p'},
		{"exe", required_argument, NULL, 'e'},
		{"config", required_argument, NULL, 'c'},
		{"heap", no_argument, NULL, 'H'},
		{"heap-sample-bytes", required_argument, NULL, 'B'},
		{"max-connections", required_argument, NULL, 'M'},
		{"labels", required_argument, NULL, 'L'},
		{"heap-budget", required_argument, NULL, OPT_HEAP_BUDGET},
		{"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct targets cli = {};
	const char *listen = NULL, *config_path = NULL, *labels = NULL;
	long heap_bytes = 0, max_conns = 0;
	size_t max_memory = 0;
	double heap_budget = -1;
	bool heap = false;
	char errbuf[512];
	int opt, err = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "l:p:e:c:hHB:M:L:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'l':
			listen = optarg;
			break;
		case 'p':
			err = cli__pid(&cli, optarg);
			if (err)
				goto cleanup;
			break;
		case 'e':
			err = cli__exe(&cli, optarg);
			if (err)
				goto cleanup;
			break;
		case 'c':
			config_path = optarg;
			break;
		case 'H':
			heap = true;
			break;
		case 'B':
			err = cli__heap_sample_bytes(optarg, &heap_bytes);
			if (err)
				goto cleanup;
			break;
		case 'M':
			if (parse__int(optarg, 1, CONFIG_MAX_CONNECTIONS, &max_conns)) {
				log__error("--max-connections must be 1..%d, not '%s'",
					   CONFIG_MAX_CONNECTIONS, optarg);
				err = -EINVAL;
				goto cleanup;
			}
			break;
		case 'L':
			labels = optarg;
			break;
		case OPT_HEAP_BUDGET:
			err = cli__heap_budget(optarg, &heap_budget);
			if (err)
				goto cleanup;
			break;
		case OPT_MAX_MEMORY:
			err = cli__max_memory(optarg, &max_memory);
			if (err)
				goto cleanup;
			break;
		case 'h':
			*help = true;
			goto cleanup;
		default:
			serve_usage(stderr);
			err = -EINVAL;
			goto cleanup;
		}
	}
	if (optind < argc) {
		log__error("unexpected argument '%s' (see profd serve --help)", argv[optind]);
		err = -EINVAL;
		goto cleanup;
	}
	if (config_path) {
		err = config__load(cfg, config_path, errbuf, sizeof(errbuf));
		if (err) {
			log__error("%s", errbuf);
			goto cleanup;
		}
	}
	for (size_t i = 0; !err && i < cli.npids; i++)
		err = targets__add_pid(&cfg->targets, cli.pids[i]);
	for (size_t i = 0; !err && i < cli.nexes; i++)
		err = targets__add_exe(&cfg->targets, cli.exes[i]);
	if (!err && listen) {
		free(cfg->listen);
		cfg->listen = strdup(listen);
		err = cfg->listen ? 0 : -ENOMEM;
	}
	if (err)
		log__error("out of memory");
	cfg->heap |= heap;
	if (heap_bytes)
		cfg->heap_sample_bytes = heap_bytes;
	if (max_conns)
		cfg->max_connections = (int)max_conns;
	if (!err && labels) {
		err = cli__labels(labels, &cfg->labels);
		cfg->labels_set = !err;
	}
	if (!cfg->labels_set)
		cfg->labels = LABELS_DEFAULT;
	if (heap_budget >= 0)
		cfg->heap_budget = heap_budget;
	if (max_memory)
		cfg->limits.max_memory_mb = max_memory;
cleanup:
	targets__free(&cli);
	return err;
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
	struct event *sigint = NULL, *sigterm = NULL, *watchdog = NULL;
	uint64_t watchdog_usec;
	const char *listen;
	char host[256], errbuf[256], labels[LABELS_LIST_MAX];
	bool help = false;
	size_t mem_mb;
	int port, err;

	err = serve__parse_args(argc, argv, &cfg, &help);
	if (err || help) {
		if (help)
			serve_usage(stdout);
		goto cleanup;
	}
	listen = cfg.listen ? cfg.listen : CONFIG_DEFAULT_LISTEN;
	if (config__parse_listen(listen, host, sizeof(host), &port)) {
		log__error("--listen must be ADDR:PORT (e.g. %s), not '%s'", CONFIG_DEFAULT_LISTEN,
			   listen);
		err = -EINVAL;
		goto cleanup;
	}
	/* Fail now, not on every request, when a default target is already gone. */
	err = targets__check(&cfg.targets, errbuf, sizeof(errbuf));
	if (err) {
		log__error("default targets: %s", errbuf);
		goto cleanup;
	}
	/* A client that hangs up mid-reply must not kill the daemon. */
	signal(SIGPIPE, SIG_IGN);

	env__read(&env);
	err = pipeline__open(&pl, cfg.heap, &env);
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
	sv.base = pl.base;
	if (cfg.heap) {
		err = heap__start(pl.base, pl.obj,
				  &(struct heap_opts){
					  .targets = &cfg.targets,
					  .sample_bytes = cfg.heap_sample_bytes ?: HEAP_DEFAULT_SAMPLE_BYTES,
					  .budget_percent = cfg.heap_budget,
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
			       .labels = cfg.labels,
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
	kernel__describe(bpfobj__features(pl.obj), cfg.heap, &kernel_line);
	log__info("%s", kernel_line.buf ?: "kernel: ?");
	labels__format(cfg.labels, labels);
	log__info("listening on %s (default targets: %s; labels: %s)", listen,
		  cfg.targets.npids || cfg.targets.nexes ? "as configured" : "the whole system",
		  *labels ? labels : "none");
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
	if (watchdog)
		event_free(watchdog);
	pipeline__close(&pl);
	config__free(&cfg);
	strbuf__free(&kernel_line);
	return err ? 1 : 0;
}
