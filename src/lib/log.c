// SPDX-License-Identifier: BSD-2-Clause
/* log: one line per event on stderr: journald priorities, or time and level (the contract: log.h). */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/strbuf.h"

static enum log_level max_level = LOG_LVL_INFO;
static enum log_format format = LOG_FMT_TEXT;
static pthread_once_t journal_once = PTHREAD_ONCE_INIT;
static bool journal;

static const struct {
	const char *name;
	enum log_level lvl;
} levels[] = {
	{"error", LOG_LVL_ERROR},
	{"warn", LOG_LVL_WARN},
	{"info", LOG_LVL_INFO},
	{"debug", LOG_LVL_DEBUG},
};

static const char *const formats[] = {
	[LOG_FMT_TEXT] = "text",
	[LOG_FMT_LOGFMT] = "logfmt",
	[LOG_FMT_JSON] = "json",
};

void log__set_level(enum log_level max)
{
	max_level = max;
}

void log__set_format(enum log_format f)
{
	format = f;
}

int log__parse_level(const char *s, enum log_level *out)
{
	for (size_t i = 0; s && i < sizeof(levels) / sizeof(levels[0]); i++)
		if (!strcmp(s, levels[i].name)) {
			*out = levels[i].lvl;
			return 0;
		}
	return -EINVAL;
}

int log__parse_format(const char *s, enum log_format *out)
{
	for (size_t i = 0; s && i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(s, formats[i])) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

static const char *level_name(enum log_level lvl)
{
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (levels[i].lvl == lvl)
			return levels[i].name;
	return "info";
}

/* As systemd's sd_journal_stream_fd() users check: JOURNAL_STREAM is
 * "DEVICE:INODE" of the stream journald gave, and only counts while
 * stderr is still that stream. */
static void journal_detect(void)
{
	const char *v = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	journal = v && sscanf(v, "%llu:%llu", &dev, &ino) == 2 && !fstat(STDERR_FILENO, &st) &&
		  st.st_dev == dev && st.st_ino == ino;
}

/* The length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* No overlong forms, surrogates or code points past U+10FFFF. */
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/*
 * The message as valid UTF-8 (U+FFFD for each byte that is not) into sb;
 * with text, control bytes replaced so that the line stays one, and
 * readable on a terminal (a path from another user's process may hold a
 * carriage return or an escape sequence).
 */
static void clean(struct strbuf *sb, const char *msg, bool text)
{
	const unsigned char *s = (const unsigned char *)msg;
	size_t n = strlen(msg);

	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(s + i, n - i);

		if (!len) {
			strbuf__adds(sb, "\xef\xbf\xbd");
			i++;
		} else if (text && len == 1 && (s[i] < 0x20 || s[i] == 0x7f)) {
			strbuf__add(sb, s[i] == '\n' ? " " : "?", 1);
			i++;
		} else {
			strbuf__add(sb, s + i, len);
			i += len;
		}
	}
}

/* logfmt's quoted value: backslash escapes, control bytes as \n \r \t \u00XX. */
static void logfmt_quote(struct strbuf *sb, const char *s)
{
	strbuf__adds(sb, "\"");
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			strbuf__addf(sb, "\\%c", c);
		else if (c == '\n')
			strbuf__adds(sb, "\\n");
		else if (c == '\r')
			strbuf__adds(sb, "\\r");
		else if (c == '\t')
			strbuf__adds(sb, "\\t");
		else if (c < 0x20 || c == 0x7f)
			strbuf__addf(sb, "\\u%04x", c);
		else
			strbuf__add(sb, s, 1);
	}
	strbuf__adds(sb, "\"");
}

static void json_line(struct strbuf *sb, const char *ts, const char *level, const char *msg)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return;
	if (ts)
		json_object_object_add(o, "ts", json_object_new_string(ts));
	json_object_object_add(o, "level", json_object_new_string(level));
	json_object_object_add(o, "msg", json_object_new_string(msg));
	strbuf__adds(sb, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

void log__msg(enum log_level lvl, const char *fmt, ...)
{
	char line[1024], ts[40];
	struct strbuf msg = {0}, out = {0};
	const char *level = level_name(lvl);
	struct timespec now;
	struct tm tm;
	va_list ap;
	int n;

	if (lvl > max_level)
		return;
	pthread_once(&journal_once, journal_detect);
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	clean(&msg, line, format == LOG_FMT_TEXT);
	if (strbuf__err(&msg))
		goto cleanup;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + n, sizeof(ts) - n, ".%03ldZ", now.tv_nsec / 1000000);
	/* journald stamps its entries itself. */
	if (journal)
		strbuf__addf(&out, "<%d>", lvl);
	switch (format) {
	case LOG_FMT_LOGFMT:
		if (!journal)
			strbuf__addf(&out, "ts=%s ", ts);
		strbuf__addf(&out, "level=%s msg=", level);
		logfmt_quote(&out, msg.buf ?: "");
		break;
	case LOG_FMT_JSON:
		json_line(&out, journal ? NULL : ts, level, msg.buf ?: "");
		break;
	default:
		if (!journal)
			strbuf__addf(&out, "%s %s profd: ", ts, level);
		strbuf__adds(&out, msg.buf ?: "");
		break;
	}
	if (!strbuf__err(&out))
		fprintf(stderr, "%s\n", out.buf);
cleanup:
	strbuf__free(&msg);
	strbuf__free(&out);
}
