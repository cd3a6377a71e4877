/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kallsyms: kernel text symbols from /proc/kallsyms, internal to the
 * symbolizer.  One sorted array of {32-bit address, name offset}, cut in
 * spans of 4 GiB each with its 64-bit base (one or two on real kernels),
 * and one string blob, so ~120k symbols cost 8 bytes each plus their names.
 */
#ifndef PROFD_KALLSYMS_H
#define PROFD_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksyms;

/*
 * Parse a kallsyms file (normally "/proc/kallsyms").  Returns 0 and *out, or
 * -EPERM if every address reads as 0 (kptr_restrict, no CAP_SYSLOG), -ENOENT
 * if there are no text symbols, or another negative errno.
 */
int ksyms__load(const char *path, struct ksyms **out);
void ksyms__free(struct ksyms *k);

/* "name" or "name [module]" of the text symbol containing addr, or NULL.
 * The string lives as long as k. */
const char *ksyms__find(const struct ksyms *k, uint64_t addr);

/* Core kernel text, [_stext, _etext). */
void ksyms__range(const struct ksyms *k, uint64_t *start, uint64_t *limit);

size_t ksyms__bytes(const struct ksyms *k);

#endif
