/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * log: one line per event on stderr.  Under systemd (JOURNAL_STREAM set)
 * lines carry a "<N>" syslog priority prefix, which journald turns into
 * the entry's priority; on a terminal they read "profd: ...".
 */
#ifndef PROFD_LOG_H
#define PROFD_LOG_H

enum log_level { LOG_LVL_ERROR = 3, LOG_LVL_WARN = 4, LOG_LVL_INFO = 6, LOG_LVL_DEBUG = 7 };

void log__set_level(enum log_level max);
void log__msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log__error(...) log__msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log__warn(...) log__msg(LOG_LVL_WARN, __VA_ARGS__)
#define log__info(...) log__msg(LOG_LVL_INFO, __VA_ARGS__)
#define log__debug(...) log__msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
