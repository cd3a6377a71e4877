// SPDX-License-Identifier: BSD-2-Clause
/* uprobe_event: tracefs uprobes and per-process perf events on them (the contract: uprobe_event.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/log.h"
#include "tracer/tracefs.h"
#include "tracer/uprobe_event.h"

#define GROUP_PREFIX "profd_"

const char *uprobe_event__group(void)
{
	static char group[32];
	static pid_t owner;

	/* Named after the daemon that made it: one daemon's probes are not
	 * another's, and a dead daemon's are known by its pid. */
	if (owner != getpid()) {
		owner = getpid();
		snprintf(group, sizeof(group), GROUP_PREFIX "%d", (int)owner);
	}
	return group;
}

/* Write one command to uprobe_events: 0 or negative errno. */
static int command(const char *cmd)
{
	const char *dir = tracefs__dir();
	char path[128];
	ssize_t n;
	int fd, err = 0;

	if (!dir)
		return -errno;
	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	/* O_APPEND: O_TRUNC would remove every uprobe on the system. */
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, cmd, strlen(cmd));
	if (n < 0)
		err = -errno;
	else if ((size_t)n != strlen(cmd))
		err = -EIO;
	close(fd);
	return err;
}

/* events/GROUP/NAME/id, or negative errno. */
static int read_id(const char *group, const char *name)
{
	char buf[32];
	long n;
	int err = tracefs__read_event(group, name, "id", buf, sizeof(buf));

	if (err)
		return err;
	n = strtol(buf, NULL, 10);
	return n > 0 && n < INT32_MAX ? (int)n : -EIO;
}

static bool valid_name(const char *name)
{
	if (!*name || strlen(name) > 48)
		return false;
	for (const char *c = name; *c; c++)
		if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9')))
			return false;
	return true;
}

int uprobe_event__create(const char *name, int fd, uint64_t offset, bool ret)
{
	char cmd[256];
	int err;

	if (!valid_name(name) || fd < 0)
		return -EINVAL;
	snprintf(cmd, sizeof(cmd), "%c:%s/%s /proc/self/fd/%d:0x%" PRIx64 "\n", ret ? 'r' : 'p',
		 uprobe_event__group(), name, fd, offset);
	err = command(cmd);
	if (err == -EEXIST) {
		/* Ours from before (a heap tracker stopped and started again). */
		uprobe_event__remove(name);
		err = command(cmd);
	}
	if (err)
		return err;
	return read_id(uprobe_event__group(), name);
}

int uprobe_event__remove(const char *name)
{
	char cmd[128];

	if (!valid_name(name))
		return -EINVAL;
	snprintf(cmd, sizeof(cmd), "-:%s/%s\n", uprobe_event__group(), name);
	return command(cmd);
}

int uprobe_event__open(int id, int pid, unsigned int flags)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = id;
	attr.sample_period = 1;
	attr.inherit = !!(flags & UPROBE_EVENT_INHERIT);
	/* It would also enable the event at pid's next exec, which costs a
	 * little at its context switches from then on; the heap tracker
	 * closes a target's events when it execs anything else. */
	attr.enable_on_exec = !!(flags & UPROBE_EVENT_UNMAPPED);
	/*
	 * Disabled for good: the probe's filter takes the process's memory
	 * and the BPF program runs when the event is opened, enabled or not;
	 * an enabled event would be scheduled in and out with the process at
	 * every context switch, for nothing.
	 */
	attr.disabled = 1;
	fd = syscall(__NR_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int uprobe_event__noclone(int pid)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.disabled = 1;
	/* Not inherited: a child's context then holds less than its
	 * parent's, and is not taken for a clone (inherit_task_group). */
	attr.inherit = 0;
	fd = syscall(__NR_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Remove every probe of group (a dead daemon's): how many went. */
static int remove_group(const char *dir, const char *group)
{
	char path[512], cmd[640];
	struct dirent *d;
	DIR *g;
	int n = 0;

	snprintf(path, sizeof(path), "%s/events/%s", dir, group);
	g = opendir(path);
	if (!g)
		return 0;
	while ((d = readdir(g))) {
		if (d->d_type != DT_DIR || !valid_name(d->d_name) || strlen(group) > 64)
			continue;
		snprintf(cmd, sizeof(cmd), "-:%s/%s\n", group, d->d_name);
		n += command(cmd) == 0;
	}
	closedir(g);
	return n;
}

/* Is pid a live profd (its comm)? */
static bool live_profd(int pid)
{
	char path[64], comm[32] = "";
	ssize_t n;
	int fd;

	if (kill(pid, 0) && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	comm[n > 0 ? n : 0] = '\0';
	return !strncmp(comm, "profd", 5);
}

int uprobe_event__clean_stale(void)
{
	const char *dir = tracefs__dir();
	char path[128];
	struct dirent *d;
	DIR *events;
	int n = 0;

	if (!dir)
		return 0;
	snprintf(path, sizeof(path), "%s/events", dir);
	events = opendir(path);
	if (!events)
		return 0;
	while ((d = readdir(events))) {
		char *end;
		long pid;

		if (strncmp(d->d_name, GROUP_PREFIX, strlen(GROUP_PREFIX)))
			continue;
		pid = strtol(d->d_name + strlen(GROUP_PREFIX), &end, 10);
		if (*end || pid <= 0 || pid > INT32_MAX || pid == getpid() || live_profd(pid))
			continue;
		n += remove_group(dir, d->d_name);
	}
	closedir(events);
	if (n)
		log__info("heap: removed %d allocator probes a stopped daemon left in tracefs", n);
	return n;
}
