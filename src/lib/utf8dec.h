/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * utf8dec: where one UTF-8 character ends.  The string table's escaping
 * (pprof/utf8.c) and the labels' sanitizing (proc/proctitle.c) both decide
 * per character, each with its own rule for controls, over this one decoder.
 */
#ifndef PROFD_LIB_UTF8DEC_H
#define PROFD_LIB_UTF8DEC_H

#include <stddef.h>

/*
 * The length (1..4) of the well-formed UTF-8 character at s[0..n), n >= 1,
 * or 0 if there is none: a stray continuation byte, an overlong form, a
 * surrogate, past U+10FFFF, or cut short by n.  ASCII is length 1, controls
 * included.
 */
size_t utf8dec__len(const unsigned char *s, size_t n);

#endif
