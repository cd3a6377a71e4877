// SPDX-License-Identifier: BSD-2-Clause
/*
 * elf: ELF primitives beneath the symbolizer's users of them (obj.c opening
 * an object, debuginfo.c checking a debug file's candidates): the GNU build
 * ID, and string tables that end inside themselves.
 */
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <string.h>

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
