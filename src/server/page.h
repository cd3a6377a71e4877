/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * page: the HTML page profd serve answers GET / with.  One self-contained
 * document (inline CSS and script, nothing fetched from elsewhere) that
 * lists the targets and running sessions from GET /sessions and takes CPU
 * or heap profiles, showing their flamegraphs in place.
 */
#ifndef PROFD_PAGE_H
#define PROFD_PAGE_H

#include <stddef.h>

/* The page, static and NUL-terminated; *len (if given) excludes the NUL. */
const char *page__index(size_t *len);

#endif
