// SPDX-License-Identifier: BSD-2-Clause
/*
 * unwind: user stacks by CFI over the copied stack, the frame-pointer walk spliced in and
 * checked where the copy ends; takes plain registers and stack bytes (struct unwind_sample),
 * unit-tested on recorded samples in tests/unit/cpu/ (the contract: unwind.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/abi/cpu.h"
#include "cpu/unwind.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "proc/procs.h"
#include "symbolizer/cfi.h"
#include "symbolizer/symbolizer.h"

#define ROW_CACHE_SLOTS 16381	/* prime */

/*
 * CFI rows by (object, file offset): direct-mapped, so bounded by
 * construction; a miss costs one libdw lookup.  Most samples hit a few
 * hundred hot addresses.
 */
struct row_slot {
	uint64_t dev, ino, off;
	struct sym_cfi row;
	int8_t state;		/* 0 empty, 1 row, -1 no CFI covers off */
};

struct unwind {
	struct symbolizer *sym;
	struct row_slot *rows;
	struct unwind_stats st;
	bool trace;		/* PROFD_DEBUG_UNWIND=2: log every step */
};

struct unwind *unwind__new(struct symbolizer *sym, bool trace)
{
	struct unwind *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->sym = sym;
	u->trace = trace;
	u->rows = calloc(ROW_CACHE_SLOTS, sizeof(*u->rows));
	if (!u->rows) {
		free(u);
		return NULL;
	}
	return u;
}

void unwind__free(struct unwind *u)
{
	if (!u)
		return;
	free(u->rows);
	free(u);
}

void unwind__release_pages(struct unwind *u)
{
	symbolizer__release_pages(u->sym);
}

void unwind__stats(const struct unwind *u, struct unwind_stats *st)
{
	*st = u->st;
	st->table_bytes = ROW_CACHE_SLOTS * sizeof(*u->rows);
}

/* What one sample's unwinding works from. */
struct walk {
	struct unwind *u;
	struct procs *procs;
	const struct unwind_sample *s;
	const struct proc_maps *pm;
	const uint64_t *fp;	/* the kernel side's frame-pointer walk: ip, return addresses */
	size_t nfp;
	uint64_t fps[PROFD_MAX_STACK];	/* that walk's frame addresses, where the copy has them */
	size_t nfps;
	const uint8_t *stack;	/* the copy of [sp, sp + len) */
	uint64_t sp, len;
	uint64_t miss;		/* lowest address wanted beyond the copy */
	uint64_t hi;		/* the end of the highest slot read from it */
};

static int stack_read(void *ctx, uint64_t addr, uint64_t *val)
{
	struct walk *w = ctx;

	if (addr < w->sp || addr - w->sp > w->len || w->len - (addr - w->sp) < 8) {
		if (addr >= w->sp + w->len && (!w->miss || addr < w->miss))
			w->miss = addr;
		return -EFAULT;
	}
	memcpy(val, w->stack + (addr - w->sp), 8);
	if (addr + 8 > w->hi)
		w->hi = addr + 8;
	return 0;
}

/* The CFI row for pc (already moved into the call instruction when it
 * is a return address); false when no object or no CFI covers it. */
static bool row_for(struct walk *w, uint64_t pc, const struct proc_map **mp, struct sym_cfi *row)
{
	const struct proc_map *m;
	struct row_slot *slot;
	struct sym_object_key key;
	uint64_t off, h;

	w->pm = procs__maps_for(w->procs, w->s->pid, w->s->exec_seq, pc);
	m = proc_maps__find(w->pm, pc);
	*mp = m;
	if (!m)
		return false;
	off = pc - m->start + m->offset;
	h = hash__u64(hash__u64(hash__u64(HASH_SEED, m->dev), m->ino), off);
	slot = &w->u->rows[hash__final(h) % ROW_CACHE_SLOTS];
	if (slot->state && slot->dev == m->dev && slot->ino == m->ino && slot->off == off) {
		w->u->st.row_hits++;
		*row = slot->row;
		return slot->state > 0;
	}
	w->u->st.row_misses++;
	key = (struct sym_object_key){m->path, m->dev, m->ino, w->s->pid, m->start, m->end};
	*slot = (struct row_slot){.dev = m->dev, .ino = m->ino, .off = off, .state = -1};
	if (symbolizer__cfi(w->u->sym, &key, off, &slot->row) == 0)
		slot->state = 1;
	*row = slot->row;
	return slot->state > 0;
}

/* Is the row that of a function with a standard frame, its caller's frame
 * pointer and return address saved as the frame record the kernel side's
 * walk reads (x86-64: CFA = rbp + 16; arm64: {x29, x30} at x29)? */
static bool fp_row(const struct sym_cfi *r)
{
	return r->frame_record;
}

/* Which frame of the kernel side's walk has address bp: its return
 * address is fp[i + 1].  -1 if none. */
static int fp_index(const struct walk *w, uint64_t bp)
{
	for (size_t i = 0; i < w->nfps; i++)
		if (w->fps[i] == bp)
			return (int)i;
	return -1;
}

/*
 * The rest of the stack from the kernel side's walk, from fp[k] on, each
 * frame checked against CFI: a function whose CFA is not rbp-based at its
 * call has not saved its caller's frame pointer where the walk looked, so
 * the walk's next address would skip its real caller.  Stops there.
 */
static size_t splice(struct walk *w, size_t k, uint64_t *out, size_t n, size_t max,
		     struct unwind_result *res)
{
	const struct proc_map *m;
	struct sym_cfi row;

	for (; k < w->nfp && n < max; k++) {
		uint64_t pc = w->fp[k];

		if (!pc)
			break;
		out[n++] = pc;
		w->u->st.fp_frames++;
		if (!row_for(w, pc - 1, &m, &row)) {
			if (!m) {
				res->stop = "frame-pointer walk left known code";
				return n;	/* the chain is suspect */
			}
			continue;	/* no CFI (JIT, hand-written code): trust the chain */
		}
		if (row.ra == SYM_REG_UNDEF) {
			res->complete = true;
			return n;
		}
		/* Frame-pointer code that realigns its stack (main, some
		 * PostmasterMain-like functions) describes its CFA by an
		 * expression, yet keeps the chain: trust it like code without CFI. */
		if (fp_row(&row) || row.cfa == SYM_CFA_EXPR)
			continue;
		/* The walk's last frame, where a saved rbp of 0 ended it: _start
		 * and clone clear rbp, so this is a thread's outermost code. */
		if (k + 1 == w->nfp && w->s->fp_clean) {
			res->complete = true;
			return n;
		}
		/*
		 * The caller of pc is on a stack we don't have.  Worth a larger
		 * copy if the walk goes on into known code past it (qsort's
		 * comparator called from libc); not if it ends in words that
		 * aren't code (glibc's __libc_start_call_main, which keeps no
		 * frame pointer, under main): that is the stack's outer end.
		 */
		if (k + 1 < w->nfp && proc_maps__find(w->pm, w->fp[k + 1])) {
			res->need_more = true;
			res->stop = "frame-pointer walk reached code without frame pointers";
		} else {
			res->stop = "frame-pointer walk ended in code without frame pointers";
		}
		return n;
	}
	if (k == w->nfp && w->s->fp_clean)
		res->complete = true;
	return n;
}

/* The walk's frame addresses as far as the copy holds them. */
static void fp_addresses(struct walk *w)
{
	uint64_t bp = w->s->bp, next;

	w->nfps = 0;
	while (w->nfps + 1 < w->nfp && w->nfps < PROFD_MAX_STACK) {
		w->fps[w->nfps++] = bp;
		if (bp > w->sp + w->len || stack_read(w, bp, &next) || next <= bp)
			break;
		bp = next;
	}
	/* What the CFI walk reads is what counts. */
	w->miss = 0;
	w->hi = 0;
}

/*
 * Unwind by CFI over the copied stack, from the sample's registers.
 * Where the copy ends, continue with the kernel side's frame-pointer walk
 * if the frame we are in is the same frame that walk went through.
 */
static size_t cfi_walk(struct walk *w, struct sym_regs r, bool exact, uint64_t *out, size_t n,
		       size_t max, struct unwind_result *res);

/*
 * The sampled function has no CFI (crtstuff's __do_global_dtors_aux and
 * frame_dummy are built without; so are arm64's PLT stubs): try it as a
 * function that has saved nothing yet, as at its entry, its return address
 * in the link register (arm64) or the word at sp (x86-64).  Only taken
 * when the walk from there reaches a thread's outermost frame.
 */
static size_t try_entry(struct walk *w, const struct sym_regs *r, uint64_t *out, size_t n,
			size_t max, struct unwind_result *res)
{
	struct sym_regs c = *r;
	struct unwind_result tr = {0};
	size_t got;

	if (symbolizer__ra_in_lr()) {
		if (!r->bx_ok)
			return 0;
		c.pc = r->bx & SYM_PAC_ADDR_MASK;
		c.sp = r->sp;
	} else {
		if (stack_read(w, r->sp, &c.pc))
			return 0;
		c.sp = r->sp + 8;
	}
	if (!proc_maps__find(w->pm, c.pc))
		return 0;
	got = cfi_walk(w, c, false, out, n, max, &tr);
	if (!tr.complete)
		return 0;
	*res = tr;
	return got;
}

static size_t cfi_walk(struct walk *w, struct sym_regs r, bool exact, uint64_t *out, size_t n,
		       size_t max, struct unwind_result *res)
{
	const struct proc_map *m;
	struct sym_regs c;
	struct sym_cfi row;
	size_t got;
	int i, err;

	while (n < max) {
		out[n++] = r.pc;
		res->last_pc = r.pc;
		if (!row_for(w, exact ? r.pc : r.pc - 1, &m, &row)) {
			if (w->u->trace)
				log__info("  pc %#lx sp %#lx bp %#lx: no CFI (%s)", r.pc, r.sp, r.bp,
					  m ? m->path : "no mapping");
			if (!m) {
				res->stop = "pc in no known mapping";
				break;	/* anonymous code (a JIT), or an address we can't place */
			}
			if (n == 1 && (got = try_entry(w, &r, out, n, max, res)))
				return got;
			/* No CFI: a frame-pointer step, as perf -g would. */
			if (!r.bp_ok) {
				res->stop = "no CFI and rbp unknown";
				break;
			}
			/* From the copy while it lasts: the caller may lack frame
			 * pointers, which CFI then handles. */
			if (stack_read(w, r.bp + 8, &c.pc) || stack_read(w, r.bp, &c.bp)) {
				i = fp_index(w, r.bp);
				if (i >= 0)
					return splice(w, i + 1, out, n, max, res);
				goto beyond;
			}
			/* Signed by pointer authentication (arm64): the address
			 * under the code is the return address. */
			if (c.pc > SYM_PAC_ADDR_MASK && proc_maps__find(w->pm, c.pc & SYM_PAC_ADDR_MASK))
				c.pc &= SYM_PAC_ADDR_MASK;
			c.sp = r.bp + 16;
			c.bp_ok = true;
			c.bx = r.bx;
			c.bx_ok = r.bx_ok;
		} else if (row.cfa && row.ra && row.bp && row.bx) {
			uint64_t cfa;

			if ((row.cfa == SYM_CFA_BP && !r.bp_ok) || (row.cfa == SYM_CFA_BX && !r.bx_ok)) {
				res->stop = "CFA register unknown";
				break;
			}
			cfa = row.cfa == SYM_CFA_SP ? r.sp : row.cfa == SYM_CFA_BP ? r.bp : r.bx;
			cfa += (int64_t)row.cfa_off;
			if (row.ra == SYM_REG_UNDEF) {
				res->complete = true;	/* _start, clone3: the outermost frame */
				break;
			}
			if (row.ra == SYM_REG_LR) {
				/* A leaf, or a prologue before x30 is saved. */
				if (!r.bx_ok) {
					res->stop = "link register unknown";
					break;
				}
				c.pc = r.bx;
			} else if (row.ra != SYM_REG_AT || stack_read(w, cfa + row.ra_off, &c.pc)) {
				/* Out of the copy in a standard frame the kernel side's
				 * walk went through: its addresses take over. */
				if (fp_row(&row) && r.bp_ok && (i = fp_index(w, r.bp)) >= 0)
					return splice(w, i + 1, out, n, max, res);
				goto beyond;
			}
			c.sp = cfa;
			c.bp = r.bp;
			c.bp_ok = r.bp_ok;
			if (row.bp == SYM_REG_AT)
				c.bp_ok = stack_read(w, cfa + row.bp_off, &c.bp) == 0;
			else if (row.bp == SYM_REG_UNDEF)
				c.bp_ok = false;
			c.bx = r.bx;
			c.bx_ok = r.bx_ok;
			if (row.bx == SYM_REG_AT)
				c.bx_ok = stack_read(w, cfa + row.bx_off, &c.bx) == 0;
			else if (row.bx == SYM_REG_UNDEF)
				c.bx_ok = false;
			if (row.pac)
				c.pc &= SYM_PAC_ADDR_MASK;
		} else {
			const struct sym_object_key key = {m->path, m->dev,   m->ino,
							   w->s->pid, m->start, m->end};
			uint64_t off = (exact ? r.pc : r.pc - 1) - m->start + m->offset;

			w->u->st.expr_steps++;
			err = symbolizer__cfi_eval(w->u->sym, &key, off, &r, stack_read, w, &c);
			if (err == -EFAULT)
				goto beyond;
			if (err) {
				res->stop = "CFI expression failed";
				break;
			}
		}
		if (w->u->trace)
			log__info("  pc %#lx sp %#lx bp %#lx: cfa %d%+d ra %d%+d bp %d%+d -> pc %#lx",
				  r.pc, r.sp, r.bp, row.cfa, row.cfa_off, row.ra, row.ra_off, row.bp,
				  row.bp_off, c.pc);
		w->u->st.cfi_frames++;
		if (!c.pc) {
			res->complete = true;
			break;
		}
		/* Each caller's frame is above its callee's; anything else is a
		 * loop in corrupt data.  A leaf that keeps its return address in
		 * the link register may share its caller's sp, once. */
		if ((c.sp < r.sp || (c.sp == r.sp && (row.ra != SYM_REG_LR || c.pc == r.pc))) &&
		    !row.signal) {
			res->stop = "stack pointer went down";
			break;
		}
		exact = row.signal;	/* after a signal frame: the interrupted pc itself */
		r = c;
	}
	return n;
beyond:
	res->need_more = true;
	res->stop = "copied stack ended";
	return n;
}

size_t unwind__user_frames(struct unwind *u, struct procs *procs, const struct profd_sample *s,
			   size_t size, uint64_t *out, size_t max, struct unwind_result *res)
{
	size_t nk = s->nk, nu = s->nu;
	struct unwind_sample in = {
		.pid = s->pid,
		.exec_seq = s->exec_seq,
		.ip = s->ip,
		.sp = s->sp,
		.bp = s->bp,
		.bx = s->bx,
		.regs = s->flags & PROFD_SF_UREGS,
		.fp_clean = s->flags & PROFD_SF_FP_CLEAN,
	};

	memset(res, 0, sizeof(*res));
	if (sizeof(*s) + (nk + nu) * 8 > size || nk + nu > PROFD_FRAMES_MAX)
		return 0;
	in.fp = (const uint64_t *)(s + 1) + nk;
	in.nfp = nu;
	if (s->stack_len && s->stack_off >= sizeof(*s) + (nk + nu) * 8 &&
	    (size_t)s->stack_off + s->stack_len <= size) {
		in.stack = (const uint8_t *)s + s->stack_off;
		in.stack_len = s->stack_len;
	}
	return unwind__frames(u, procs, &in, out, max, res);
}

size_t unwind__frames(struct unwind *u, struct procs *procs, const struct unwind_sample *s,
		      uint64_t *out, size_t max, struct unwind_result *res)
{
	size_t nu = s->nfp, n;
	struct walk w = {.u = u, .procs = procs, .s = s};

	memset(res, 0, sizeof(*res));
	if (nu == 0 || max == 0)
		return 0;
	w.fp = s->fp;
	w.nfp = nu;
	if (s->stack_len) {
		w.stack = s->stack;
		w.len = s->stack_len;
	}
	w.sp = s->sp;
	if (!s->regs || !w.stack) {
		/* The kernel's own walk, or registers we didn't get: as it is. */
		n = nu < max ? nu : max;
		memcpy(out, w.fp, n * sizeof(*out));
		res->complete = s->fp_clean && n == nu;
		return n;
	}
	fp_addresses(&w);
	/* The first pc is where the CPU was, not a return address: exact. */
	n = cfi_walk(&w, (struct sym_regs){s->ip, s->sp, s->bp, s->bx, true, true}, true, out, 0,
		     max, res);
	if (res->need_more) {
		res->want = w.miss > w.sp ? w.miss + 8 - w.sp : 2 * w.len;
		/* Code without frame pointers only above the innermost frame
		 * pointer (libc, the vDSO, under frame-pointer code): a copy up
		 * to it would have done.  An rbp that is no frame pointer (0 at
		 * a process's start) says nothing: the kernel side doesn't cut
		 * the copy at one that lies below sp. */
		res->below_fp = w.miss > w.sp && (s->bp <= s->sp || w.miss + 8 <= s->bp + 16);
		u->st.need_more++;
	}
	if (res->complete && !w.miss && w.hi > w.sp)
		res->used = w.hi - w.sp;
	if (!res->complete)
		u->st.incomplete++;
	u->st.samples++;
	return n;
}
