// SPDX-License-Identifier: BSD-2-Clause
/* utf8: strings made valid, printable UTF-8 for the string table (the contract: utf8.h). */
#include <stdbool.h>
#include <stdint.h>

#include "lib/utf8dec.h"
#include "pprof/utf8.h"

/*
 * Length of the well-formed UTF-8 sequence at s[0..n) if it is kept as it
 * is (not a control character), or 0 if its first byte must be escaped.
 */
static size_t keep_len(const unsigned char *s, size_t n)
{
	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f;
	/* U+0080..U+009F, the C1 controls: 0xc2 0x80..0x9f. */
	if (s[0] == 0xc2 && n >= 2 && s[1] < 0xa0)
		return 0;
	return utf8dec__len(s, n);
}

size_t utf8__escaped_len(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, out = 0, k;

	/* Most names are plain ASCII: one pass, no writes. */
	while (i < len) {
		if (u[i] >= 0x20 && u[i] < 0x7f) {
			i++;
			out++;
			continue;
		}
		k = keep_len(u + i, len - i);
		i += k ? k : 1;
		out += k ? k : 4;
	}
	return out;
}

void utf8__escape(const char *s, size_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, o = 0, k;

	while (i < len) {
		k = keep_len(u + i, len - i);
		if (k) {
			for (size_t j = 0; j < k; j++)
				out[o++] = s[i + j];
			i += k;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[u[i] >> 4];
		out[o++] = hex[u[i] & 15];
		i++;
	}
	out[o] = '\0';
}
