/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * parse: strict number parsing, shared by the command line (cmd/cli.h), the
 * config file (server/config.h), the API's queries (server/reqparse.h) and
 * target lists (tracer/targets.h).
 */
#ifndef PROFD_PARSE_H
#define PROFD_PARSE_H

/* Strict decimal integer in [min, max]: digits, an optional leading '-',
 * nothing else (no spaces, no '+'); 0 or -EINVAL. */
int parse__int(const char *s, long min, long max, long *out);

#endif
