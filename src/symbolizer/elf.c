// SPDX-License-Identifier: BSD-2-Clause
/*
 * elf: ELF primitives beneath the symbolizer's users of them (obj.c opening
 * an object, debuginfo.c checking a debug file's candidates): the GNU build
 * ID, string tables that end inside themselves, and what reading a file's
 * sections would cost.
 */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer/elf.h"

size_t elf__read_build_id(Elf *elf, unsigned char *bits, size_t max)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		GElf_Nhdr nhdr;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
			if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + name_off, "GNU", 4) && nhdr.n_descsz &&
			    nhdr.n_descsz <= max) {
				memcpy(bits, (char *)data->d_buf + desc_off, nhdr.n_descsz);
				return nhdr.n_descsz;
			}
		}
	}
	return 0;
}

/*
 * libdwfl hands out symbol names as pointers into the string table without
 * checking that they end inside it (elfutils 0.188), and profiles copy them
 * with strlen: a table whose last byte is not NUL would be read past its
 * end.  Linkers always end one with NUL; a file that doesn't is not used.
 */
int elf__check_strtabs(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Scn *str = scn;
		GElf_Shdr shdr;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &shdr))
			return -ENOEXEC;
		/* A symbol table's names are wherever its sh_link says. */
		if (shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNSYM) {
			str = elf_getscn(elf, shdr.sh_link);
			if (!str || !gelf_getshdr(str, &shdr))
				return -ENOEXEC;
		} else if (shdr.sh_type != SHT_STRTAB) {
			continue;
		}
		if (shdr.sh_type == SHT_NOBITS || !shdr.sh_size || (shdr.sh_flags & SHF_COMPRESSED))
			continue;
		d = elf_rawdata(str, NULL);
		if (!d || !d->d_buf || !d->d_size || ((const char *)d->d_buf)[d->d_size - 1])
			return -ENOEXEC;
	}
	return 0;
}

bool elf__has_compressed(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return true;	/* unknown: as if */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return true;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if ((sh.sh_flags & SHF_COMPRESSED) || (name && !strncmp(name, ".zdebug_", 8)))
			return true;
	}
	return false;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* A compressed section's size once decompressed: SHF_COMPRESSED's header,
 * or a .zdebug_ section's "ZLIB" and big-endian size.  UINT64_MAX when it
 * cannot be read: the caller's budget refuses it. */
static uint64_t inflated_size(Elf *elf, int fd, const GElf_Shdr *shdr, const char *name)
{
	unsigned char buf[24];
	uint64_t v;

	if (shdr->sh_flags & SHF_COMPRESSED) {
		bool is64 = gelf_getclass(elf) == ELFCLASS64;
		size_t len = is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);

		if (pread(fd, buf, len, shdr->sh_offset) != (ssize_t)len)
			return UINT64_MAX;
		if (is64) {
			Elf64_Chdr ch;

			memcpy(&ch, buf, sizeof(ch));
			return ch.ch_size;
		} else {
			Elf32_Chdr ch;

			memcpy(&ch, buf, sizeof(ch));
			return ch.ch_size;
		}
	}
	if (name && !strncmp(name, ".zdebug_", 8)) {
		if (pread(fd, buf, 12, shdr->sh_offset) != 12 || memcmp(buf, "ZLIB", 4))
			return UINT64_MAX;
		memcpy(&v, buf + 4, 8);
		return be64toh(v);
	}
	return shdr->sh_size;
}

uint64_t elf__read_size(Elf *elf, int fd, enum elf_read what)
{
	Elf_Scn *scn = NULL;
	uint64_t total = 0;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return UINT64_MAX;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name = NULL;
		GElf_Shdr shdr;
		bool take;

		if (!gelf_getshdr(scn, &shdr))
			return UINT64_MAX;
		if (shdr.sh_type == SHT_NOBITS || !shdr.sh_size)
			continue;
		/* Names only for DWARF: reading them reads the section name
		 * table, one of the string tables ELF_READ_SYMS bounds first. */
		if (what == ELF_READ_DWARF)
			name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (what == ELF_READ_SYMS)
			take = shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNSYM ||
			       shdr.sh_type == SHT_STRTAB || shdr.sh_type == SHT_NOTE;
		else
			take = name && (!strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8));
		if (take)
			total = add_sat(total, inflated_size(elf, fd, &shdr, name));
	}
	return total;
}
