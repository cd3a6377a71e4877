// SPDX-License-Identifier: BSD-2-Clause
/* strbuf: the one growable string (the contract: strbuf.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/htab.h"
#include "lib/strbuf.h"

/* Room for len more bytes and the NUL. */
static int reserve(struct strbuf *sb, size_t len)
{
	int err;

	if (sb->err)
		return sb->err;
	if (len > (size_t)-1 - sb->len - 1) {
		sb->err = -ENOMEM;
		return sb->err;
	}
	err = array__grow(&sb->buf, &sb->cap, sb->len + len + 1, 1);
	if (err)
		sb->err = err;
	return err;
}

int strbuf__add(struct strbuf *sb, const void *data, size_t len)
{
	int err = reserve(sb, len);

	if (err)
		return err;
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int strbuf__adds(struct strbuf *sb, const char *s)
{
	return strbuf__add(sb, s, strlen(s));
}

int strbuf__addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n, err;

	if (sb->err)
		return sb->err;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		sb->err = -EINVAL;
		return sb->err;
	}
	err = reserve(sb, (size_t)n);
	if (err)
		return err;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	return 0;
}

int strbuf__err(const struct strbuf *sb)
{
	return sb->err;
}

void strbuf__reset(struct strbuf *sb)
{
	sb->len = 0;
	sb->err = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

char *strbuf__detach(struct strbuf *sb, size_t *len)
{
	char *s;

	if (!sb->err && !sb->buf)
		reserve(sb, 0);
	if (sb->err) {
		strbuf__free(sb);
		return NULL;
	}
	s = sb->buf;
	s[sb->len] = '\0';
	if (len)
		*len = sb->len;
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return s;
}

void strbuf__free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->err = 0;
}
