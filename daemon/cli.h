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

#endif
