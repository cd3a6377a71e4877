// SPDX-License-Identifier: BSD-2-Clause
/*
 * config: serve's settings: the JSON file and the limits the API enforces (the contract:
 * config.h).
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "heap/heap.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "profile/labels.h"
#include "profile/memgov.h"
#include "server/config.h"
#include "server/httpd.h"
#include "tracer/bpfobj.h"
#include "tracer/targets.h"

#define CONFIG_MAX_BYTES (1 << 20)

/* The caches' bounds: key, where in struct config_limits, range, and what
 * a 0 in the file stands for (0: a 0 is out of range like any other). */
static const struct {
	const char *key;
	size_t off;
	int64_t min, max;
	size_t zero;
} limit_keys[] = {
	{"max_processes", offsetof(struct config_limits, max_processes), 16, 1 << 20, 0},
	{"max_maps_bytes", offsetof(struct config_limits, max_maps_bytes), 4096, 1ll << 30, 0},
	{"max_maps_entries", offsetof(struct config_limits, max_maps_entries), 16, 1 << 20, 0},
	{"max_objects", offsetof(struct config_limits, max_objects), 4, 1 << 16, 0},
	{"symbol_cache_bytes", offsetof(struct config_limits, symbol_cache_bytes), 1 << 20,
	 1ll << 40, 0},
	{"max_memory_mb", offsetof(struct config_limits, max_memory_mb), MEMGOV_MAX_MEMORY_MIN,
	 MEMGOV_MAX_MEMORY_MAX, MEMGOV_MAX_MEMORY_NONE},
	{"max_profile_samples", offsetof(struct config_limits, max_profile_samples), 1,
	 CONFIG_MAX_PROFILE_SAMPLES, CONFIG_LIMIT_NONE},
	{"max_profile_bytes", offsetof(struct config_limits, max_profile_bytes),
	 CONFIG_MIN_PROFILE_BYTES, CONFIG_MAX_PROFILE_BYTES, CONFIG_LIMIT_NONE},
};

/* key is one of limit_keys: 1 if so (err set when its value is bad), 0 if not. */
static int limit_key(struct config_limits *l, const char *key, struct json_object *val,
		     int *err, char *msg, size_t msglen)
{
	for (size_t i = 0; i < sizeof(limit_keys) / sizeof(limit_keys[0]); i++) {
		int64_t v = json_object_get_int64(val);

		if (strcmp(key, limit_keys[i].key))
			continue;
		if (json_object_is_type(val, json_type_int) && v == 0 && limit_keys[i].zero) {
			*(size_t *)((char *)l + limit_keys[i].off) = limit_keys[i].zero;
		} else if (!json_object_is_type(val, json_type_int) || v < limit_keys[i].min ||
			   v > limit_keys[i].max) {
			*err = -EINVAL;
			snprintf(msg, msglen, "\"%s\" must be an integer %lld..%lld%s", key,
				 (long long)limit_keys[i].min, (long long)limit_keys[i].max,
				 limit_keys[i].zero ? ", or 0 for none" : "");
		} else {
			*(size_t *)((char *)l + limit_keys[i].off) = (size_t)v;
		}
		return 1;
	}
	return 0;
}

/* arr must be an array of at most CONFIG_MAX_TARGETS entries; *n is its length. */
static int target_array(struct json_object *arr, const char *name, const char *what, size_t *n,
			char *errbuf, size_t errlen)
{
	if (!json_object_is_type(arr, json_type_array)) {
		snprintf(errbuf, errlen, "%s must be an array of %s", name, what);
		return -EINVAL;
	}
	*n = json_object_array_length(arr);
	if (*n > CONFIG_MAX_TARGETS) {
		snprintf(errbuf, errlen, "%s has more than %d entries", name, CONFIG_MAX_TARGETS);
		return -EINVAL;
	}
	return 0;
}

int config__json_pids(struct targets *tl, struct json_object *arr, const char *name,
		      char *errbuf, size_t errlen)
{
	size_t n;
	int err;

	err = target_array(arr, name, "process ids", &n, errbuf, errlen);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);
		int64_t v = 0;

		/* json_type_int only: 1.5, "12" and true are not pids.  Integers
		 * beyond int64 come back clamped, so the range check catches them. */
		if (json_object_is_type(o, json_type_int))
			v = json_object_get_int64(o);
		if (v < 1 || v > INT_MAX) {
			snprintf(errbuf, errlen, "%s[%zu] must be an integer 1..%d", name, i,
				 INT_MAX);
			return -EINVAL;
		}
		if (targets__add_pid(tl, (int)v)) {
			snprintf(errbuf, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

int config__json_exes(struct targets *tl, struct json_object *arr, const char *name,
		      char *errbuf, size_t errlen)
{
	size_t n;
	int err;

	err = target_array(arr, name, "executable names or paths", &n, errbuf, errlen);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);
		const char *s = json_object_is_type(o, json_type_string) ?
				json_object_get_string(o) : "";

		/* An embedded NUL would make the name mean something else. */
		if (!*s || strlen(s) != (size_t)json_object_get_string_len(o) ||
		    strlen(s) >= PATH_MAX) {
			snprintf(errbuf, errlen, "%s[%zu] must be a non-empty name or path", name,
				 i);
			return -EINVAL;
		}
		if (targets__add_exe(tl, s)) {
			snprintf(errbuf, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

static int config__read(const char *path, char **out, char *errbuf, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len;
	int err = 0;

	if (!f) {
		err = -errno;
		snprintf(errbuf, errlen, "cannot open %s: %s", path, strerror(errno));
		return err;
	}
	buf = malloc(CONFIG_MAX_BYTES + 1);
	if (!buf) {
		err = -ENOMEM;
		snprintf(errbuf, errlen, "out of memory");
		goto cleanup;
	}
	len = fread(buf, 1, CONFIG_MAX_BYTES + 1, f);
	if (ferror(f)) {
		err = -EIO;
		snprintf(errbuf, errlen, "cannot read %s", path);
		goto cleanup;
	}
	if (len > CONFIG_MAX_BYTES) {
		err = -EFBIG;
		snprintf(errbuf, errlen, "%s is larger than %d bytes", path, CONFIG_MAX_BYTES);
		goto cleanup;
	}
	buf[len] = '\0';
	*out = buf;
	buf = NULL;
cleanup:
	free(buf);
	fclose(f);
	return err;
}

/* "allowed_hosts": up to HTTPD_MAX_ALLOWED_HOSTS DNS names. */
static int hosts_key(struct config *cfg, struct json_object *val, char *msg, size_t msglen)
{
	size_t n = json_object_is_type(val, json_type_array) ? json_object_array_length(val) : 0;
	char **hosts;

	if (!json_object_is_type(val, json_type_array) || n > HTTPD_MAX_ALLOWED_HOSTS)
		goto bad;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(val, i);
		const char *h = json_object_get_string(e);
		size_t len = h ? strlen(h) : 0;

		if (!json_object_is_type(e, json_type_string) || !len || len > 253 ||
		    strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != len)
			goto bad;
	}
	hosts = calloc(n + 1, sizeof(*hosts));
	if (!hosts)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		hosts[i] = strdup(json_object_get_string(json_object_array_get_idx(val, i)));
		if (!hosts[i]) {
			while (i--)
				free(hosts[i]);
			free(hosts);
			goto nomem;
		}
	}
	for (size_t i = 0; cfg->allowed_hosts && cfg->allowed_hosts[i]; i++)
		free(cfg->allowed_hosts[i]);
	free(cfg->allowed_hosts);
	cfg->allowed_hosts = hosts;
	return 0;
bad:
	snprintf(msg, msglen, "\"allowed_hosts\" must be an array of at most %d host names "
		 "(letters, digits, '.' and '-')", HTTPD_MAX_ALLOWED_HOSTS);
	return -EINVAL;
nomem:
	snprintf(msg, msglen, "out of memory");
	return -ENOMEM;
}

int config__load(struct config *cfg, const char *path, char *errbuf, size_t errlen)
{
	struct json_tokener *tok = NULL;
	struct json_object *root = NULL;
	char *text = NULL, msg[448] = "";
	size_t end;
	int err;

	err = config__read(path, &text, errbuf, errlen);
	if (err)
		return err;
	tok = json_tokener_new();
	if (!tok) {
		err = -ENOMEM;
		snprintf(msg, sizeof(msg), "out of memory");
		goto cleanup;
	}
	root = json_tokener_parse_ex(tok, text, (int)strlen(text));
	end = json_tokener_get_parse_end(tok);
	if (!root || json_tokener_get_error(tok) != json_tokener_success ||
	    text[end + strspn(text + end, " \t\r\n")]) {
		err = -EINVAL;
		snprintf(msg, sizeof(msg), "not valid JSON");
		goto cleanup;
	}
	if (!json_object_is_type(root, json_type_object)) {
		err = -EINVAL;
		snprintf(msg, sizeof(msg), "must be a JSON object");
		goto cleanup;
	}
	json_object_object_foreach(root, key, val) {
		char host[256];
		int port;

		if (!strcmp(key, "listen")) {
			if (!json_object_is_type(val, json_type_string) ||
			    config__parse_listen(json_object_get_string(val), host, sizeof(host),
						 &port)) {
				err = -EINVAL;
				snprintf(msg, sizeof(msg), "\"listen\" must be \"ADDR:PORT\"");
				goto cleanup;
			}
			free(cfg->listen);
	free(cfg->scratch_dir);
			cfg->listen = strdup(json_object_get_string(val));
			if (!cfg->listen) {
				err = -ENOMEM;
				snprintf(msg, sizeof(msg), "out of memory");
			}
		} else if (!strcmp(key, "pids")) {
			err = config__json_pids(&cfg->targets, val, "\"pids\"", msg, sizeof(msg));
		} else if (!strcmp(key, "exes")) {
			err = config__json_exes(&cfg->targets, val, "\"exes\"", msg, sizeof(msg));
		} else if (!strcmp(key, "heap")) {
			if (!json_object_is_type(val, json_type_boolean)) {
				err = -EINVAL;
				snprintf(msg, sizeof(msg), "\"heap\" must be true or false");
			}
			cfg->heap = json_object_get_boolean(val);
		} else if (!strcmp(key, "heap_sample_bytes")) {
			int64_t v = json_object_get_int64(val);

			if (!json_object_is_type(val, json_type_int) || v < 1 || v > (1ll << 40)) {
				err = -EINVAL;
				snprintf(msg, sizeof(msg),
					 "\"heap_sample_bytes\" must be an integer 1..%lld", 1ll << 40);
			}
			cfg->heap_sample_bytes = v;
		} else if (!strcmp(key, "off_cpu_period_us")) {
			int64_t v = json_object_get_int64(val);

			if (!json_object_is_type(val, json_type_int) || v < CONFIG_OFFCPU_PERIOD_MIN ||
			    v > CONFIG_OFFCPU_PERIOD_MAX) {
				err = -EINVAL;
				snprintf(msg, sizeof(msg),
					 "\"off_cpu_period_us\" must be an integer %d..%d",
					 CONFIG_OFFCPU_PERIOD_MIN, CONFIG_OFFCPU_PERIOD_MAX);
			}
			cfg->off_cpu_period_us = v;
		} else if (!strcmp(key, "max_connections")) {
			int64_t v = json_object_get_int64(val);

			if (!json_object_is_type(val, json_type_int) || v < 1 ||
			    v > CONFIG_MAX_CONNECTIONS) {
				err = -EINVAL;
				snprintf(msg, sizeof(msg),
					 "\"max_connections\" must be an integer 1..%d",
					 CONFIG_MAX_CONNECTIONS);
			}
			cfg->max_connections = (int)v;
		} else if (!strcmp(key, "labels")) {
			if (!json_object_is_type(val, json_type_string)) {
				err = -EINVAL;
				snprintf(msg, sizeof(msg), "\"labels\" must be a string such as "
					 "\"default,pid\"");
			} else {
				err = labels__parse(json_object_get_string(val), &cfg->labels, msg,
						    sizeof(msg));
				cfg->labels_set = !err;
			}
		} else if (!strcmp(key, "allowed_hosts")) {
			err = hosts_key(cfg, val, msg, sizeof(msg));
		} else if (!strcmp(key, "heap_budget")) {
			double v = json_object_get_double(val);

			if (!(json_object_is_type(val, json_type_int) ||
			      json_object_is_type(val, json_type_double)) ||
			    !(v >= 0 && v <= HEAP_BUDGET_MAX)) {
				err = -EINVAL;
				snprintf(msg, sizeof(msg),
					 "\"heap_budget\" must be a percent of one CPU, 0..%g",
					 HEAP_BUDGET_MAX);
			}
			cfg->heap_budget = v;
		} else if (!strcmp(key, "log_level")) {
			enum log_level l;

			if (!json_object_is_type(val, json_type_string) ||
			    log__parse_level(json_object_get_string(val), &l)) {
				err = -EINVAL;
				snprintf(msg, sizeof(msg),
					 "\"log_level\" must be \"error\", \"warn\", \"info\" or \"debug\"");
			} else {
				cfg->log_level = l;
				cfg->log_level_set = true;
			}
		} else if (!strcmp(key, "scratch_dir")) {
			const char *d = json_object_is_type(val, json_type_string) ?
						json_object_get_string(val) : NULL;

			if (!d || (d[0] && d[0] != '/') || strlen(d) >= PATH_MAX) {
				err = -EINVAL;
				snprintf(msg, sizeof(msg),
					 "\"scratch_dir\" must be an absolute directory, or \"\"");
			} else {
				free(cfg->scratch_dir);
				cfg->scratch_dir = strdup(d);
				if (!cfg->scratch_dir)
					err = -ENOMEM;
			}
		} else if (!strcmp(key, "log_format")) {
			enum log_format f;

			if (!json_object_is_type(val, json_type_string) ||
			    log__parse_format(json_object_get_string(val), &f)) {
				err = -EINVAL;
				snprintf(msg, sizeof(msg),
					 "\"log_format\" must be \"text\", \"logfmt\" or \"json\"");
			} else {
				cfg->log_format = f;
				cfg->log_format_set = true;
			}
		} else if (!strcmp(key, "heap_all_processes") || !strcmp(key, "heap_per_process")) {
			if (!json_object_is_type(val, json_type_boolean)) {
				err = -EINVAL;
				snprintf(msg, sizeof(msg), "\"%s\" must be true or false", key);
			}
			/* heap_per_process: the opt-in of old, now the default. */
			cfg->heap_all_processes = json_object_get_boolean(val) ==
						  !strcmp(key, "heap_all_processes");
		} else if (!strcmp(key, "exit_hook")) {
			int v = json_object_is_type(val, json_type_string)
					? bpfobj__parse_exit_hook(json_object_get_string(val))
					: -EINVAL;

			if (v < 0) {
				err = -EINVAL;
				snprintf(msg, sizeof(msg),
					 "\"exit_hook\" must be \"auto\", \"exit_group\" or \"off\"");
			} else {
				cfg->exit_hook = v;
			}
		} else if (!strcmp(key, "heap_max_attach")) {
			int64_t v = json_object_get_int64(val);

			if (!json_object_is_type(val, json_type_int) || v < 1 || v > 65536) {
				err = -EINVAL;
				snprintf(msg, sizeof(msg),
					 "\"heap_max_attach\" must be an integer 1..65536");
			}
			cfg->heap_max_attach = (size_t)v;
		} else if (!limit_key(&cfg->limits, key, val, &err, msg, sizeof(msg))) {
			err = -EINVAL;
			snprintf(msg, sizeof(msg),
				 "unknown key \"%.64s\" (known: listen, pids, exes, heap, "
				 "heap_sample_bytes, heap_budget, heap_all_processes, heap_max_attach, "
				 "off_cpu_period_us, exit_hook, "
				 "max_connections, labels, "
				 "allowed_hosts, log_level, log_format, max_processes, max_maps_bytes, "
				 "max_maps_entries, max_objects, symbol_cache_bytes, max_memory_mb, "
				 "max_profile_samples, max_profile_bytes)", key);
		}
		if (err)
			goto cleanup;
	}
cleanup:
	if (err)
		snprintf(errbuf, errlen, "%s: %s", path, msg);
	json_object_put(root);
	if (tok)
		json_tokener_free(tok);
	free(text);
	return err;
}

int config__parse_listen(const char *s, char *host, size_t hostlen, int *port)
{
	const char *colon, *h = s;
	size_t hlen;
	long p;

	if (!s || !*s)
		return -EINVAL;
	if (*s == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':')
			return -EINVAL;
		h = s + 1;
		hlen = end - h;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		/* An unbracketed IPv6 address would split at the wrong colon. */
		if (!colon || memchr(s, ':', colon - s))
			return -EINVAL;
		hlen = colon - s;
	}
	if (!hlen || hlen >= hostlen)
		return -EINVAL;
	if (parse__int(colon + 1, 1, 65535, &p))
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	*port = (int)p;
	return 0;
}

void config__free(struct config *cfg)
{
	for (size_t i = 0; cfg->allowed_hosts && cfg->allowed_hosts[i]; i++)
		free(cfg->allowed_hosts[i]);
	free(cfg->allowed_hosts);
	cfg->allowed_hosts = NULL;
	free(cfg->listen);
	cfg->listen = NULL;
	targets__free(&cfg->targets);
}
