// SPDX-License-Identifier: BSD-2-Clause
/*
 * uprobe_place: where each allocator probe goes (the contract: uprobe_place.h):
 * the allocators an ELF object defines, each placed by its machine's placer
 * (place_x86_64.c, place_arm64.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "bpf/abi/heap.h"
#include "heap/place_arch.h"
#include "heap/uprobe_place.h"

#define MAX_CODE 8192		/* bytes of a function decoded for branch targets */

static const struct {
	const char *name;
	uint32_t fn;
	int nargs;		/* argument registers the BPF side reads */
} allocators[] = {
	{"malloc", PROFD_FN_MALLOC, 1},
	{"calloc", PROFD_FN_CALLOC, 2},
	{"realloc", PROFD_FN_REALLOC, 2},
	{"reallocarray", PROFD_FN_REALLOCARRAY, 3},
	{"posix_memalign", PROFD_FN_POSIX_MEMALIGN, 3},
	{"aligned_alloc", PROFD_FN_ALIGNED_ALLOC, 2},
	{"memalign", PROFD_FN_MEMALIGN, 2},
	{"valloc", PROFD_FN_VALLOC, 1},
	{"pvalloc", PROFD_FN_PVALLOC, 1},
	{"free", PROFD_FN_FREE, 1},
	/* libprofd_heap.so's (preload/heap_preload.c): probed on their entry,
	 * a nop, and only in a process that maps it (probes.c). */
	{"profd_heap_sampled", PROFD_FN_PRELOAD_SAMPLED, 5},
	{"profd_heap_freed", PROFD_FN_PRELOAD_FREED, 1},
};

int uprobe_place__nargs(uint32_t fn)
{
	for (size_t i = 0; i < sizeof(allocators) / sizeof(allocators[0]); i++)
		if (allocators[i].fn == fn)
			return allocators[i].nargs;
	return 3;
}

bool uprobe_place__forwards(const struct uprobe_fwd *fwd, uint64_t to)
{
	if (!fwd)
		return false;
	for (size_t i = 0; i < fwd->nentries; i++)
		if (fwd->entries[i] == to)
			return true;
	for (int i = 0; i < 2; i++)
		if (to >= fwd->plt_start[i] && to < fwd->plt_end[i])
			return true;
	return false;
}

/* One placer per architecture, by the ELF object's machine. */
static const struct {
	uint16_t e_machine;
	void (*choose)(const uint8_t *code, size_t len, uint64_t vaddr, uint32_t fn,
		       const struct uprobe_fwd *fwd, struct uprobe_site *site);
} placers[] = {
	{EM_X86_64, place_x86_64__choose},
	{EM_AARCH64, place_arm64__choose},
};

void uprobe_place__choose(uint16_t e_machine, const uint8_t *code, size_t len, uint64_t vaddr,
			  uint32_t fn, const struct uprobe_fwd *fwd, struct uprobe_site *site)
{
	site->offset = site->entry_offset;
	site->stack_delta = 0;
	site->emulated = false;
	site->wrapper = false;
	for (size_t i = 0; i < sizeof(placers) / sizeof(placers[0]); i++) {
		if (placers[i].e_machine == e_machine) {
			placers[i].choose(code, len, vaddr, fn, fwd, site);
			return;
		}
	}
	snprintf(site->note, sizeof(site->note), "machine %u: entry, not placed", e_machine);
}

static int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

int uprobe_place__find(int fd, struct uprobe_site *sites, size_t max)
{
	uint64_t found_vaddr[sizeof(allocators) / sizeof(allocators[0])] = {};
	uint64_t found_size[sizeof(allocators) / sizeof(allocators[0])] = {};
	struct uprobe_fwd fwd = {.entries = found_vaddr,
				 .nentries = sizeof(allocators) / sizeof(allocators[0])};
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	size_t n = 0;
	Elf *elf = NULL;
	GElf_Ehdr eh;
	int err = 0;

	elf_version(EV_CURRENT);
	/* Read, not mmap: a file truncated under us must be a short read, not SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto cleanup;
	}
	if (!gelf_getehdr(elf, &eh)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	if (elf_getshdrstrndx(elf, &shstrndx))
		shstrndx = 0;
	/* .symtab and .dynsym: a static allocator is often only in .symtab. */
	while ((scn = elf_nextscn(elf, scn))) {
		const char *sname;
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh))
			continue;
		sname = shstrndx ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (sname && (!strcmp(sname, ".plt") || !strcmp(sname, ".plt.sec"))) {
			int k = !strcmp(sname, ".plt.sec");

			fwd.plt_start[k] = sh.sh_addr;
			fwd.plt_end[k] = sh.sh_addr + sh.sh_size;
		}
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			for (size_t a = 0; name && a < sizeof(allocators) / sizeof(allocators[0]); a++)
				if (!strcmp(name, allocators[a].name)) {
					found_vaddr[a] = sym.st_value;
					found_size[a] = sym.st_size;
				}
		}
	}
	for (size_t a = 0; a < sizeof(allocators) / sizeof(allocators[0]) && n < max; a++) {
		struct uprobe_site *s = &sites[n];
		uint8_t code[MAX_CODE];
		size_t len;
		ssize_t got;
		bool dup = false;

		if (!found_vaddr[a])
			continue;
		/* aligned_alloc and memalign are one function in glibc: one probe. */
		for (size_t b = 0; b < a; b++)
			dup |= found_vaddr[b] == found_vaddr[a];
		if (dup)
			continue;
		memset(s, 0, sizeof(*s));
		s->name = allocators[a].name;
		s->fn = allocators[a].fn;
		if (vaddr_to_offset(elf, found_vaddr[a], &s->entry_offset))
			continue;
		len = found_size[a] && found_size[a] < MAX_CODE ? found_size[a] : MAX_CODE;
		got = pread(fd, code, len, s->entry_offset);
		if (got <= 0)
			continue;
		uprobe_place__choose(eh.e_machine, code, got, found_vaddr[a], s->fn, &fwd, s);
		n++;
	}
	err = n;
cleanup:
	if (elf)
		elf_end(elf);
	return err;
}
