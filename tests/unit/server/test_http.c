// SPDX-License-Identifier: BSD-2-Clause
/* server/http: which Host headers name this server (DNS rebinding). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdbool.h>
#include <string.h>

#include "server/http.h"

struct host_case {
	char host[64];	/* "" for no header */
	bool want;
};

ParameterizedTestParameters(http, host_allowed)
{
	static struct host_case cases[] = {
		{"", true},			/* HTTP/1.0: no Host */
		{"127.0.0.1", true},
		{"127.0.0.1:7117", true},
		{"10.1.2.3:7117", true},
		{"[::1]:7117", true},
		{"[::1]", true},
		{"[fe80::1]:80", true},
		{"localhost:7117", true},
		{"LOCALHOST", true},
		{"localhost.:7117", true},
		{"profd.internal", true},	/* configured */
		{"Profd.Internal:8080", true},
		/* A page's own name, pointed at 127.0.0.1 by its DNS. */
		{"rebind.attacker.example", false},
		{"rebind.attacker.example:7117", false},
		{"localhost.attacker.example", false},
		{"127.0.0.1.attacker.example", false},
		{"profd.internal.evil", false},
		/* Malformed. */
		{"[::1", false},
		{"[]:7117", false},
		{"[localhost]:7117", false},
		{"[::1]x", false},
		{"127.0.0.1:", false},
		{"127.0.0.1:7117:1", false},
		{"127.0.0.1:http", false},
		{":7117", false},
		{".", false},
	};

	return cr_make_param_array(struct host_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct host_case *c, http, host_allowed)
{
	static const char *const names[] = {"localhost", "profd.internal", NULL};

	cr_expect_eq(http__host_allowed(*c->host ? c->host : NULL, names), c->want, "Host: %s",
		     c->host);
}

/* Without configured names, only addresses are allowed. */
Test(http, host_allowed_without_names)
{
	cr_expect(http__host_allowed("192.0.2.1:1", NULL));
	cr_expect_not(http__host_allowed("localhost", NULL));
}
