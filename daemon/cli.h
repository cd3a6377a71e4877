/* SPDX-License-Identifier: BSD-2-Clause */
/* cli: option parsing shared by the subcommands. */
#ifndef PROFD_CLI_H
#define PROFD_CLI_H

#include <stddef.h>

#include "sampler.h"

/* A growable list of --pid and --exe options; becomes a struct targets. */
struct target_list {
	int *pids;
	size_t npids;
	char **exes;
	size_t nexes;
};

/* Strict integer in [min, max]; 0 or -EINVAL. */
int cli__parse_int(const char *s, long min, long max, long *out);
/* --heap-sample-bytes: 1..2^40; logs and returns -EINVAL if not. */
int cli__heap_sample_bytes(const char *arg, long *out);
int target_list__add_pid(struct target_list *tl, const char *arg);
int target_list__add_exe(struct target_list *tl, const char *arg);
struct targets target_list__targets(const struct target_list *tl);
void target_list__free(struct target_list *tl);

#endif
