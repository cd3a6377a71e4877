// SPDX-License-Identifier: BSD-2-Clause
/* log: one line per event on stderr (journald priorities) (the contract: log.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"

static enum log_level max_level = LOG_LVL_INFO;

void log__set_level(enum log_level max)
{
	max_level = max;
}

void log__msg(enum log_level lvl, const char *fmt, ...)
{
	/* Read each time: the builder thread logs too, and getenv() is safe there. */
	bool journal = getenv("JOURNAL_STREAM") != NULL;
	char line[1024];
	va_list ap;
	int n;

	if (lvl > max_level)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* One event, one line: a newline in a message would split it, and a
	 * path or name from another user's process may hold any control byte
	 * (a carriage return, a terminal's escape sequence). */
	for (char *p = line; *p; p++)
		if (*p == '\n')
			*p = ' ';
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (journal)
		fprintf(stderr, "<%d>%s\n", lvl, line);
	else
		fprintf(stderr, "profd: %s\n", line);
}
