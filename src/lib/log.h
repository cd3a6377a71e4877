/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * log: one line per event on stderr, whatever the event's text holds.
 *
 * Under journald (JOURNAL_STREAM names the very file stderr is, as systemd
 * documents for services: a child that inherited the variable but writes
 * elsewhere is not under it) a line starts with a "<N>" syslog priority,
 * which journald turns into the entry's priority, and carries no time:
 * journald stamps its own.  Elsewhere every line carries its time (UTC,
 * RFC 3339, milliseconds) and level.  Formats:
 *
 *	text	2026-11-26T07:56:59.123Z info profd: listening on ...
 *	logfmt	ts=2026-11-26T07:56:59.123Z level=info msg="listening on ..."
 *	json	{"ts":"2026-11-26T07:56:59.123Z","level":"info","msg":"listening on ..."}
 *
 * Text replaces control bytes with '?' (a newline with a space); logfmt
 * and json escape them (\n, \u001b); json is json-c's.  Bytes that are
 * not UTF-8 become U+FFFD in all three.  Thread-safe: the builder thread
 * logs too; set the level and format before threads start.
 */
#ifndef PROFD_LOG_H
#define PROFD_LOG_H

enum log_level { LOG_LVL_ERROR = 3, LOG_LVL_WARN = 4, LOG_LVL_INFO = 6, LOG_LVL_DEBUG = 7 };

enum log_format { LOG_FMT_TEXT, LOG_FMT_LOGFMT, LOG_FMT_JSON };

void log__set_level(enum log_level max);
void log__set_format(enum log_format f);
/* "error", "warn", "info", "debug"; "text", "logfmt", "json".  -EINVAL otherwise. */
int log__parse_level(const char *s, enum log_level *out);
int log__parse_format(const char *s, enum log_format *out);

void log__msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log__error(...) log__msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log__warn(...) log__msg(LOG_LVL_WARN, __VA_ARGS__)
#define log__info(...) log__msg(LOG_LVL_INFO, __VA_ARGS__)
#define log__debug(...) log__msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
