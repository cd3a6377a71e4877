/* SPDX-License-Identifier: BSD-2-Clause */
/* cli: option parsing shared by the subcommands. */
#ifndef PROFD_CLI_H
#define PROFD_CLI_H

#include <stddef.h>

/* Strict decimal integer in [min, max]: digits, an optional leading '-',
 * nothing else (no spaces, no '+'); 0 or -EINVAL. */
int cli__parse_int(const char *s, long min, long max, long *out);
/* --heap-sample-bytes: 1..2^40; logs and returns -EINVAL if not. */
int cli__heap_sample_bytes(const char *arg, long *out);
/* --heap-budget: percent of one CPU, a decimal number 0..CLI_HEAP_BUDGET_MAX
 * (0: no budget); logs and returns -EINVAL if not. */
#define CLI_HEAP_BUDGET_MAX 10000.0
int cli__heap_budget(const char *arg, double *out);
/* --max-memory and max_memory_mb: MiB of anonymous memory the daemon holds
 * itself to (daemon/memgov.h), CLI_MAX_MEMORY_MIN..MAX, or 0 for no limit.
 * Below the minimum the daemon could not even hold the kernel's symbols. */
#define CLI_MAX_MEMORY_DEFAULT 128
#define CLI_MAX_MEMORY_MIN 8
#define CLI_MAX_MEMORY_MAX (1L << 20)
#define CLI_MAX_MEMORY_NONE ((size_t)-1)	/* what 0 (no limit) is stored as */
/* Logs and returns -EINVAL for anything else; *out as config_limits holds it. */
int cli__max_memory(const char *arg, size_t *out);

#endif
