// SPDX-License-Identifier: BSD-2-Clause
/* buildinfo: what the binary says it is, the same in every field and line. */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

#include <bpf/libbpf.h>

#include "lib/buildinfo.h"

static bool matches(const char *re, const char *s)
{
	regex_t r;
	bool ok;

	cr_assert_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0, "%s", re);
	ok = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

Test(buildinfo, fields_are_filled_and_the_line_says_them_all)
{
	const struct buildinfo *bi = buildinfo__get();
	char libbpf[32], want[512];

	/* The Makefile's: never empty, only characters that need no escaping. */
	cr_assert(matches("^[A-Za-z0-9._+~:-]+$", bi->version), "version '%s'", bi->version);
	cr_assert(matches("^[A-Za-z0-9._+~:-]+$", bi->commit), "commit '%s'", bi->commit);
	/* This test binary is linked as make links it: with ld.so unless static. */
	cr_assert_str_eq(bi->link, getauxval(AT_BASE) ? "dynamic" : "static");
	cr_assert(matches("^(none|address,undefined|thread)$", bi->sanitizer), "%s", bi->sanitizer);
	cr_assert(matches("^(gcc|clang) [0-9]+\\.[0-9]+", bi->compiler), "'%s'", bi->compiler);
	/* The flags make was given, sanitized as the version is (spaces, '=', ',' and '/' kept). */
	cr_assert(matches("^[A-Za-z0-9._+~:=,/ -]*$", bi->flags), "flags '%s'", bi->flags);
	snprintf(libbpf, sizeof(libbpf), "%u.%u", libbpf_major_version(), libbpf_minor_version());
	cr_assert_str_eq(bi->libbpf, libbpf);
	cr_assert(matches("^0\\.[0-9]+$", bi->elfutils), "elfutils '%s'", bi->elfutils);
	snprintf(want, sizeof(want),
		 "version %s (commit %s, %s, sanitizer %s, %s, libbpf %s, elfutils %s)", bi->version,
		 bi->commit, bi->link, bi->sanitizer, bi->compiler, bi->libbpf, bi->elfutils);
	cr_assert_str_eq(buildinfo__line(), want);
	cr_assert_eq(buildinfo__get(), bi, "filled once");
}
