// SPDX-License-Identifier: BSD-2-Clause
/* uprobe_place: where each allocator probe goes (capstone) (the contract: uprobe_place.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <capstone/capstone.h>
#ifndef PROFD_STATIC
#include <dlfcn.h>
#endif
#include <linux/types.h>

#include "bpf/abi/heap.h"
#include "heap/uprobe_place.h"

#define MAX_SKIP 16		/* instructions we are willing to move past */
#define WRAPPER_MAX 64		/* bytes: a function this small that jumps away is a wrapper */
#define MAX_CODE 8192		/* bytes of a function decoded for branch targets */

/*
 * capstone is loaded when heap tracking starts, not linked, in the dynamic
 * build: its relocated tables are ~3 MB of resident memory that CPU-only
 * profiling never uses.  The static build (make dist, PROFD_STATIC) links
 * it in, as a static binary must not count on dlopen (which needs this very
 * glibc's libc.so at run time), so a probe is never single-stepped for
 * want of a disassembler; its tables are relocated at start there.
 */
static struct {
	bool tried;
	bool ok;
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	size_t (*disasm)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **);
	void (*free)(cs_insn *, size_t);
	cs_err (*close)(csh *);
	cs_err (*regs_access)(csh, const cs_insn *, cs_regs, uint8_t *, cs_regs, uint8_t *);
	bool (*insn_group)(csh, const cs_insn *, unsigned int);
} cs;

#ifdef PROFD_STATIC
static bool cs_load(void)
{
	cs.open = cs_open;
	cs.option = cs_option;
	cs.disasm = cs_disasm;
	cs.free = cs_free;
	cs.close = cs_close;
	cs.regs_access = cs_regs_access;
	cs.insn_group = cs_insn_group;
	cs.tried = cs.ok = true;
	return true;
}
#else
static bool cs_load(void)
{
	void *h;

	if (cs.tried)
		return cs.ok;
	cs.tried = true;
	h = dlopen("libcapstone.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	cs.open = (typeof(cs.open))dlsym(h, "cs_open");
	cs.option = (typeof(cs.option))dlsym(h, "cs_option");
	cs.disasm = (typeof(cs.disasm))dlsym(h, "cs_disasm");
	cs.free = (typeof(cs.free))dlsym(h, "cs_free");
	cs.close = (typeof(cs.close))dlsym(h, "cs_close");
	cs.regs_access = (typeof(cs.regs_access))dlsym(h, "cs_regs_access");
	cs.insn_group = (typeof(cs.insn_group))dlsym(h, "cs_insn_group");
	cs.ok = cs.open && cs.option && cs.disasm && cs.free && cs.close && cs.regs_access &&
		cs.insn_group;
	return cs.ok;
}
#endif

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

static int nargs_of(uint32_t fn)
{
	for (size_t i = 0; i < sizeof(allocators) / sizeof(allocators[0]); i++)
		if (allocators[i].fn == fn)
			return allocators[i].nargs;
	return 3;
}

/*
 * The kernel emulates these instead of single-stepping them
 * (arch/x86/kernel/uprobes.c: branch_setup_xol_ops, push_setup_xol_ops).
 * Matched on the raw bytes, so a prefix we don't know about disqualifies.
 */
static bool is_emulated(const uint8_t *b, size_t len)
{
	if (len == 1 && (b[0] == 0x90 || (b[0] >= 0x50 && b[0] <= 0x57)))
		return true;	/* nop, push %rax..%rdi */
	if (len == 2 && b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57)
		return true;	/* push %r8..%r15 */
	if (len == 2 && (b[0] == 0xeb || (b[0] >= 0x70 && b[0] <= 0x7f)))
		return true;	/* jmp rel8, jcc rel8 */
	if (len == 5 && (b[0] == 0xe9 || b[0] == 0xe8))
		return true;	/* jmp rel32, call rel32 */
	if (len == 6 && b[0] == 0x0f && b[1] >= 0x80 && b[1] <= 0x8f)
		return true;	/* jcc rel32 */
	return false;
}

static bool is_arg_reg(x86_reg r, int nargs)
{
	static const x86_reg args[][4] = {
		{X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL},
		{X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL},
		{X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL},
	};

	for (int a = 0; a < nargs && a < 3; a++)
		for (int k = 0; k < 4; k++)
			if (r == args[a][k])
				return true;
	return false;
}

/* May the probe move past insn?  *pushed grows by what a push moves rsp. */
static bool skippable(csh handle, cs_insn *insn, int nargs, uint16_t *pushed)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	bool push = insn->id == X86_INS_PUSH;

	for (int g = 0; g < insn->detail->groups_count; g++) {
		uint8_t grp = insn->detail->groups[g];

		if (grp == CS_GRP_JUMP || grp == CS_GRP_CALL || grp == CS_GRP_RET ||
		    grp == CS_GRP_INT || grp == CS_GRP_IRET)
			return false;
	}
	if (cs.regs_access(handle, insn, rd, &nrd, wr, &nwr))
		return false;
	for (int i = 0; i < nwr; i++) {
		if (wr[i] == X86_REG_EFLAGS)
			continue;
		if (push && wr[i] == X86_REG_RSP)
			continue;
		if (is_arg_reg(wr[i], nargs) || wr[i] == X86_REG_RSP || wr[i] == X86_REG_RIP)
			return false;
		/* Other registers are the function's own business. */
	}
	if (push)
		*pushed += 8;
	return true;
}

static bool forwards(const struct uprobe_fwd *fwd, uint64_t to)
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

void uprobe_place__choose(const uint8_t *code, size_t len, uint64_t vaddr, uint32_t fn,
			  const struct uprobe_fwd *fwd, struct uprobe_site *site)
{
	int nargs = nargs_of(fn);
	uint64_t targets[512];
	size_t ntargets = 0, count, i;
	uint16_t pushed = 0;
	cs_insn *insns = NULL;
	csh handle;

	site->offset = site->entry_offset;
	site->stack_delta = 0;
	site->emulated = false;
	site->wrapper = false;
	if (!cs_load() || cs.open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) {
		snprintf(site->note, sizeof(site->note),
			 "no disassembler (libcapstone4): entry, single-stepped");
		return;
	}
	cs.option(handle, CS_OPT_DETAIL, CS_OPT_ON);
	count = cs.disasm(handle, code, len, vaddr, 0, &insns);
	if (count == 0) {
		snprintf(site->note, sizeof(site->note), "undecodable: entry, single-stepped");
		goto cleanup;
	}
	/* Direct branch targets inside the decoded part of the function. */
	for (i = 0; i < count && ntargets < sizeof(targets) / sizeof(targets[0]); i++) {
		cs_x86 *x = &insns[i].detail->x86;
		uint64_t to;

		if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM ||
		    !(cs.insn_group(handle, &insns[i], CS_GRP_JUMP) ||
		      cs.insn_group(handle, &insns[i], CS_GRP_CALL)))
			continue;
		to = x->operands[0].imm;
		targets[ntargets++] = to;
		/*
		 * glibc's reallocarray checks for overflow and tail-jumps to
		 * realloc (through the PLT), which has its own probe: probing
		 * both would count the allocation twice.  A jump to an internal
		 * function (valloc -> _mid_memalign) is not such a wrapper.
		 */
		if (insns[i].id == X86_INS_JMP && len <= WRAPPER_MAX && forwards(fwd, to)) {
			site->wrapper = true;
			snprintf(site->note, sizeof(site->note),
				 "%s tail-jumps to %#lx: a wrapper, not probed", site->name,
				 (unsigned long)to);
			goto cleanup;
		}
	}
	for (i = 0; i < count && i < MAX_SKIP; i++) {
		cs_insn *in = &insns[i];

		if (i > 0) {
			for (size_t t = 0; t < ntargets; t++) {
				if (targets[t] == in->address) {
					snprintf(site->note, sizeof(site->note),
						 "+%#lx is a branch target: entry, single-stepped",
						 (unsigned long)(in->address - vaddr));
					goto fallback;
				}
			}
		}
		if (is_emulated(in->bytes, in->size)) {
			site->offset = site->entry_offset + (in->address - vaddr);
			site->stack_delta = pushed;
			site->emulated = true;
			snprintf(site->note, sizeof(site->note), "%s+%#lx (%.16s %.64s), emulated",
				 site->name, (unsigned long)(in->address - vaddr), in->mnemonic,
				 in->op_str);
			goto cleanup;
		}
		if (!skippable(handle, in, nargs, &pushed)) {
			snprintf(site->note, sizeof(site->note),
				 "%.16s %.64s at +%#lx may change arguments: entry, single-stepped",
				 in->mnemonic, in->op_str, (unsigned long)(in->address - vaddr));
			goto fallback;
		}
	}
	snprintf(site->note, sizeof(site->note), "no emulated instruction near entry: single-stepped");
fallback:
	site->offset = site->entry_offset;
	site->stack_delta = 0;
cleanup:
	if (insns)
		cs.free(insns, count);
	cs.close(&handle);
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
	int err = 0;

	elf_version(EV_CURRENT);
	/* Read, not mmap: a file truncated under us must be a short read, not SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
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
		uprobe_place__choose(code, got, found_vaddr[a], s->fn, &fwd, s);
		n++;
	}
	err = n;
cleanup:
	if (elf)
		elf_end(elf);
	return err;
}
