/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * utf8: what the string table does to a string before keeping it.
 *
 * Pyroscope refuses a whole profile over one string table entry that is not
 * valid UTF-8 (ValidateProfile: "invalid utf8 string", malformed_profile),
 * and protobuf's own decoders refuse such a `string` field too.  The names
 * that reach a profile come from other users: file names, comms, thread
 * names, process titles, symbol names.  So every string is made valid here,
 * once, where nothing can go round it, by one rule:
 *
 *   A well-formed UTF-8 sequence (no overlong form, surrogate or code
 *   point past U+10FFFF) that is not a control character is kept as it
 *   is.  Every other byte, and each byte of a control character (C0,
 *   DEL, C1), is written as the four characters \xNN (lowercase hex).
 *
 * Escapes rather than U+FFFD: two files whose names differ only in their
 * invalid bytes stay two names, and the name shown is the one to type
 * (`ls $'bad\xe9bin'` in bash finds the file `bad\xe9bin` names).
 * Controls are escaped too: a newline or a tab in a function or file name
 * would break the folded format's lines, and terminals act on escapes.
 * A backslash itself is kept, so a name that already held the text "\xe9"
 * reads the same as one that held the byte: the price of leaving every
 * ordinary name untouched.
 */
#ifndef PROFD_PPROF_UTF8_H
#define PROFD_PPROF_UTF8_H

#include <stddef.h>

/* Length of s[0..len) once escaped; == len when nothing needs escaping. */
size_t utf8__escaped_len(const char *s, size_t len);

/* Writes s[0..len) escaped into out, which holds utf8__escaped_len() + 1
 * bytes, and NUL-terminates it. */
void utf8__escape(const char *s, size_t len, char *out);

#endif
