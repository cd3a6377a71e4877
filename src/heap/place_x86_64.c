// SPDX-License-Identifier: BSD-2-Clause
/*
 * place_x86_64: an allocator probe's place in x86-64 code (place_arch.h),
 * decoded with capstone.  The kernel emulates a few instructions (push,
 * jmp/jcc/call rel, nop) and single-steps the rest: the probe moves past
 * instructions that leave the arguments and rsp (but for a push) alone,
 * to the first emulated one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>
#ifndef PROFD_STATIC
#include <dlfcn.h>
#endif
#include <linux/types.h>

#include "bpf/abi/heap.h"
#include "heap/place_arch.h"

#define MAX_SKIP 16		/* instructions we are willing to move past */

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

void place_x86_64__choose(const uint8_t *code, size_t len, uint64_t vaddr, uint32_t fn,
			  const struct uprobe_fwd *fwd, struct uprobe_site *site)
{
	int nargs = uprobe_place__nargs(fn);
	uint64_t targets[512];
	size_t ntargets = 0, count, i;
	uint16_t pushed = 0;
	cs_insn *insns = NULL;
	csh handle;

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
		if (insns[i].id == X86_INS_JMP && len <= WRAPPER_MAX && uprobe_place__forwards(fwd, to)) {
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

