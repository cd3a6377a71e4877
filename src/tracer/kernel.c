// SPDX-License-Identifier: BSD-2-Clause
/*
 * kernel: what this kernel offers (BTF, JIT, helpers, tracepoints, sessions), one line naming
 * what is missing (the contract: kernel.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/abi/targets.h"
#include "lib/log.h"
#include "lib/strbuf.h"
#include "tracer/kernel.h"
#include "tracer/tracefs.h"

/* The value of enumerator `name` of the kernel's enum `type`, from its BTF. */
static int kernel_enum_value(const char *type, const char *name, uint32_t *value)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	int id, err = -ENOENT;

	if (!btf)
		return -errno;
	id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (int i = 0; t && i < btf_vlen(t); i++) {
		const struct btf_enum *e = btf_enum(t) + i;

		if (!strcmp(btf__name_by_offset(btf, e->name_off), name)) {
			*value = e->val;
			err = 0;
			break;
		}
	}
	btf__free(btf);
	return err;
}

/* A number from a sysctl's file: true if it could be read. */
static bool read_sysctl(const char *path, unsigned long *v)
{
	char buf[32] = "";
	ssize_t n = -1;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return false;
	*v = strtoul(buf, NULL, 10);
	return true;
}

void kernel__probe(struct kernel_features *f, bool no_uprobe_session)
{
	struct utsname u;
	unsigned long jit;

	if (uname(&u) == 0)
		snprintf(f->kernel, sizeof(f->kernel), "%s", u.release);
	f->btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	f->jit = read_sysctl("/proc/sys/net/core/bpf_jit_enable", &jit) && jit != 0;
	/* Sessions exist when the kernel's own BTF names their attach type.
	 * no_uprobe_session (PROFD_HEAP_PROBES=uprobe) asks for the older way
	 * anyway (tests, and measuring what kernels without sessions pay). */
	f->uprobe_session = f->btf && kernel_enum_value("bpf_attach_type",
							"BPF_TRACE_UPROBE_SESSION",
							&f->uprobe_session_type) == 0;
	if (no_uprobe_session)
		f->uprobe_session = false;
}

/*
 * Before loading, find what this kernel lacks, so the one line a user gets
 * names it and the version that has it.  Returns 0, or the error to give.
 */
int kernel__check(void)
{
	static const struct {
		enum bpf_prog_type type;
		enum bpf_func_id helper;
		const char *what;
	} helpers[] = {
		{BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_get_attach_cookie,
		 "bpf_get_attach_cookie() in perf_event programs (Linux 5.15)"},
		{BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_probe_read_user,
		 "bpf_probe_read_user() (Linux 5.5)"},
		{BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_ringbuf_output, "BPF ring buffers (Linux 5.8)"},
		{BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_get_stack, "bpf_get_stack() (Linux 4.18)"},
		{BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_probe_read_kernel,
		 "bpf_probe_read_kernel() (Linux 5.5)"},
	};
	static const char *const events[][2] = {
		{"task", "task_newtask"},
		{"sched", "sched_process_exec"},
		{"sched", "sched_process_exit"},
	};
	/* return 0: the smallest program there is. */
	static const struct bpf_insn ret0[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	struct tracefs_field f;
	int fd, r;

	/* libbpf's probes say "unsupported" for "not permitted": ask first. */
	fd = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, NULL, "GPL", ret0, 2, NULL);
	if (fd < 0 && (errno == EPERM || errno == EACCES)) {
		log__error("not permitted to load BPF programs: run as root, or grant CAP_BPF, "
			   "CAP_PERFMON, CAP_SYS_PTRACE and CAP_SYS_RESOURCE");
		return -EPERM;
	}
	if (fd >= 0)
		close(fd);
	r = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, NULL);
	if (r <= 0) {
		log__error("this kernel cannot attach BPF programs to perf events "
			   "(CONFIG_BPF_SYSCALL, CONFIG_BPF_EVENTS and CONFIG_PERF_EVENTS are needed)");
		return -EOPNOTSUPP;
	}
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) <= 0) {
		log__error("this kernel lacks BPF ring buffers (Linux 5.8 or newer has them)");
		return -EOPNOTSUPP;
	}
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++) {
		if (libbpf_probe_bpf_helper(helpers[i].type, helpers[i].helper, NULL) <= 0) {
			log__error("this kernel lacks %s", helpers[i].what);
			return -EOPNOTSUPP;
		}
	}
	if (!tracefs__dir()) {
		log__error("tracefs is not mounted and cannot be: mount -t tracefs tracefs "
			   "/sys/kernel/tracing (profd follows processes with its tracepoints)");
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		r = tracefs__field(events[i][0], events[i][1], "common_pid", &f);
		if (r) {
			log__error("this kernel has no %s:%s tracepoint (CONFIG_TRACEPOINTS, "
				   "CONFIG_EVENT_TRACING): %s", events[i][0], events[i][1],
				   strerror(-r));
			return r;
		}
	}
	return 0;
}

void kernel__failed_prog(const char *libbpf_log, char *name, size_t size)
{
	const char *p = libbpf_log, *pick = NULL;

	/* libbpf names every program it prepares, so the first "prog '"
	 * is not the one that failed: the one whose line says it failed
	 * (or opens the verifier's log) is, else the last one named. */
	while ((p = strstr(p, "prog '"))) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);

		if (memmem(p, len, "failed", 6) || memmem(p, len, "BEGIN PROG LOAD LOG", 19)) {
			pick = p;
			break;
		}
		pick = p;
		p += 6;
	}
	snprintf(name, size, "?");
	if (pick) {
		const char *start = pick + 6, *end = strchr(start, '\'');

		if (end)
			snprintf(name, size, "%.*s", (int)(end - start), start);
	}
}

int kernel__explain_load_error(int err, const char *libbpf_log)
{
	char name[64];

	kernel__failed_prog(libbpf_log, name, sizeof(name));
	if (err == -EPERM)
		log__error("not permitted to load BPF programs: run as root, or grant CAP_BPF, "
			   "CAP_PERFMON, CAP_SYS_PTRACE and CAP_SYS_RESOURCE");
	else if (strstr(libbpf_log, "BEGIN PROG LOAD LOG") ||
		 strstr(libbpf_log, "verifier log"))
		log__error("the kernel's verifier rejected BPF program %s (PROFD_DEBUG=1 shows its "
			   "log)", name);
	else if (strstr(libbpf_log, "failed to create map") ||
		 strstr(libbpf_log, "Error in bpf_create_map"))
		log__error("creating a BPF map failed: %s (memory locked limit? PROFD_DEBUG=1 "
			   "shows which)", strerror(-err));
	else
		log__error("loading BPF program %s failed: %s (PROFD_DEBUG=1 shows libbpf's log)",
			   name, strerror(-err));
	return err;
}

/* Field offsets of the tracepoint records the BPF side reads. */
int kernel__tp_offsets(struct profd_tp_offsets *off)
{
	struct tracefs_field pid, flags, group_dead, free_pid;
	int err;

	err = tracefs__field("task", "task_newtask", "pid", &pid);
	err = err ?: tracefs__field("task", "task_newtask", "clone_flags", &flags);
	if (err) {
		log__error("cannot read the layout of task:task_newtask from tracefs: %s",
			   strerror(-err));
		return err;
	}
	if (pid.size != 4 || (flags.size != 8 && flags.size != 4)) {
		log__error("task:task_newtask has an unexpected layout (pid %d bytes, clone_flags "
			   "%d bytes)", pid.size, flags.size);
		return -EINVAL;
	}
	off->newtask_pid = pid.offset;
	off->newtask_flags = flags.offset;
	/* group_dead came in 6.11; before, the leader's exit marks the process's. */
	if (tracefs__field("sched", "sched_process_exit", "group_dead", &group_dead) == 0)
		off->exit_group_dead = group_dead.offset;
	/* 0: unknown, and exit snapshots stay off (bpfobj.c). */
	if (tracefs__field("sched", "sched_process_free", "pid", &free_pid) == 0 &&
	    free_pid.size == 4)
		off->free_pid = free_pid.offset;
	return 0;
}


int kernel__describe(const struct kernel_features *f, const char *heap_probes,
		     struct strbuf *sb)
{
	strbuf__addf(sb, "kernel %s: BTF %s, BPF JIT %s", f->kernel,
		     f->btf ? "yes" : "no (not needed)", f->jit ? "on" : "off (interpreted)");
	if (heap_probes)
		strbuf__addf(sb, ", heap probes: %s", heap_probes);
	return strbuf__err(sb);
}

unsigned kernel__tid_words(void)
{
	unsigned long max = 0;

	/* Unreadable or absurd: the largest, which holds any pid. */
	if (!read_sysctl("/proc/sys/kernel/pid_max", &max) || !max ||
	    max > (unsigned long)PROFD_TID_WORDS * 64)
		return PROFD_TID_WORDS;
	return (max + 63) / 64;
}
