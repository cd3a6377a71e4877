// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwinder on a sample this very process takes of itself: registers
 * captured in a leaf function, the stack copied from sp up, as the kernel
 * side does.  Unlike test_unwind.c it needs no ptrace, so it also runs
 * where the arm64 unit tests run on x86-64, under qemu-user
 * (tests/sys/t_arm64_build.sh).
 *
 * The chain driver -> outer -> middle -> leaf is built without frame
 * pointers, and on arm64 with pointer authentication and BTI
 * (-mbranch-protection=standard): middle signs x30 (paciasp) before it
 * saves it, so the return address into outer lies on the stack with a PAC
 * above its address bits, and its CFI toggles the signing state with
 * DW_CFA_AARCH64_negate_ra_state.  leaf saves nothing: its caller is only
 * in x30, the link register (SYM_REG_LR).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <libelf.h>

#include "cpu/unwind.h"
#include "proc/procs.h"
#include "symbolizer/cfi.h"
#include "symbolizer/symbolizer.h"

#define COPY_MAX (256 << 10)
#define FRAMES_MAX 64

#define NOFP __attribute__((noinline, noclone, optimize("omit-frame-pointer")))
#if defined(__aarch64__)
#define PROTECTED __attribute__((target("branch-protection=standard")))
/* pc, sp, the frame pointer and the link register: the sample's four. */
#define CAPTURE(c)                                                                 \
	__asm__ volatile("adr %0, .\n\tmov %1, sp\n\tmov %2, x29\n\tmov %3, x30"     \
			 : "=r"((c).pc), "=r"((c).sp), "=r"((c).fp), "=r"((c).x))
#elif defined(__x86_64__)
#define PROTECTED
/* pc, sp, the frame pointer and rbx. */
#define CAPTURE(c)                                                                 \
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2\n\tmov %%rbx, %3" \
			 : "=r"((c).pc), "=r"((c).sp), "=r"((c).fp), "=r"((c).x))
#else
#error "no register capture for this architecture"
#endif

static struct {
	uint64_t pc, sp, fp, x;
} cap;
static uint64_t stack_end, copy_len;
static uint64_t copy[COPY_MAX / 8];

/* ASan gives locals fake stacks and redzones: the PLT case's hand-made
 * sample is then not the stack the calls made. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* No call, no frame: the capture is the state of a leaf at its entry.  It
 * copies its callers' frames whole, redzones too, as the kernel side does:
 * not an error for ASan. */
__attribute__((no_sanitize_address)) NOFP PROTECTED static void leaf(void)
{
	volatile uint64_t *dst = copy;
	const volatile uint64_t *src;
	uint64_t n;

	CAPTURE(cap);
	src = (const volatile uint64_t *)(uintptr_t)cap.sp;
	n = (stack_end - cap.sp) / 8;
	if (n > COPY_MAX / 8)
		n = COPY_MAX / 8;
	for (uint64_t i = 0; i < n; i++)
		dst[i] = src[i];
	copy_len = n * 8;
}

/* Locals on the stack, and a call: x30 signed and saved. */
NOFP PROTECTED static int middle(int k)
{
	volatile char buf[200];

	buf[k % 200] = (char)k;
	leaf();
	return buf[k % 200] + 1;	/* work after the call: no tail call */
}

NOFP PROTECTED static int outer(int k)
{
	int r = middle(k + 1);

	__asm__ volatile("" ::: "memory");
	return r + 1;
}

NOFP PROTECTED static int driver(int k)
{
	int r = outer(k + 1);

	__asm__ volatile("" ::: "memory");
	return r + 1;
}

/*
 * driver(1), called from `pad` 64-byte steps deeper in the stack.  A PAC
 * is a function of the key, the address and sp: a 7-bit one (48-bit
 * addresses, top byte ignored) is all zero once in 128, and then the
 * signed return address looks unsigned.  Called deeper, sp differs, and so
 * does the PAC.
 */
static __attribute__((noinline)) int driver_at(int pad)
{
	volatile char *p = __builtin_alloca(64 * (size_t)pad + 16);

	p[0] = 0;
	return driver(1) + p[0];
}

/* The end of the mapping holding the stack (its highest address). */
static uint64_t end_of_stack(void)
{
	uint64_t here = (uintptr_t)__builtin_frame_address(0), lo, hi, found = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) == 2 && here >= lo && here < hi)
			found = hi;
	fclose(f);
	cr_assert_neq(found, 0, "no mapping holds the stack at %#" PRIx64, here);
	return found;
}

static struct procs *procs;
static struct symbolizer *sym;

static const char *function_at(uint64_t addr)
{
	static struct sym_result res;
	const struct proc_map *m;
	struct sym_object_key key;

	m = proc_maps__find(procs__maps(procs, getpid(), PROCS_SEQ_LATEST), addr);
	if (!m)
		return "?";
	key = (struct sym_object_key){m->path, m->dev, m->ino, 0, m->start, m->end};
	if (symbolizer__resolve(sym, &key, addr - m->start + m->offset, &res) ||
	    res.nframes < 1 || !res.frames[res.nframes - 1].function)
		return "?";
	return res.frames[res.nframes - 1].function;
}

Test(unwind_self, leaf_link_register_and_signed_return_addresses)
{
	static const char *const want[] = {"leaf", "middle", "outer", "driver"};
	struct unwind_result res;
	struct unwind *u;
	uint64_t out[FRAMES_MAX];
	struct unwind_sample s;
	bool signed_seen = false;
	bool pac = false;
	size_t n;

#if defined(__aarch64__)
	pac = getauxval(AT_HWCAP) & HWCAP_PACA;
#endif
	procs = procs__new(4);
	sym = symbolizer__new(SYMBOLIZER_DEFAULT_MAX_BYTES);
	u = unwind__new(sym, false);
	cr_assert(procs && sym && u);
	stack_end = end_of_stack();
	/* Up to four samples, each deeper: see driver_at. */
	for (int pad = 0; pad < 4 && !signed_seen; pad++) {
		cr_assert_eq(driver_at(pad), 6);
		cr_assert_gt(copy_len, 256, "copied %" PRIu64 " bytes", copy_len);
		if (!pad)
			cr_assert_eq(procs__snapshot(procs, getpid(), 0, NULL, PROCS_SEQ_LATEST), 0);

		s = (struct unwind_sample){
			.pid = getpid(),
			.exec_seq = PROCS_SEQ_LATEST,
			.ip = cap.pc,
			.sp = cap.sp,
			.bp = cap.fp,
			.bx = cap.x,
			.regs = true,
			.fp = &cap.pc,	/* no frame pointers: the kernel's walk has the ip only */
			.nfp = 1,
			.stack = (const uint8_t *)copy,
			.stack_len = copy_len,
		};
		n = unwind__frames(u, procs, &s, out, FRAMES_MAX, &res);
		cr_assert_geq(n, 4, "%zu frames (stopped: %s)", n, res.stop ? res.stop : "-");
		for (size_t i = 0; i < 4; i++)
			cr_expect_str_eq(function_at(i ? out[i] - 1 : out[i]), want[i], "frame %zu", i);
		cr_expect_eq(out[0], cap.pc);
		cr_expect(res.complete, "stopped: %s", res.stop ? res.stop : "-");
		/* The leaf's caller came from the link register, as it was. */
		if (symbolizer__ra_in_lr())
			cr_expect_eq(out[1], cap.x, "leaf's caller %#" PRIx64 ", x30 %#" PRIx64, out[1],
				     cap.x);
		if (!pac)
			break;
		/*
		 * Where the CPU authenticates pointers (qemu's max CPU does),
		 * middle saved the return address into outer signed: the copy
		 * holds it with bits above the address, and the unwinder gave it
		 * without them.
		 */
		for (uint64_t i = 0; i < copy_len / 8; i++)
			signed_seen |= copy[i] != out[2] && (copy[i] & SYM_PAC_ADDR_MASK) == out[2];
		cr_expect_leq(out[2], SYM_PAC_ADDR_MASK);
	}
	if (pac)
		cr_expect(signed_seen, "no PAC-signed copy of %#" PRIx64 " on the stack", out[2]);
#if defined(__aarch64__)
	else
		cr_log_info("no pointer authentication on this CPU: nothing was signed");
#endif
	unwind__free(u);
	symbolizer__free(sym);
	procs__free(procs);
}

/* This executable's .plt, as loaded: [*lo, *hi). */
static void plt_of_self(uint64_t *lo, uint64_t *hi)
{
	Dl_info info;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf *elf;
	int fd;

	cr_assert(dladdr((void *)plt_of_self, &info) && info.dli_fbase);
	elf_version(EV_CURRENT);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(elf);
	cr_assert_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	*lo = *hi = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".plt")) {
			*lo = (uintptr_t)info.dli_fbase + sh.sh_addr;
			*hi = *lo + sh.sh_size;
		}
	}
	elf_end(elf);
	close(fd);
	cr_assert_gt(*hi, *lo + 32, "no .plt in this executable");
}

/*
 * A sample at the first instruction of a PLT stub: arm64's have no CFI,
 * and the caller is in the link register (x86-64's have CFI, and the
 * caller at sp).  The leaf's registers stand in for the stub's: nothing
 * has changed sp or the return address between a call and its stub.
 */
Test(unwind_self, plt_stub_unwinds_to_its_caller)
{
	static const char *const want[] = {"middle", "outer", "driver"};
	struct unwind_result res;
	uint64_t out[FRAMES_MAX], lo, hi;
	struct unwind_sample s;
	struct unwind *u;
	size_t n;

#ifdef UNDER_ASAN
	cr_skip_test("under ASan locals live on fake stacks: not the stack the calls made");
#endif
	procs = procs__new(4);
	sym = symbolizer__new(SYMBOLIZER_DEFAULT_MAX_BYTES);
	u = unwind__new(sym, false);
	cr_assert(procs && sym && u);
	stack_end = end_of_stack();
	cr_assert_eq(driver(1), 6);
	cr_assert_eq(procs__snapshot(procs, getpid(), 0, NULL, PROCS_SEQ_LATEST), 0);
	plt_of_self(&lo, &hi);
	s = (struct unwind_sample){
		.pid = getpid(),
		.exec_seq = PROCS_SEQ_LATEST,
		.ip = lo + 32,	/* past PLT0 (32 bytes on arm64, two 16-byte slots on x86-64) */
		.sp = cap.sp,
		.bp = cap.fp,
		.bx = cap.x,
		.regs = true,
		.fp = &s.ip,
		.nfp = 1,
		.stack = (const uint8_t *)copy,
		.stack_len = copy_len,
	};
	n = unwind__frames(u, procs, &s, out, FRAMES_MAX, &res);
	cr_assert_geq(n, 4, "%zu frames (stopped: %s)", n, res.stop ? res.stop : "-");
	cr_expect_eq(out[0], lo + 32);
	for (size_t i = 0; i < 3; i++)
		cr_expect_str_eq(function_at(out[i + 1] - 1), want[i], "frame %zu", i + 1);
	cr_expect(res.complete, "stopped: %s", res.stop ? res.stop : "-");
	unwind__free(u);
	symbolizer__free(sym);
	procs__free(procs);
}
