/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elf: ELF primitives the symbolizer's files share, on libelf alone: they
 * know nothing of objects, caches or debug files.
 */
#ifndef PROFD_SYM_ELF_H
#define PROFD_SYM_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

/* The GNU build ID of an ELF file, into bits (at most max bytes).  Its
 * length, or 0. */
size_t elf__read_build_id(Elf *elf, unsigned char *bits, size_t max);
/* -ENOEXEC unless every string table ends with a NUL. */
int elf__check_strtabs(Elf *elf);
/* Whether any section is compressed (SHF_COMPRESSED, or a .zdebug_ name),
 * or the headers cannot tell. */
bool elf__has_compressed(Elf *elf);

/* Kinds of sections that libelf and libdw read whole into memory when a
 * file is read rather than mapped. */
enum elf_read {
	ELF_READ_SYMS,	/* symbol and string tables, notes */
	ELF_READ_DWARF,	/* .debug_* and .zdebug_* */
};

/*
 * The bytes reading every section of one kind of elf would take: a
 * compressed section counts as what it decompresses to, as its header says
 * (read from fd with pread: libelf would read the whole section to tell).
 * A file can state any size without holding the bytes (a sparse hole, a
 * small compressed stream), so a caller holds this to a budget before it
 * lets libelf read.  Saturates at UINT64_MAX.
 */
uint64_t elf__read_size(Elf *elf, int fd, enum elf_read what);

#endif
