// SPDX-License-Identifier: BSD-2-Clause
/*
 * demangle: C++ and Rust names as binutils' c++filt prints them (the C++
 * ones are checked against c++filt too, where it is installed; for Rust,
 * c++filt keeps the crate and function hashes, as DMGL_VERBOSE does, and
 * the expected text is its without them), and hostile names refused
 * rather than expanded.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symbolizer/demangle.h"

static const struct {
	const char *mangled;
	const char *want;	/* NULL: not demangled */
} cases[] = {
	{"_ZN11cgraph_node6expandEv", "cgraph_node::expand()"},
	{"_ZN2ns5Class6methodEi", "ns::Class::method(int)"},
	{"_ZNK2ns6HolderIiE4spinEm", "ns::Holder<int>::spin(unsigned long) const"},
	{"_ZSt9terminatev", "std::terminate()"},
	/* Rust, legacy: the hash goes, as rustc-demangle's {:#} prints it. */
	{"_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write"},
	{"_ZN9rust_demo5inner8hot_loop17h8f2c3a7b9d1e4f60E", "rust_demo::inner::hot_loop"},
	/* Rust, v0. */
	{"_RNvNtCs9ltgdHTiPiY_4demo5inner8hot_loop", "demo::inner::hot_loop"},
	/* Not mangled, or not validly. */
	{"main", NULL},
	{"_Zfoo", NULL},
	{"_R", NULL},
	{"_ZN2ns5Class", NULL},
	{"", NULL},
};

Test(demangle, names)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = demangle__name(cases[i].mangled);

		if (cases[i].want)
			cr_expect(got && !strcmp(got, cases[i].want), "%s: got %s, want %s",
				  cases[i].mangled, got ? got : "NULL", cases[i].want);
		else
			cr_expect_null(got, "%s: got %s", cases[i].mangled, got);
		free(got);
	}
	cr_assert_null(demangle__name(NULL));
}

/* The same answers as binutils' own demangler front end. */
Test(demangle, as_cxxfilt)
{
	char cmd[256], line[512];
	FILE *f;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!cases[i].want || strstr(cases[i].want, "demo") ||
		    strstr(cases[i].want, "core::"))
			continue;
		snprintf(cmd, sizeof(cmd), "c++filt '%s' 2>/dev/null", cases[i].mangled);
		f = popen(cmd, "r");
		if (!f || !fgets(line, sizeof(line), f)) {
			if (f)
				pclose(f);
			cr_skip_test("no c++filt");
		}
		pclose(f);
		line[strcspn(line, "\n")] = '\0';
		cr_expect_str_eq(line, cases[i].want, "c++filt %s", cases[i].mangled);
	}
}

/*
 * A C++ name whose substitutions nest: each level is 4 bytes more of name
 * and twice the text (A<A<A<...>, ...>, ...>).  28 levels demangle to
 * 4.5 GB in 45 s without a bound; with it, nothing, at once.
 */
static char *bomb(int levels)
{
	static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	char *s = malloc(16 + 8 * (size_t)levels);

	strcpy(s, "_Z1f1AI");
	for (int i = 1; i < levels; i++)
		strcat(s, "S_I");
	strcat(s, "S_IiiE");
	for (int k = 0; k < levels; k++) {
		char ref[8];

		/* Substitution k: S<k in base 36>_ (k < 36 here). */
		snprintf(ref, sizeof(ref), "S%c_E", digits[k]);
		strcat(s, ref);
	}
	return s;
}

Test(demangle, bounded_output)
{
	char *small = bomb(4), *big = bomb(28), *got;
	struct timespec a, b;

	got = demangle__name(small);
	cr_assert_not_null(got, "%s", small);
	cr_expect_not_null(strstr(got, "f(A<A<A<A<A<int, int>"), "%s", got);
	free(got);
	clock_gettime(CLOCK_MONOTONIC, &a);
	got = demangle__name(big);
	clock_gettime(CLOCK_MONOTONIC, &b);
	cr_expect_null(got, "a %zu-byte name demangled to %zu bytes", strlen(big),
		       got ? strlen(got) : 0);
	cr_log_info("the 28-level bomb: refused in %.1f ms",
		    (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	free(got);
	free(small);
	free(big);
}

Test(demangle, long_names_refused)
{
	char *name = malloc(DEMANGLE_MAX_IN + 2);

	/* A valid name of one long identifier, over the bound by one byte. */
	snprintf(name, DEMANGLE_MAX_IN + 2, "_Z%dx", DEMANGLE_MAX_IN);
	memset(name + strlen(name), 'x', DEMANGLE_MAX_IN + 1 - strlen(name));
	name[DEMANGLE_MAX_IN + 1] = '\0';
	cr_expect_null(demangle__name(name));
	free(name);
}
