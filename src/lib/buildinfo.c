// SPDX-License-Identifier: BSD-2-Clause
/* buildinfo: what this binary is (the contract: buildinfo.h). */
#include <pthread.h>
#include <stdio.h>
#include <sys/auxv.h>

#include <bpf/libbpf.h>
#include <elfutils/libdwfl.h>

#include "lib/buildinfo.h"

/* From the Makefile (-D; only this file is rebuilt when they change). */
#if !defined(PROFD_VERSION) || !defined(PROFD_COMMIT) || !defined(PROFD_FLAGS)
#error "the Makefile passes PROFD_VERSION, PROFD_COMMIT and PROFD_FLAGS"
#endif

/* gcc says __SANITIZE_ADDRESS__; clang says __has_feature(address_sanitizer). */
#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
#define BUILDINFO_SANITIZER "thread"
#elif defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define BUILDINFO_SANITIZER "address,undefined"
#else
#define BUILDINFO_SANITIZER "none"
#endif

#define BUILDINFO_STR_(x) #x
#define BUILDINFO_STR(x) BUILDINFO_STR_(x)
#ifdef __clang__
#define BUILDINFO_COMPILER                                                                    \
	"clang " BUILDINFO_STR(__clang_major__) "." BUILDINFO_STR(__clang_minor__) "."        \
		BUILDINFO_STR(__clang_patchlevel__)
#elif defined(__GNUC__)
#define BUILDINFO_COMPILER "gcc " __VERSION__
#else
#define BUILDINFO_COMPILER "unknown"
#endif

static struct buildinfo info;
static char libbpf_version[24];
static char line[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void fill(void)
{
	const char *dw = dwfl_version(NULL);

	info.version = PROFD_VERSION;
	info.commit = PROFD_COMMIT;
	/*
	 * Asked of the running binary, not of the Makefile: an executable
	 * with no program interpreter (no ld.so, AT_BASE 0) is static,
	 * whichever make goal or flags produced it.
	 */
	info.link = getauxval(AT_BASE) ? "dynamic" : "static";
	info.sanitizer = BUILDINFO_SANITIZER;
	info.compiler = BUILDINFO_COMPILER;
	info.flags = PROFD_FLAGS;
	snprintf(libbpf_version, sizeof(libbpf_version), "%u.%u", libbpf_major_version(),
		 libbpf_minor_version());
	info.libbpf = libbpf_version;
	info.elfutils = dw ? dw : "unknown";
	snprintf(line, sizeof(line),
		 "version %s (commit %s, %s, sanitizer %s, %s, libbpf %s, elfutils %s)", info.version,
		 info.commit, info.link, info.sanitizer, info.compiler, info.libbpf,
		 info.elfutils);
}

const struct buildinfo *buildinfo__get(void)
{
	pthread_once(&once, fill);
	return &info;
}

const char *buildinfo__line(void)
{
	pthread_once(&once, fill);
	return line;
}
