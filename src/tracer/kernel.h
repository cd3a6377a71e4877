/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kernel: what the running kernel offers profd, found out before loading
 * anything, so that a missing feature gets one line naming it and the
 * version that has it, rather than libbpf's errno.
 */
#ifndef PROFD_KERNEL_H
#define PROFD_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

struct profd_tp_offsets;

struct kernel_features {
	char kernel[65];		/* uname -r */
	bool btf;			/* /sys/kernel/btf/vmlinux */
	bool jit;			/* net.core.bpf_jit_enable != 0 */
	/* Heap: uprobe sessions (Linux 6.12, found through kernel BTF); else
	 * a uprobe and a uretprobe per allocator. */
	bool uprobe_session;
	uint32_t uprobe_session_type;	/* its enum bpf_attach_type value */
	bool exit_snapshots;		/* user state kept at exit (cpu.bpf.c) */
	/* ... by syscalls:sys_enter_exit_group (before 6.16), which every
	 * syscall on the machine pays for while attached. */
	bool exit_syscall_tp;
};

/* no_uprobe_session: report none even where the kernel has them (PROFD_HEAP_PROBES=uprobe). */
void kernel__probe(struct kernel_features *f, bool no_uprobe_session);

struct strbuf;
/* "kernel 6.12.117: BTF no, BPF JIT off (interpreted)", for logs and
 * profiles; with heap_probes (heap__probes_text), also how allocators are
 * probed. */
int kernel__describe(const struct kernel_features *f, const char *heap_probes,
		     struct strbuf *sb);

/* Everything the BPF object needs: capabilities, program and map types,
 * helpers, tracefs and the tracepoints.  0, or logs one line and returns
 * the error. */
int kernel__check(void);

/* The program libbpf's log says failed to load, in name ("?" if none). */
void kernel__failed_prog(const char *libbpf_log, char *name, size_t size);
/* Logs one line for a failed load, from libbpf's own messages. */
int kernel__explain_load_error(int err, const char *libbpf_log);

/* Field offsets of the tracepoint records the BPF side reads, from tracefs. */
int kernel__tp_offsets(struct profd_tp_offsets *off);

/* Words of a bit-per-pid array for this machine's pid_max (at least 1, at
 * most PROFD_TID_WORDS): 512 with the kernel's default of 32768, 64 KiB of
 * words where systemd raises it to 4M. */
unsigned kernel__tid_words(void);

#endif
