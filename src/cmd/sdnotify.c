// SPDX-License-Identifier: BSD-2-Clause
/* sdnotify: telling systemd profd serve is ready, stopping, and alive (sdnotify.h). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmd/sdnotify.h"
#include "lib/log.h"

/*
 * sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET.  A
 * leading '@' means Linux's abstract namespace.  0 when there is no
 * systemd to tell, negative errno on failure.
 */
int sdnotify__send(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len;
	socklen_t salen;
	int fd, err = 0;

	if (!path || !*path)
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	/* Abstract names are not NUL-terminated: the length says where they end. */
	salen = offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/');
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen) < 0)
		err = -errno;
	close(fd);
	return err;
}

void sdnotify__send_or_warn(const char *state)
{
	int err = sdnotify__send(state);

	if (err)
		log__warn("cannot notify systemd (%s): %s", state, strerror(-err));
}

/*
 * The watchdog: with WatchdogSec= in the unit, systemd sets WATCHDOG_USEC
 * (and WATCHDOG_PID, ours) and restarts the service when WATCHDOG=1 stops
 * arriving.  The ping comes from a timer on the event loop, at half the
 * interval, so that it proves the loop itself turns: a loop stuck in a
 * blocking open() or a runaway parse stops pinging and gets restarted.
 * Returns the interval to ping at, or 0 when there is no watchdog.
 */
uint64_t sdnotify__watchdog_usec(void)
{
	const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	unsigned long long v;
	char *end;

	if (!usec || !*usec)
		return 0;
	if (pid && *pid) {
		errno = 0;
		v = strtoull(pid, &end, 10);
		if (errno || *end || v != (unsigned long long)getpid())
			return 0;	/* meant for another process */
	}
	errno = 0;
	v = strtoull(usec, &end, 10);
	if (errno || *end || v == 0) {
		log__warn("ignoring WATCHDOG_USEC='%s': not a number of microseconds", usec);
		return 0;
	}
	return v / 2;
}
