/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elf: ELF primitives the symbolizer's files share, on libelf alone: they
 * know nothing of objects, caches or debug files.
 */
#ifndef PROFD_SYM_ELF_H
#define PROFD_SYM_ELF_H

#include <stddef.h>

#include <libelf.h>

/* The GNU build ID of an ELF file, into bits (at most max bytes).  Its
 * length, or 0. */
size_t elf__read_build_id(Elf *elf, unsigned char *bits, size_t max);
/* -ENOEXEC unless every string table ends with a NUL. */
int elf__check_strtabs(Elf *elf);

#endif
