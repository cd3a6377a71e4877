// SPDX-License-Identifier: BSD-2-Clause
/* pgwait: PostgreSQL's wait events (the contract: pgwait.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc/pgwait.h"
#include "proc/pgwaitnames.h"

void pgwait__format(uint32_t id, uint32_t major, char *buf, size_t len)
{
	const char *type = pgwaitnames__class(id, major), *name;

	if (!type) {
		snprintf(buf, len, "0x%08" PRIX32, id);
		return;
	}
	name = pgwaitnames__event(id, major);
	if (name)
		snprintf(buf, len, "%s:%s", type, name);
	else
		snprintf(buf, len, "%s:0x%08" PRIX32, type, id);
}

/* The major version in an executable's path: /usr/lib/postgresql/NN/bin/. */
static uint32_t path_major(const char *path)
{
	const char *p = strstr(path, "/postgresql/");
	char *end;
	long v;

	if (!p)
		return 0;
	v = strtol(p + 12, &end, 10);
	return *end == '/' && v >= 9 && v < 100 ? (uint32_t)v : 0;
}

/* st_value of the dynamic symbol my_wait_event_info, and the virtual
 * address of the segment at file offset 0 (what the load bias is from). */
static int find_symbol(int fd, uint64_t *value, uint64_t *base)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	size_t nph = 0;
	int err = -ENOENT;
	bool have_base = false;

	if (!e || elf_kind(e) != ELF_K_ELF)
		goto cleanup;
	if (elf_getphdrnum(e, &nph))
		goto cleanup;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
			*base = ph.p_vaddr;
			have_base = true;
			break;
		}
	}
	while (have_base && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
			    sym.st_shndx == SHN_UNDEF || sym.st_size != 8)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, "my_wait_event_info")) {
				*value = sym.st_value;
				err = 0;
				goto cleanup;
			}
		}
	}
cleanup:
	if (e)
		elf_end(e);
	return err;
}

/* Where pid's executable (its device and inode) is mapped at file offset 0. */
static int load_start(const char *proc_root, int pid, dev_t dev, ino_t ino, uint64_t *start)
{
	char path[PATH_MAX], line[PATH_MAX + 128];
	unsigned long long lo, hi, off, inode;
	unsigned maj, min;
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu", &lo, &hi, &off, &maj, &min,
			   &inode) != 6)
			continue;
		if (off == 0 && inode == (unsigned long long)ino &&
		    makedev(maj, min) == dev) {
			*start = lo;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

int pgwait__info_addr(const char *proc_root, int pid, uint64_t *addr, uint32_t *major)
{
	char path[PATH_MAX], target[PATH_MAX];
	uint64_t value = 0, base = 0, start = 0;
	struct stat st;
	ssize_t n;
	int fd, err;

	*major = 0;
	if (pid <= 0 || snprintf(path, sizeof(path), "%s/%d/exe", proc_root, pid) >=
				(int)sizeof(path))
		return -EINVAL;
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		*major = path_major(target);
	}
	/* The running file itself, not whatever the path names now. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		err = -EINVAL;
		goto cleanup;
	}
	err = find_symbol(fd, &value, &base);
	err = err ?: load_start(proc_root, pid, st.st_dev, st.st_ino, &start);
	if (!err)
		*addr = value - base + start;
cleanup:
	close(fd);
	return err;
}
