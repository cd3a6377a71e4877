/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * config: profd serve's settings, from a JSON file and the command line.
 *
 *   {"listen": "127.0.0.1:7117", "pids": [1234], "exes": ["postgres"],
 *    "labels": "default,pid"}
 *
 * Every key is optional; unknown keys are an error, so a typo doesn't
 * silently profile the whole system.
 */
#ifndef PROFD_CONFIG_H
#define PROFD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracer/targets.h"

struct json_object;

/* Loopback only: the API hands out stacks of every process it profiles.
 * 7117 collides neither with compute_ctl (3080) nor the pageserver (9898). */
#define CONFIG_DEFAULT_LISTEN "127.0.0.1:7117"
#define CONFIG_MAX_TARGETS 256	/* pids, and exes, each */

/* Bounds of the daemon's caches; 0: the built-in default. */
struct config_limits {
	size_t max_processes;		/* processes tracked (procs) */
	size_t max_maps_bytes;		/* of one /proc/PID/maps read */
	size_t max_maps_entries;	/* executable mappings kept per process */
	size_t max_objects;		/* ELF objects cached, up to 3 fds each */
	size_t symbol_cache_bytes;	/* the symbolizer's estimated bytes */
	/* MiB the daemon holds itself to (profile/memgov.h); 0: the default,
	 * MEMGOV_MAX_MEMORY_NONE: no limit. */
	size_t max_memory_mb;
	/* What a profile of a /debug/pprof/ route may hold before it is coarsened
	 * (pprof.h's struct pprof_limits): samples, and bytes of protobuf
	 * before gzip.  0: Pyroscope's defaults, CONFIG_LIMIT_NONE: no bound. */
	size_t max_profile_samples;
	size_t max_profile_bytes;
};

#define CONFIG_LIMIT_NONE ((size_t)-1)	/* what 0 (no bound) is stored as */
#define CONFIG_MAX_PROFILE_SAMPLES (1 << 30)
/* off_cpu_period_us's bounds (cmd/cli.h's --off-cpu-period-us). */
#define CONFIG_OFFCPU_PERIOD_MIN 10
#define CONFIG_OFFCPU_PERIOD_MAX 1000000
#define CONFIG_MIN_PROFILE_BYTES 4096
#define CONFIG_MAX_PROFILE_BYTES (1ll << 32)

struct config {
	char *listen;			/* "ADDR:PORT", or NULL for the default */
	struct targets targets;		/* the default targets of every request */
	bool heap;			/* track the targets' heap from start-up */
	uint64_t heap_sample_bytes;	/* 0: the default */
	uint64_t off_cpu_period_us;	/* off-CPU time a kept switch stands for; 0: the default */
	int max_connections;		/* HTTP connections open at once; 0: the default */
	bool labels_set;		/* "labels" was given */
	unsigned labels;		/* the default labels of every profile (profile/labels.h) */
	double heap_budget;		/* percent of one CPU the heap probes may cost; 0: none */
	size_t heap_max_attach;		/* processes x allocators probed at most; 0: the default */
	bool heap_all_processes;	/* heap probes in every process's memory (heap.h) */
	int exit_hook;			/* enum bpfobj_exit_hook; 0: auto */
	/* Host names requests may carry besides IP addresses, localhost and
	 * this machine's name (server/httpd.h); NULL-ended, or NULL. */
	char **allowed_hosts;
	struct config_limits limits;
	/* "log_level", "log_format" (lib/log.h's names), when given. */
	bool log_level_set, log_format_set;
	int log_level;			/* enum log_level */
	int log_format;			/* enum log_format */
	/* "scratch_dir": where debug files are inflated (an absolute path, or
	 * "" for none: symbolizer__set_scratch_dir); NULL when not given. */
	char *scratch_dir;
};

#define CONFIG_MAX_CONNECTIONS 65536

/*
 * Read FILE into cfg: "listen" replaces cfg->listen, "pids" and "exes"
 * are added to cfg->targets.  0, or negative errno with errbuf saying why.
 */
int config__load(struct config *cfg, const char *path, char *errbuf, size_t errlen);

/*
 * Split "ADDR:PORT" ("[::1]:7117" for IPv6) into host (NUL-terminated,
 * brackets removed) and port 1..65535.  0 or -EINVAL.
 */
int config__parse_listen(const char *s, char *host, size_t hostlen, int *port);

/*
 * Append a JSON array of process ids (integers 1..INT_MAX) or executables
 * (non-empty strings) to tl.  name is the field as errors should call it,
 * e.g. "targets.pids".  0, or negative errno with errbuf saying why.
 */
int config__json_pids(struct targets *tl, struct json_object *arr, const char *name,
		     char *errbuf, size_t errlen);
int config__json_exes(struct targets *tl, struct json_object *arr, const char *name,
		      char *errbuf, size_t errlen);

void config__free(struct config *cfg);

#endif
