/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * buildinfo: what this binary is.  Its version and commit (git describe and
 * rev-parse when it was built, passed by the Makefile), how it was built
 * (linked statically or not, which sanitizer, which compiler), and the
 * libbpf and elfutils it runs with, asked of the libraries themselves, so a
 * static binary names what is linked into it.
 *
 * The same facts go in `profd --version`, the first log line, /health,
 * /metrics' profd_build_info and every profile's comments; the build's
 * flags in `profd --version` only (a label that changes with -O would
 * split every dashboard's series).
 */
#ifndef PROFD_LIB_BUILDINFO_H
#define PROFD_LIB_BUILDINFO_H

struct buildinfo {
	const char *version;	/* "b51ee41", "v1.2-3-gb51ee41-dirty", or "unknown" */
	const char *commit;	/* the full hash, or "unknown" */
	const char *link;	/* "static" or "dynamic" */
	const char *sanitizer;	/* "none", "address,undefined" or "thread" */
	const char *compiler;	/* "gcc 12.2.0", "clang 14.0.6" */
	const char *flags;	/* the flags make was given: "-O2 -g", "-O2 -g -static-pie" */
	const char *libbpf;	/* "1.1" */
	const char *elfutils;	/* "0.188" */
};

/* Filled on the first call (any thread); the strings live as long as the process. */
const struct buildinfo *buildinfo__get(void);

/* One line of it all: "version b51ee41 (commit b51e..., dynamic, sanitizer none,
 * gcc 12.2.0, libbpf 1.1, elfutils 0.188)". */
const char *buildinfo__line(void);

#endif
