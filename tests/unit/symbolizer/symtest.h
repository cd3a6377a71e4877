/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symtest: what the symbolizer's unit tests share: where the build's files
 * are, and libc6-dbg's debug file for libc.
 */
#ifndef PROFD_TESTS_SYMTEST_H
#define PROFD_TESTS_SYMTEST_H

/* BUILD/rel (the BUILD variable, else the directory above tests/ of this
 * binary), malloc'd. */
char *symtest__build_path(const char *rel);
/* libc's debug file, as libc6-dbg installs it (a test dependency), found
 * by libc's build ID; NULL when it is not installed.  malloc'd. */
char *symtest__libc_debug(void);

#endif
