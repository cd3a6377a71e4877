// SPDX-License-Identifier: BSD-2-Clause
/*
 * ELF objects as the symbolizer reads them: any local user can map a file
 * of their making and have the daemon (root) open it.  The input is
 * written to a memfd and opened like a mapped file (obj__open: headers,
 * segments, build ID, symbols), its DWARF loaded, then every question the
 * unwinder and the profile builder ask is asked at addresses taken from
 * the object itself (segment edges, .eh_frame_hdr's function starts) and
 * from the input's last bytes: CFI rows (obj__cfi), a CFI step with
 * expressions over a small copied stack (obj__cfi_eval), function starts
 * (obj__fde_start) and frames with inlines, files and lines (obj__frames).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolizer/obj.h"

#define STACK_WORDS 64
#define MAX_ADDRS 24

struct stack {
	uint64_t base;
	uint64_t words[STACK_WORDS];
};

static int read_stack(void *ctx, uint64_t addr, uint64_t *val)
{
	const struct stack *st = ctx;

	if (addr < st->base || addr - st->base > sizeof(st->words) - 8 || addr % 8)
		return -EFAULT;
	*val = st->words[(addr - st->base) / 8];
	return 0;
}

static void ask(struct sym_obj *o, uint64_t vaddr, const struct stack *st)
{
	struct sym_frame frames[SYM_MAX_FRAMES];
	struct sym_regs in = {vaddr, st->base + 64, st->base + 128, st->base, true, true}, out;
	struct sym_cfi row;
	uint64_t start;
	volatile size_t len = 0;
	int n;

	obj__cfi(o, vaddr, &row);
	obj__cfi_eval(o, vaddr, &in, read_stack, (void *)st, &out);
	obj__fde_start(o, vaddr, &start);
	n = obj__frames(o, vaddr, frames);
	if (n < 0 || n > SYM_MAX_FRAMES)
		abort();
	for (int i = 0; i < n; i++) {
		/* Strings the profile builder will copy: they must be readable. */
		if (frames[i].function)
			len += strlen(frames[i].function);
		if (frames[i].file)
			len += strlen(frames[i].file);
	}
	(void)len;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* Never ask a server: the input's build ID is nobody's. */
	unsetenv("DEBUGINFOD_URLS");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_object_key key = {0};
	uint64_t addrs[MAX_ADDRS];
	struct stack st;
	struct sym_obj *o = NULL;
	char path[64];
	size_t n = 0;
	int fd;

	fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	key.path = path;
	if (obj__open(&key, NULL, true, &o) || o->err)
		goto cleanup;
	obj__load_dwarf(o);

	/* The stack's contents come from the input too: the CFI step reads
	 * whatever the expressions point at. */
	st.base = 0x7ffc00000000;
	for (size_t i = 0; i < STACK_WORDS; i++)
		st.words[i] = st.base + (i * 8) % sizeof(st.words);
	if (size >= 16) {
		memcpy(&addrs[n++], data + size - 8, 8);
		memcpy(&st.words[3], data + size - 16, 8);
	}
	for (size_t i = 0; i < o->nsegs && n + 3 <= MAX_ADDRS; i++) {
		addrs[n++] = o->segs[i].vaddr;
		addrs[n++] = o->segs[i].vaddr + o->segs[i].filesz / 2;
		addrs[n++] = o->segs[i].vaddr + o->segs[i].filesz - 1;
	}
	if (!o->fde_table_tried) {
		uint64_t start;

		obj__fde_start(o, 0, &start);	/* loads the table */
	}
	for (size_t i = 0; i < o->nfde && n + 2 <= MAX_ADDRS; i += 1 + o->nfde / 8) {
		int32_t rel;

		memcpy(&rel, &o->fde_table[2 * i], 4);
		addrs[n++] = o->fde_table_base + (int64_t)rel;
		addrs[n++] = o->fde_table_base + (int64_t)rel + 4;
	}
	for (size_t i = 0; i < o->nfsyms && n < MAX_ADDRS; i += 1 + o->nfsyms / 4)
		addrs[n++] = o->fsyms[i].addr + o->fsyms[i].size / 2;
	for (size_t i = 0; i < n; i++)
		ask(o, addrs[i], &st);
cleanup:
	obj__free(o);
	close(fd);
	return 0;
}
