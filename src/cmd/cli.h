/* SPDX-License-Identifier: BSD-2-Clause */
/* cli: option parsing shared by the subcommands. */
#ifndef PROFD_CLI_H
#define PROFD_CLI_H

#include <stddef.h>

struct targets;

/* --heap-sample-bytes: 1..2^40; logs and returns -EINVAL if not. */
int cli__heap_sample_bytes(const char *arg, long *out);
/* --off-cpu-period-us: CLI_OFFCPU_PERIOD_MIN..MAX microseconds of off-CPU
 * time a kept switch stands for; logs and returns -EINVAL if not. */
#define CLI_OFFCPU_PERIOD_MIN 10
#define CLI_OFFCPU_PERIOD_MAX 1000000
int cli__offcpu_period(const char *arg, long *out);
/* --heap-budget: percent of one CPU, a decimal number 0..HEAP_BUDGET_MAX
 * (heap/heap.h; 0: no budget); logs and returns -EINVAL if not. */
int cli__heap_budget(const char *arg, double *out);
/* --max-memory: MEMGOV_MAX_MEMORY_MIN..MAX MiB (profile/memgov.h), or 0 for
 * no limit.  Logs and returns -EINVAL for anything else; *out as
 * config_limits holds it. */
int cli__max_memory(const char *arg, size_t *out);

/* --pid, --exe and --labels, the same in record and serve: added to t (or
 * parsed into *out), or logged and an error returned. */
int cli__pid(struct targets *t, const char *arg);
int cli__exe(struct targets *t, const char *arg);
int cli__labels(const char *arg, unsigned *out);
/* --log-level and --log-format: enum log_level / log_format (lib/log.h). */
int cli__log_level(const char *arg, int *out);
int cli__log_format(const char *arg, int *out);
/* --scratch-dir: an absolute directory, or "" (debug files stay in memory);
 * the symbolizer takes it (symbolizer__set_scratch_dir) when it is valid. */
int cli__scratch_dir(const char *arg);

#endif
