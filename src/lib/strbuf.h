/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * strbuf: a growable, always NUL-terminated byte buffer.  The first failing
 * append makes every later one a no-op and is remembered, so a writer can
 * append many pieces and check once:
 *
 *	struct strbuf sb = {};
 *	strbuf__addf(&sb, "%d", n);
 *	strbuf__add(&sb, s, len);
 *	if (strbuf__err(&sb)) ...
 */
#ifndef PROFD_LIB_STRBUF_H
#define PROFD_LIB_STRBUF_H

#include <stddef.h>

struct strbuf {
	char *buf;	/* NULL until the first append */
	size_t len;	/* bytes, without the NUL */
	size_t cap;
	int err;	/* 0, or the first -ENOMEM/-EINVAL */
};

int strbuf__add(struct strbuf *sb, const void *data, size_t len);
int strbuf__adds(struct strbuf *sb, const char *s);
int strbuf__addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int strbuf__err(const struct strbuf *sb);
/* Empty it, keeping the allocation. */
void strbuf__reset(struct strbuf *sb);
/* The text (malloc'd, NUL-terminated, "" when empty); the buffer is left
 * empty.  NULL on an earlier error or out of memory: the buffer is freed. */
char *strbuf__detach(struct strbuf *sb, size_t *len);
void strbuf__free(struct strbuf *sb);

#endif
