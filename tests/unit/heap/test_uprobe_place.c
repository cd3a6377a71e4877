// SPDX-License-Identifier: BSD-2-Clause
/* Probe placement on hand-assembled x86-64 code. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/abi/heap.h"
#include "heap/uprobe_place.h"
#include "lib/mapped_file.h"

#define VADDR 0x1000

struct place_case {
	const char *what;
	uint8_t code[32];
	size_t len;
	uint32_t fn;
	int64_t want_off;	/* from the entry; -1: a wrapper, not probed */
	bool want_emulated;
};

static const struct place_case cases[] = {
	/* glibc free: test %rdi,%rdi (single-stepped); je rel32 (emulated). */
	{"free: past test to je", {0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0, 0, 0, 0x55, 0xc3}, 11,
	 PROFD_FN_FREE, 3, true},
	/* glibc malloc: push %r12 at the entry. */
	{"malloc: push at entry", {0x41, 0x54, 0x55, 0xc3}, 4, PROFD_FN_MALLOC, 0, true},
	/* mov %rsi,%rdi overwrites free's argument before anything emulated. */
	{"argument overwritten", {0x48, 0x89, 0xf7, 0x53, 0xc3}, 5, PROFD_FN_FREE, 0, false},
	/* rdx is calloc's? no: calloc reads rdi and rsi; rdx may change. */
	{"non-argument register may change", {0x48, 0x31, 0xd2, 0x53, 0xc3}, 5, PROFD_FN_CALLOC, 3,
	 true},
	/* The same write to rdx clobbers posix_memalign's size. */
	{"third argument overwritten", {0x48, 0x31, 0xd2, 0x53, 0xc3}, 5, PROFD_FN_POSIX_MEMALIGN, 0,
	 false},
	/* test; xor %eax,%eax; push %rbx at +5, which the je at +6 jumps to. */
	{"probe site is a branch target", {0x48, 0x85, 0xff, 0x31, 0xc0, 0x53, 0x74, 0xfd, 0xc3}, 9,
	 PROFD_FN_FREE, 0, false},
	/* sub $8,%rsp moves the stack pointer: the return address would be lost. */
	{"stack pointer changed", {0x48, 0x83, 0xec, 0x08, 0x53, 0xc3}, 6, PROFD_FN_MALLOC, 0, false},
	/* glibc reallocarray: mul, then jmp realloc@plt (the PLT is at 0x100). */
	{"wrapper through the PLT", {0x48, 0x89, 0xf0, 0x48, 0xf7, 0xe2, 0x48, 0x89, 0xc6, 0xe9,
				     0xf2, 0xf0, 0xff, 0xff}, 14, PROFD_FN_REALLOCARRAY, -1, false},
};

ParameterizedTestParameters(uprobe_place, cases)
{
	return cr_make_param_array(struct place_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(const struct place_case *c, uprobe_place, cases)
{
	uint64_t entries[1] = {0x5000};
	struct uprobe_fwd fwd = {entries, 1, {0x100, 0}, {0x200, 0}};
	struct uprobe_site site = {.name = "fn", .entry_offset = 0x40};

	uprobe_place__choose(EM_X86_64, c->code, c->len, VADDR, c->fn, &fwd, &site);
	if (c->want_off < 0) {
		cr_assert(site.wrapper, "%s: not seen as a wrapper (%s)", c->what, site.note);
		return;
	}
	cr_assert(!site.wrapper, "%s: %s", c->what, site.note);
	cr_assert_eq(site.offset, 0x40 + (uint64_t)c->want_off, "%s: offset %#lx (%s)", c->what,
		     (unsigned long)site.offset, site.note);
	cr_assert_eq(site.emulated, c->want_emulated, "%s: emulated %d (%s)", c->what,
		     site.emulated, site.note);
	cr_assert_eq(site.stack_delta, 0, "%s", c->what);
}

/* arm64: words as the assembler writes them, little-endian in memory. */
struct place_a64 {
	const char *what;
	uint32_t words[8];
	size_t n;
	int64_t want_off;	/* -1: a wrapper */
	bool want_emulated;
};

#define BTI_C 0xd503245f
#define PACIASP 0xd503233f
#define STP_FP_LR 0xa9bf7bfd	/* stp x29, x30, [sp, #-16]! */
#define MOV_FP_SP 0x910003fd	/* mov x29, sp */
#define RET 0xd65f03c0

static const struct place_a64 a64_cases[] = {
	/* -mbranch-protection=standard: the probe on paciasp, never past it. */
	{"bti c then paciasp: on paciasp", {BTI_C, PACIASP, STP_FP_LR, MOV_FP_SP, RET}, 5, 4, false},
	/* bti only: past the landing pad. */
	{"bti c then stp: past the pad", {BTI_C, STP_FP_LR, MOV_FP_SP, RET}, 4, 4, false},
	/* paciasp is its own landing pad: stays at the entry. */
	{"paciasp at entry", {PACIASP, STP_FP_LR, RET}, 3, 0, false},
	/* No branch protection: the entry. */
	{"plain entry", {STP_FP_LR, MOV_FP_SP, RET}, 3, 0, false},
	/* cbz x0 at +8 back to +4: +4 is reached without the pad's path. */
	{"+4 is a branch target", {BTI_C, STP_FP_LR, 0xb4ffffe0, RET}, 4, 0, false},
	/* bti c; b.eq: past the pad onto a simulated branch. */
	{"simulated branch past the pad", {BTI_C, 0x54000040, RET, RET}, 4, 4, true},
	/* reallocarray: bti c; ...; b realloc@plt (the PLT at 0x100). */
	{"wrapper through the PLT", {BTI_C, 0x9b027c21, 0x17fffc3e}, 3, -1, false},
};

ParameterizedTestParameters(uprobe_place, arm64)
{
	return cr_make_param_array(struct place_a64, a64_cases,
				   sizeof(a64_cases) / sizeof(a64_cases[0]));
}

ParameterizedTest(const struct place_a64 *c, uprobe_place, arm64)
{
	uint64_t entries[1] = {0x5000};
	struct uprobe_fwd fwd = {entries, 1, {0x100, 0}, {0x200, 0}};
	struct uprobe_site site = {.name = "fn", .entry_offset = 0x40};
	uint8_t code[32];

	for (size_t i = 0; i < c->n; i++) {
		code[4 * i] = c->words[i] & 0xff;
		code[4 * i + 1] = (c->words[i] >> 8) & 0xff;
		code[4 * i + 2] = (c->words[i] >> 16) & 0xff;
		code[4 * i + 3] = c->words[i] >> 24;
	}
	uprobe_place__choose(EM_AARCH64, code, 4 * c->n, VADDR, PROFD_FN_MALLOC, &fwd, &site);
	if (c->want_off < 0) {
		cr_assert(site.wrapper, "%s: not seen as a wrapper (%s)", c->what, site.note);
		return;
	}
	cr_assert(!site.wrapper, "%s: %s", c->what, site.note);
	cr_assert_eq(site.offset, 0x40 + (uint64_t)c->want_off, "%s: offset %#lx (%s)", c->what,
		     (unsigned long)site.offset, site.note);
	cr_assert_eq(site.emulated, c->want_emulated, "%s: simulated %d (%s)", c->what,
		     site.emulated, site.note);
	cr_assert_eq(site.stack_delta, 0, "%s", c->what);
}

/* A machine without a placer: the entry, and the note says so. */
Test(uprobe_place, unknown_machine)
{
	uint8_t code[4] = {0x90, 0x90, 0x90, 0xc3};
	struct uprobe_site site = {.name = "fn", .entry_offset = 0x40};

	uprobe_place__choose(EM_RISCV, code, 4, VADDR, PROFD_FN_MALLOC, NULL, &site);
	cr_assert_eq(site.offset, 0x40);
	cr_assert(!site.emulated && !site.wrapper);
	cr_assert_not_null(strstr(site.note, "not placed"), "%s", site.note);
}

/* The real libc: free's probe leaves its single-stepped first instruction. */
Test(uprobe_place, libc_free)
{
	struct uprobe_site sites[UPROBE_PLACE_MAX];
	int fd = mapped_file__open_path("/lib/x86_64-linux-gnu/libc.so.6");
	int n;
	bool seen_free = false;

	cr_assert_geq(fd, 0);
	n = uprobe_place__find(fd, sites, UPROBE_PLACE_MAX);
	close(fd);

	cr_assert_gt(n, 5, "found %d allocator entry points in libc", n);
	for (int i = 0; i < n; i++) {
		if (!strcmp(sites[i].name, "free")) {
			seen_free = true;
			cr_assert(sites[i].emulated, "free: %s", sites[i].note);
			cr_assert_gt(sites[i].offset, sites[i].entry_offset, "free: %s", sites[i].note);
		}
		if (!strcmp(sites[i].name, "malloc"))
			cr_assert(sites[i].emulated, "malloc: %s", sites[i].note);
	}
	cr_assert(seen_free);
}

/*
 * The files heap probes are placed in are opened by the daemon from paths
 * that processes control.  A FIFO at such a path (a mapped library
 * replaced by one) must not hang the daemon (a blocking open() waits for
 * a writer forever), and a file swapped in after the maps were read must
 * not be the one probed.
 */
Test(uprobe_place, opens_never_block_nor_follow_swaps, .timeout = 10)
{
	char dir[] = "/tmp/profd-unit.XXXXXX", fifo[64], lib[64], swap[64];
	struct stat st;
	struct mapped_file mf = {.path = fifo};
	int fd;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/libfifo.so", dir);
	snprintf(lib, sizeof(lib), "%s/liba.so", dir);
	snprintf(swap, sizeof(swap), "%s/libb.so", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(mapped_file__open_path(fifo), -ENOEXEC, "a FIFO is not an ELF object");
	cr_assert_eq(mapped_file__open(&mf), -ENOEXEC, "a FIFO is not an ELF object");

	fd = open(lib, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(stat(lib, &st), 0);
	mf.path = lib;
	mf.dev = st.st_dev;
	mf.ino = st.st_ino;
	fd = mapped_file__open(&mf);
	cr_assert_geq(fd, 0, "the file the maps name: %d", fd);
	close(fd);
	fd = open(swap, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(rename(swap, lib), 0);
	cr_assert_eq(mapped_file__open(&mf), -ESTALE, "another file now at the path");

	unlink(lib);
	unlink(fifo);
	rmdir(dir);
}
