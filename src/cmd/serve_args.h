/* SPDX-License-Identifier: BSD-2-Clause */
/* serve_args: profd serve's command line, read into its config (serve.c wires the daemon). */
#ifndef PROFD_SERVE_ARGS_H
#define PROFD_SERVE_ARGS_H

#include <stdbool.h>
#include <stdio.h>

struct config;

void serve_args__usage(FILE *f);
/* Options, then the config file under them: flags override or add.  *help:
 * --help was given.  0, or negative errno having logged why. */
int serve_args__parse(int argc, char **argv, struct config *cfg, bool *help);

#endif
