// SPDX-License-Identifier: BSD-2-Clause
/* serve_args: profd serve's options and usage (the contract: serve_args.h). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/serve_args.h"
#include "heap/heap.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "pprof/pprof.h"
#include "profile/labels.h"
#include "profile/memgov.h"
#include "server/config.h"
#include "server/httpd.h"
#include "symbolizer/symbolizer.h"

void serve_args__usage(FILE *f)
{
	fprintf(f,
		"usage: profd serve [--listen ADDR:PORT] [--pid PID]... [--exe NAME_OR_PATH]...\n"
		"                   [--config FILE] [--labels LIST] [--max-memory MB]\n"
		"                   [--max-profile-samples N] [--max-profile-bytes N]\n"
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
		"                      \"heap_all_processes\": false, \"heap_max_attach\": N,\n"
		"                      \"off_cpu_period_us\": N, \"exit_hook\": \"auto\",\n"
		"                      \"max_connections\": N, \"labels\": \"LIST\", and the\n"
		"                      cache bounds max_processes, max_maps_bytes,\n"
		"                      max_maps_entries, max_objects, symbol_cache_bytes,\n"
		"                      max_memory_mb, max_profile_samples, max_profile_bytes,\n"
		"                      log_level, log_format, scratch_dir\n"
		"                      (docs/operations.md)};\n"
		"                      --listen overrides it, --pid and --exe add to it\n"
		"  --heap              track the targets' heap from start-up (uprobes on malloc\n"
		"                      & co.): GET /profile/heap, /debug/pprof/heap, .../allocs\n"
		"  --heap-all-processes  --heap, with one probe on each allocator that every\n"
		"                      process mapping it traps on (the BPF side keeps the\n"
		"                      targets'), instead of probes in the targets' memory only\n"
		"  --heap-sample-bytes N  mean bytes between sampled allocations (default 524288)\n"
		"  --heap-budget PCT   stop heap tracking (detach its probes) once they cost over\n"
		"                      PCT %% of one CPU for %d s (default: no budget)\n"
		"  --off-cpu-period-us N  off-CPU time a kept switch stands for on average, in\n"
		"                      microseconds (GET /debug/pprof/offcpu, /debug/fgprof;\n"
		"                      default 10000)\n"
		"  --max-connections N HTTP connections open at once; past it 503 (default %d)\n"
		"  --labels LIST       the labels samples carry unless a request asks otherwise:\n"
		"                      pid, tid, thread_name, process_name, backend_type,\n"
		"                      database, user, default, all (default: process_name,\n"
		"                      backend_type, database, user)\n"
		"  --max-memory MB     hold the daemon's own memory (anonymous resident) under\n"
		"                      MB MiB by evicting symbol caches, then symbolizing\n"
		"                      without DWARF (default %d; 0: no limit)\n"
		"  --max-profile-samples N, --max-profile-bytes N\n"
		"                      what a /debug/pprof/* profile may hold (samples; bytes\n"
		"                      before gzip) before it is coarsened: labels beyond the\n"
		"                      defaults merged, rare stacks folded into their callers\n"
		"                      (default %u and %u, Pyroscope's limits; 0: no bound)\n"
		"  --log-level LEVEL   error, warn, info (default) or debug\n"
		"  --log-format FMT    text (default), logfmt or json; outside journald every\n"
		"                      line has its time and level\n"
		"  --scratch-dir DIR   where debug files with compressed DWARF are inflated,\n"
		"                      as unlinked files, for libdw to map rather than hold\n"
		"                      on the heap (default %s; \"\": in memory; a tmpfs\n"
		"                      or unwritable directory is the same as \"\")\n"
		"\n"
		"Routes: POST|GET|DELETE /profile/cpu, GET /debug/pprof/profile, /profile/heap,\n"
		"/debug/pprof/heap, /debug/pprof/allocs, /health, /metrics, /.\n"
		"See docs/api.md.\n",
		CONFIG_DEFAULT_LISTEN, CONFIG_DEFAULT_LISTEN, HEAP_BUDGET_WINDOW_S,
		HTTPD_DEFAULT_MAX_CONNECTIONS, MEMGOV_MAX_MEMORY_DEFAULT,
		PPROF_PYROSCOPE_MAX_SAMPLES, PPROF_PYROSCOPE_MAX_BYTES, symbolizer__scratch_dir());
}

/* long options without a short one */
enum { OPT_HEAP_BUDGET = 0x100, OPT_MAX_MEMORY, OPT_MAX_SAMPLES, OPT_MAX_BYTES, OPT_LOG_LEVEL,
       OPT_LOG_FORMAT, OPT_HEAP_PER_PROCESS, OPT_HEAP_ALL, OPT_OFFCPU_PERIOD,
       OPT_SCRATCH_DIR };

/* --max-profile-samples and --max-profile-bytes: min..max, or 0 (stored as
 * CONFIG_LIMIT_NONE) for no bound. */
static int profile_limit(const char *opt, const char *arg, long long min, long long max,
			 size_t *out)
{
	long v;

	if (parse__int(arg, 0, max, &v) || (v && v < min)) {
		log__error("--%s must be %lld..%lld, or 0 for no bound, not '%s'", opt, min, max,
			   arg);
		return -EINVAL;
	}
	*out = v ? (size_t)v : CONFIG_LIMIT_NONE;
	return 0;
}

int serve_args__parse(int argc, char **argv, struct config *cfg, bool *help)
{
	static const struct option longopts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"pid", required_argument, NULL, 'p'},
		{"exe", required_argument, NULL, 'e'},
		{"config", required_argument, NULL, 'c'},
		{"heap", no_argument, NULL, 'H'},
		/* The default since probes follow forks; kept for old units. */
		{"heap-per-process", no_argument, NULL, OPT_HEAP_PER_PROCESS},
		{"heap-all-processes", no_argument, NULL, OPT_HEAP_ALL},
		{"heap-sample-bytes", required_argument, NULL, 'B'},
		{"max-connections", required_argument, NULL, 'M'},
		{"labels", required_argument, NULL, 'L'},
		{"heap-budget", required_argument, NULL, OPT_HEAP_BUDGET},
		{"off-cpu-period-us", required_argument, NULL, OPT_OFFCPU_PERIOD},
		{"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
		{"max-profile-samples", required_argument, NULL, OPT_MAX_SAMPLES},
		{"max-profile-bytes", required_argument, NULL, OPT_MAX_BYTES},
		{"log-level", required_argument, NULL, OPT_LOG_LEVEL},
		{"log-format", required_argument, NULL, OPT_LOG_FORMAT},
		{"scratch-dir", required_argument, NULL, OPT_SCRATCH_DIR},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct targets cli = {};
	const char *listen = NULL, *config_path = NULL, *labels = NULL, *scratch = NULL;
	long heap_bytes = 0, max_conns = 0, period_us = 0;
	size_t max_memory = 0, max_samples = 0, max_bytes = 0;
	double heap_budget = -1;
	bool heap = false, heap_all = false;
	int log_level = -1, log_format = -1;
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
		case OPT_HEAP_ALL:
			heap_all = true;
			/* fall through */
		case OPT_HEAP_PER_PROCESS:
		case 'H':
			heap = true;
			break;
		case 'B':
			err = cli__heap_sample_bytes(optarg, &heap_bytes);
			if (err)
				goto cleanup;
			break;
		case OPT_OFFCPU_PERIOD:
			err = cli__offcpu_period(optarg, &period_us);
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
		case OPT_MAX_SAMPLES:
			err = profile_limit("max-profile-samples", optarg, 1,
					    CONFIG_MAX_PROFILE_SAMPLES, &max_samples);
			if (err)
				goto cleanup;
			break;
		case OPT_MAX_BYTES:
			err = profile_limit("max-profile-bytes", optarg, CONFIG_MIN_PROFILE_BYTES,
					    CONFIG_MAX_PROFILE_BYTES, &max_bytes);
			if (err)
				goto cleanup;
			break;
		/* At once: what follows (the config file's errors) logs so. */
		case OPT_LOG_LEVEL:
			err = cli__log_level(optarg, &log_level);
			if (err)
				goto cleanup;
			log__set_level(log_level);
			break;
		case OPT_LOG_FORMAT:
			err = cli__log_format(optarg, &log_format);
			if (err)
				goto cleanup;
			log__set_format(log_format);
			break;
		case OPT_SCRATCH_DIR:
			scratch = optarg;
			break;
		case 'h':
			*help = true;
			goto cleanup;
		default:
			serve_args__usage(stderr);
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
	cfg->heap_all_processes |= heap_all;
	if (heap_bytes)
		cfg->heap_sample_bytes = heap_bytes;
	if (period_us)
		cfg->off_cpu_period_us = period_us;
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
	if (max_samples)
		cfg->limits.max_profile_samples = max_samples;
	if (max_bytes)
		cfg->limits.max_profile_bytes = max_bytes;
	/* The flags over the file's keys; both from here on. */
	if (log_level >= 0) {
		cfg->log_level = log_level;
		cfg->log_level_set = true;
	}
	if (log_format >= 0) {
		cfg->log_format = log_format;
		cfg->log_format_set = true;
	}
	/* The flag over the file's key; checked the same way either way. */
	if (!err && (scratch || cfg->scratch_dir))
		err = cli__scratch_dir(scratch ? scratch : cfg->scratch_dir);
	if (cfg->log_level_set)
		log__set_level(cfg->log_level);
	if (cfg->log_format_set)
		log__set_format(cfg->log_format);
cleanup:
	targets__free(&cli);
	return err;
}
