/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * labels: which labels a profile's samples carry.
 *
 * A continuous-profiling scraper (Grafana Alloy, Pyroscope) stores every
 * distinct label set of every profile as its own series.  pid and tid make
 * one set per process, which a connection storm (pgbench -C, thousands of
 * short-lived postgres backends) turns into thousands; so they are off by
 * default and asked for by name: `?labels=` on the API, "labels" in the
 * config file and the compute API's body, `--labels` on the command line.
 * Samples that end up with the same stack and labels merge.
 */
#ifndef PROFD_LABELS_H
#define PROFD_LABELS_H

#include <stddef.h>

enum label_bit {
	LABEL_PID = 1u << 0,		/* numeric */
	LABEL_TID = 1u << 1,		/* numeric; CPU profiles only */
	LABEL_THREAD_NAME = 1u << 2,	/* CPU profiles only */
	LABEL_PROCESS_NAME = 1u << 3,
	LABEL_BACKEND_TYPE = 1u << 4,	/* from the process title: proc/proctitle.h */
	LABEL_DATABASE = 1u << 5,
	LABEL_USER = 1u << 6,
};

#define LABELS_ALL 0x7fu
#define LABELS_TITLE (LABEL_BACKEND_TYPE | LABEL_DATABASE | LABEL_USER)
/* Bounded by the programs and roles running, not by how many processes come and go. */
#define LABELS_DEFAULT (LABEL_PROCESS_NAME | LABELS_TITLE)
/* The longest list labels__format() writes, with its NUL. */
#define LABELS_LIST_MAX 72

/*
 * A comma-separated list of label names (pid, tid, thread_name,
 * process_name, backend_type, database, user) and the words "default"
 * (LABELS_DEFAULT) and "all", e.g. "default,pid".  The result is exactly
 * the labels named; "" is none.  -EINVAL with errbuf saying why for an
 * unknown or empty name.
 */
int labels__parse(const char *list, unsigned *out, char *errbuf, size_t errlen);

/*
 * A flamegraph's root level: the string label name (process_name,
 * thread_name, backend_type, database, user) in *root and its bit in *bit,
 * wait_event (bit 0: off-CPU and wall profiles carry it unasked), or "none"
 * ("" and 0: no root level).  -EINVAL with errbuf saying why.
 */
int labels__split(const char *name, const char **root, unsigned *bit, char *errbuf,
		  size_t errlen);

/*
 * The names of the single labels in mask, in the order above, into
 * out[0..cap), NULL-ended (cap >= 8 holds any mask).  For pprof__coarsen's
 * list of labels to keep.
 */
void labels__names(unsigned mask, const char **out, size_t cap);

/* "process_name,backend_type,...": the names in mask, in the order above. */
void labels__format(unsigned mask, char buf[LABELS_LIST_MAX]);

#endif
