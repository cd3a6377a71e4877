// SPDX-License-Identifier: BSD-2-Clause
/* A failed load is blamed on the program libbpf says failed, not the first
 * one its log names (on Debian 6.1's arm64 verifier, profd_offcpu failed
 * and the error named profd_heap_session). */
#include <criterion/criterion.h>

#include "tracer/kernel.h"

/* The shape of libbpf 1.1's log: programs named as they are prepared,
 * then the one the verifier rejected. */
static const char log_verifier[] =
	"libbpf: prog 'profd_heap_session': unrecognized ELF section name 'uprobe.session'\n"
	"libbpf: prog 'profd_sample': relo #3: patched insn #12\n"
	"libbpf: prog 'profd_offcpu': BPF program load failed: Permission denied\n"
	"libbpf: prog 'profd_offcpu': -- BEGIN PROG LOAD LOG --\nR4 !read_ok\n"
	"-- END PROG LOAD LOG --\n";

Test(kernel, names_the_program_that_failed)
{
	char name[64];

	kernel__failed_prog(log_verifier, name, sizeof(name));
	cr_assert_str_eq(name, "profd_offcpu");
}

Test(kernel, falls_back_to_the_last_named_then_to_unknown)
{
	char name[64];

	kernel__failed_prog("libbpf: prog 'a': x\nlibbpf: prog 'b': y\n", name, sizeof(name));
	cr_assert_str_eq(name, "b");
	kernel__failed_prog("libbpf: failed to create map\n", name, sizeof(name));
	cr_assert_str_eq(name, "?");
	/* A name cut short by the log's own bound: no quote to end it. */
	kernel__failed_prog("libbpf: prog 'profd_off", name, sizeof(name));
	cr_assert_str_eq(name, "?");
	/* Longer than the room: cut, still terminated. */
	kernel__failed_prog("prog 'aaaaaaaaaaaaaaaaaaaaaaaa': failed\n", name, 8);
	cr_assert_str_eq(name, "aaaaaaa");
}
