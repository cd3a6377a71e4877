// SPDX-License-Identifier: BSD-2-Clause
/*
 * Call frame information of one object (.eh_frame, else .debug_frame),
 * reduced to what unwinding needs: how to find the CFA, and where the
 * return address and the caller's frame pointer are.  Which registers
 * those are is the object's architecture's table (cfi_arch.h:
 * cfi_x86_64.c, cfi_arm64.c), picked by its ELF machine.
 *
 * Most rows are "CFA = sp or fp + n, saved at CFA + m", which the
 * unwinder caches as struct sym_cfi.  The rest are DWARF expressions (PLT
 * stubs compute their CFA from rip; signal trampolines find everything in
 * the ucontext), which cfi_eval runs with a small stack machine over the
 * registers and the copied stack.  libdw's own unwinder
 * (dwfl_getthread_frames) does all this too, but needs a Dwfl of the whole
 * process per sample; here an object's CFI is looked up once per address
 * and the result shared by every process that maps it.
 */
#include <dwarf.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/cfi_arch.h"
#include "symbolizer/obj.h"

static const struct cfi_arch *const archs[] = {&cfi_arch_x86_64, &cfi_arch_arm64};

const struct cfi_arch *cfi_arch__of(uint16_t e_machine)
{
	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++)
		if (archs[i]->e_machine == e_machine)
			return archs[i];
	return NULL;
}

/* The one place that asks the compiler which architecture this is. */
const struct cfi_arch *cfi_arch__host(void)
{
#if defined(__x86_64__)
	return &cfi_arch_x86_64;
#elif defined(__aarch64__)
	return &cfi_arch_arm64;
#else
	return NULL;
#endif
}

uint64_t symbolizer__user_addr_mask(void)
{
	static uint64_t mask;
	const struct cfi_arch *a = cfi_arch__host();
	uint64_t m = 0x0000ffffffffffffULL;
	int here = 0;

	if (mask)
		return mask;
	/* Where this thread's stack is: just below 2^VA_BITS (within the
	 * stack's and mmap's randomization, a few bits at most).  Only where
	 * return addresses are signed; 48 bits elsewhere, as before. */
	if (a && a->pac) {
		uintptr_t p = (uintptr_t)&here;
		int bits = p ? 64 - __builtin_clzll(p) : 0;

		if (bits >= 36 && bits <= 48)
			m = (1ULL << bits) - 1;
	}
	mask = m;	/* the same value in every thread that races here */
	return mask;
}

bool symbolizer__ra_in_lr(void)
{
	const struct cfi_arch *a = cfi_arch__host();

	return a && a->ra == a->bx;
}

/* The object's architecture, from its ELF header once; NULL: none we know. */
static const struct cfi_arch *arch_of(struct sym_obj *o)
{
	Dwarf_Addr bias;
	GElf_Ehdr eh;
	Elf *elf;

	if (!o->arch_tried) {
		o->arch_tried = true;
		elf = dwfl_module_getelf(o->mod, &bias);
		if (elf && gelf_getehdr(elf, &eh))
			o->arch = cfi_arch__of(eh.e_machine);
	}
	return o->arch;
}

#define EVAL_STACK 16
#define EVAL_STEPS 64

/* The row at vaddr, from .eh_frame first (what the runtime unwinder uses,
 * and all a stripped binary has), then .debug_frame if DWARF is loaded. */
static Dwarf_Frame *lookup(struct sym_obj *o, uint64_t vaddr, Dwarf_Addr *bias_out)
{
	Dwarf_CFI *cfis[2];
	Dwarf_Addr biases[2] = {0, 0};

	if (o->err)
		return NULL;
	cfis[0] = dwfl_module_eh_cfi(o->mod, &biases[0]);
	cfis[1] = o->dwarf_loaded ? dwfl_module_dwarf_cfi(o->mod, &biases[1]) : NULL;
	for (int i = 0; i < 2; i++) {
		Dwarf_Frame *frame = NULL;

		if (cfis[i] && !dwarf_cfi_addrframe(cfis[i], vaddr - biases[i], &frame)) {
			*bias_out = biases[i];
			return frame;
		}
	}
	dwfl_errno();
	return NULL;
}

/* A register's rule, if it is one the compact row can hold. */
static bool reduce_reg(Dwarf_Frame *frame, int regno, uint8_t *rule, int32_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(frame, regno, mem, &ops, &nops))
		return false;
	*off = 0;
	if (!ops && nops == 0) {
		*rule = SYM_REG_SAME;
		return true;
	}
	if (nops == 0) {
		*rule = SYM_REG_UNDEF;
		return true;
	}
	/* offset(N): DW_OP_call_frame_cfa [DW_OP_plus_uconst N], N two's complement */
	if (ops[0].atom != DW_OP_call_frame_cfa || nops > 2)
		return false;
	if (nops == 2) {
		int64_t n = (int64_t)ops[1].number;

		if (ops[1].atom != DW_OP_plus_uconst || n < INT32_MIN || n > INT32_MAX)
			return false;
		*off = (int32_t)n;
	}
	*rule = SYM_REG_AT;
	return true;
}

static void reduce(const struct cfi_arch *a, Dwarf_Frame *frame, Dwarf_Addr bias,
		   struct sym_cfi *row)
{
	Dwarf_Addr start = 0, end = 0;
	Dwarf_Op *ops;
	size_t nops;
	bool signal = false;

	memset(row, 0, sizeof(*row));
	dwarf_frame_info(frame, &start, &end, &signal);
	row->signal = signal;
	row->pac = a->pac;
	row->fde_start = start + bias;	/* the row's range, not the FDE's */
	row->cfa = SYM_CFA_EXPR;
	if (!dwarf_frame_cfa(frame, &ops, &nops) && nops == 1 && ops[0].atom == DW_OP_bregx &&
	    (int64_t)ops[0].number2 >= INT32_MIN && (int64_t)ops[0].number2 <= INT32_MAX) {
		if (ops[0].number == (Dwarf_Word)a->sp)
			row->cfa = SYM_CFA_SP;
		else if (ops[0].number == (Dwarf_Word)a->bp)
			row->cfa = SYM_CFA_BP;
		else if (ops[0].number == (Dwarf_Word)a->bx)
			row->cfa = SYM_CFA_BX;
		row->cfa_off = (int32_t)ops[0].number2;
	}
	if (!reduce_reg(frame, a->ra, &row->ra, &row->ra_off))
		row->ra = SYM_REG_EXPR;
	/* The return address column unchanged: it is the link register
	 * (arm64's x30 at a leaf), which the sample carries as bx. */
	if (row->ra == SYM_REG_SAME)
		row->ra = a->ra == a->bx ? SYM_REG_LR : SYM_REG_EXPR;
	if (!reduce_reg(frame, a->bp, &row->bp, &row->bp_off))
		row->bp = SYM_REG_EXPR;
	if (!reduce_reg(frame, a->bx, &row->bx, &row->bx_off))
		row->bx = SYM_REG_EXPR;
	/* A frame record {caller's fp, return address} at the frame pointer:
	 * what the kernel side's frame-pointer walk reads. */
	row->frame_record = row->ra == SYM_REG_AT && row->bp == SYM_REG_AT &&
			    row->ra_off == row->bp_off + 8 &&
			    ((row->cfa == SYM_CFA_BP && row->cfa_off + row->bp_off == 0 &&
			      row->cfa_off == 16) ||
			     a->record_any_cfa);
}

int obj__cfi(struct sym_obj *o, uint64_t vaddr, struct sym_cfi *row)
{
	Dwarf_Frame *frame;
	Dwarf_Addr bias = 0;

	const struct cfi_arch *a = o->err ? NULL : arch_of(o);

	if (!a)
		return -ENOENT;
	frame = lookup(o, vaddr, &bias);
	if (!frame)
		return -ENOENT;
	reduce(a, frame, bias, row);
	free(frame);
	return 0;
}

/* ---- function starts, from .eh_frame_hdr ---- */

#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

/*
 * The header's search table, in the one encoding linkers write (GNU ld,
 * gold, lld, mold): entries of two datarel sdata4 values.  Anything else
 * leaves stripped code named by its CFI rows' starts instead.
 */
static void load_fde_table(struct sym_obj *o)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(o->mod, &bias);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	o->fde_table_tried = true;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *d;
		const uint8_t *p;
		uint32_t n;

		if (!gelf_getshdr(scn, &sh) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(name, ".eh_frame_hdr"))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < 12)
			return;
		p = d->d_buf;
		if (p[0] != 1 || p[2] != DW_EH_PE_udata4 ||
		    p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
			return;
		memcpy(&n, p + 8, 4);	/* after the 4-byte eh_frame pointer */
		if (n > (d->d_size - 12) / 8)
			return;
		o->fde_table = (const int32_t *)(p + 12);
		o->nfde = n;
		o->fde_table_base = sh.sh_addr;
		return;
	}
}

int obj__fde_start(struct sym_obj *o, uint64_t vaddr, uint64_t *start)
{
	size_t lo = 0, hi;

	if (o->err)
		return -ENOENT;
	if (!o->fde_table_tried)
		load_fde_table(o);
	hi = o->nfde;
	/* The last entry that starts at or below vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int32_t rel;

		memcpy(&rel, &o->fde_table[2 * mid], 4);
		if (o->fde_table_base + (int64_t)rel <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	{
		int32_t rel;

		memcpy(&rel, &o->fde_table[2 * (lo - 1)], 4);
		*start = o->fde_table_base + (int64_t)rel;
	}
	return 0;
}

/* ---- DWARF expressions, as CFI uses them ---- */

struct eval {
	const struct cfi_arch *a;
	const struct sym_regs *regs;
	sym_read_fn read;
	void *ctx;
	uint64_t cfa;
};

static int reg_value(const struct eval *ev, uint64_t regno, uint64_t *v)
{
	const struct cfi_arch *a = ev->a;

	if (regno == (uint64_t)a->sp) {
		*v = ev->regs->sp;
		return 0;
	}
	if (regno == (uint64_t)a->bp && ev->regs->bp_ok) {
		*v = ev->regs->bp;
		return 0;
	}
	if (regno == (uint64_t)a->bx && ev->regs->bx_ok) {
		*v = ev->regs->bx;
		return 0;
	}
	if (a->pc >= 0 && regno == (uint64_t)a->pc) {
		*v = ev->regs->pc;
		return 0;
	}
	return -ENOENT;	/* a register the sample doesn't carry, or unknown */
}

/*
 * Run ops; *out is the value (stack_value, regx) or the address the value
 * is at (*is_addr).  Only what CFI expressions in practice use: PLT stubs'
 * CFA (breg, lit, and, ge, shl, plus) and signal frames' (breg, deref).
 */
static int run(const struct eval *ev, const Dwarf_Op *ops, size_t nops, uint64_t *out,
	       bool *is_addr)
{
	uint64_t st[EVAL_STACK], a, b;
	size_t sp = 0;
	int err;

	*is_addr = true;
	if (nops > EVAL_STEPS)
		return -E2BIG;
#define PUSH(v)                               \
	do {                                  \
		if (sp == EVAL_STACK)         \
			return -E2BIG;        \
		st[sp++] = (v);               \
	} while (0)
#define POP(v)                                \
	do {                                  \
		if (sp == 0)                  \
			return -EINVAL;       \
		(v) = st[--sp];               \
	} while (0)
	for (size_t i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
		uint8_t at = op->atom;

		if (at >= DW_OP_lit0 && at <= DW_OP_lit31) {
			PUSH((uint64_t)(at - DW_OP_lit0));
			continue;
		}
		if (at >= DW_OP_breg0 && at <= DW_OP_breg31) {
			err = reg_value(ev, at - DW_OP_breg0, &a);
			if (err)
				return err;
			PUSH(a + op->number);
			continue;
		}
		switch (at) {
		case DW_OP_call_frame_cfa:
			PUSH(ev->cfa);
			break;
		case DW_OP_bregx:
			err = reg_value(ev, op->number, &a);
			if (err)
				return err;
			PUSH(a + op->number2);
			break;
		case DW_OP_regx:
			err = reg_value(ev, op->number, &a);
			if (err)
				return err;
			PUSH(a);
			*is_addr = false;
			break;
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
		case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_plus_uconst:
			POP(a);
			PUSH(a + op->number);
			break;
		case DW_OP_deref:
			POP(a);
			err = ev->read(ev->ctx, a, &b);
			if (err)
				return err;
			PUSH(b);
			break;
		case DW_OP_dup:
			POP(a);
			PUSH(a);
			PUSH(a);
			break;
		case DW_OP_drop:
			POP(a);
			break;
		case DW_OP_stack_value:
			*is_addr = false;
			break;
		case DW_OP_plus: case DW_OP_minus: case DW_OP_and: case DW_OP_or:
		case DW_OP_xor: case DW_OP_shl: case DW_OP_shr: case DW_OP_mul:
		case DW_OP_ge: case DW_OP_gt: case DW_OP_le: case DW_OP_lt:
		case DW_OP_eq: case DW_OP_ne:
			POP(b);
			POP(a);
			switch (at) {
			case DW_OP_plus: a += b; break;
			case DW_OP_minus: a -= b; break;
			case DW_OP_and: a &= b; break;
			case DW_OP_or: a |= b; break;
			case DW_OP_xor: a ^= b; break;
			case DW_OP_shl: a = b < 64 ? a << b : 0; break;
			case DW_OP_shr: a = b < 64 ? a >> b : 0; break;
			case DW_OP_mul: a *= b; break;
			/* comparisons are signed in DWARF */
			case DW_OP_ge: a = (int64_t)a >= (int64_t)b; break;
			case DW_OP_gt: a = (int64_t)a > (int64_t)b; break;
			case DW_OP_le: a = (int64_t)a <= (int64_t)b; break;
			case DW_OP_lt: a = (int64_t)a < (int64_t)b; break;
			case DW_OP_eq: a = a == b; break;
			case DW_OP_ne: a = a != b; break;
			}
			PUSH(a);
			break;
		default:
			return -ENOTSUP;
		}
	}
#undef PUSH
#undef POP
	if (sp == 0)
		return -EINVAL;
	*out = st[sp - 1];
	return 0;
}

/* A register of the caller: 0 and *val, 1 if undefined, 2 if unchanged
 * (*val = same), or negative errno. */
static int eval_reg(const struct eval *ev, Dwarf_Frame *frame, int regno, uint64_t same,
		    uint64_t *val)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	bool is_addr;
	uint64_t v;
	int err;

	if (dwarf_frame_register(frame, regno, mem, &ops, &nops))
		return -EINVAL;
	if (!ops && nops == 0) {
		*val = same;
		return 2;
	}
	if (nops == 0)
		return 1;
	err = run(ev, ops, nops, &v, &is_addr);
	if (err)
		return err;
	if (is_addr)
		return ev->read(ev->ctx, v, val);
	*val = v;
	return 0;
}

int obj__cfi_eval(struct sym_obj *o, uint64_t vaddr, const struct sym_regs *in, sym_read_fn rd,
		  void *ctx, struct sym_regs *caller)
{
	struct eval ev = {o->err ? NULL : arch_of(o), in, rd, ctx, 0};
	const struct cfi_arch *a = ev.a;
	Dwarf_Frame *frame;
	Dwarf_Addr bias = 0;
	Dwarf_Op *ops;
	size_t nops;
	bool is_addr;
	int err;

	if (!a)
		return -ENOENT;
	frame = lookup(o, vaddr, &bias);
	if (!frame)
		return -ENOENT;
	err = -EINVAL;
	if (dwarf_frame_cfa(frame, &ops, &nops))
		goto cleanup;
	err = run(&ev, ops, nops, &ev.cfa, &is_addr);
	if (err)
		goto cleanup;
	/* A CFA expression's value is the CFA itself (DWARF 5, 6.4.2). */
	caller->sp = ev.cfa;
	err = eval_reg(&ev, frame, a->ra, in->bx, &caller->pc);
	if (err == 1) {
		caller->pc = 0;	/* undefined: the outermost frame */
	} else if (err == 2) {
		/* Unchanged: only the link register can hold it (arm64). */
		err = -ENOENT;
		if (a->ra != a->bx || !in->bx_ok)
			goto cleanup;
	} else if (err) {
		goto cleanup;
	}
	/* Unknown rather than an error: only some later step may need them. */
	err = eval_reg(&ev, frame, a->bp, in->bp, &caller->bp);
	caller->bp_ok = err == 0 || (err == 2 && in->bp_ok);
	err = eval_reg(&ev, frame, a->bx, in->bx, &caller->bx);
	caller->bx_ok = err == 0 || (err == 2 && in->bx_ok);
	if (a->pac)
		caller->pc &= SYM_PAC_ADDR_MASK;
	err = 0;
cleanup:
	free(frame);
	return err;
}
