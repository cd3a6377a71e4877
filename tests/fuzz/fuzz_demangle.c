// SPDX-License-Identifier: BSD-2-Clause
/*
 * Symbol names as the demangler gets them (demangle__name): any local user
 * can have the daemon (root) symbolize a binary of their making, whose
 * symbol and DWARF linkage names are arbitrary.  The first byte picks the
 * prefix ("_Z", "_ZN", "_R"), the rest is the name.  What must hold: no
 * crash, no hang, and any text within DEMANGLE_MAX_OUT.  libiberty itself
 * is not instrumented (Debian's static archive): this finds crashes, hangs
 * and blow-ups, not coverage inside it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const prefixes[] = {"_Z", "_ZN", "_R", ""};
	const char *prefix;
	char *name, *text;
	size_t plen;

	if (!size)
		return 0;
	prefix = prefixes[data[0] % 4];
	plen = strlen(prefix);
	name = malloc(plen + size);
	if (!name)
		return 0;
	memcpy(name, prefix, plen);
	memcpy(name + plen, data + 1, size - 1);
	name[plen + size - 1] = '\0';
	text = demangle__name(name);
	if (text && strlen(text) > DEMANGLE_MAX_OUT)
		abort();
	free(text);
	free(name);
	return 0;
}
