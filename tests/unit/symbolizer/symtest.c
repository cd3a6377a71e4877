// SPDX-License-Identifier: BSD-2-Clause
/* symtest: the symbolizer's unit tests' shared helpers (symtest.h). */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symtest.h"

char *symtest__build_path(const char *rel)
{
	char self[PATH_MAX], *out = NULL;
	const char *b = getenv("BUILD");
	ssize_t n;

	if (b) {
		cr_assert(asprintf(&out, "%s/%s", b, rel) > 0);
		return out;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	cr_assert(n > 0);
	self[n] = 0;
	/* build/tests/unit_symbolizer */
	cr_assert(asprintf(&out, "%s/%s", dirname(dirname(self)), rel) > 0);
	return out;
}

char *symtest__libc_debug(void)
{
	static const char *libcs[] = {"/lib/x86_64-linux-gnu/libc.so.6",
				      "/lib/aarch64-linux-gnu/libc.so.6"};

	for (size_t i = 0; i < sizeof(libcs) / sizeof(libcs[0]); i++) {
		int fd = open(libcs[i], O_RDONLY);
		Elf *elf;
		Elf_Scn *scn = NULL;
		char *out = NULL;

		if (fd < 0)
			continue;
		elf_version(EV_CURRENT);
		elf = elf_begin(fd, ELF_C_READ, NULL);
		while (elf && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
			    !(d = elf_getdata(scn, NULL)))
				continue;
			GElf_Nhdr nh;
			size_t off = 0, no, dno;

			while ((off = gelf_getnote(d, off, &nh, &no, &dno)) > 0) {
				const unsigned char *id = (const unsigned char *)d->d_buf + dno;

				if (nh.n_type != NT_GNU_BUILD_ID || nh.n_descsz < 2)
					continue;
				char hex[128];
				size_t k = 0;

				for (size_t j = 0; j < nh.n_descsz && k + 3 < sizeof(hex); j++)
					k += snprintf(hex + k, sizeof(hex) - k, "%02x", id[j]);
				cr_assert(asprintf(&out, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex,
						   hex + 2) > 0);
			}
		}
		elf_end(elf);
		close(fd);
		if (out && access(out, R_OK) == 0)
			return out;
		free(out);
	}
	return NULL;
}

