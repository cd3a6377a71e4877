// SPDX-License-Identifier: BSD-2-Clause
/* parse: strict number parsing for options, config files and queries. */
#include <errno.h>
#include <stdlib.h>

#include "lib/parse.h"

int parse__int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	/* strtol would also take leading spaces and a '+': " 5" is not a number. */
	if (!(*s >= '0' && *s <= '9') && !(*s == '-' && s[1] >= '0' && s[1] <= '9'))
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}
