/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sdnotify: sd_notify(3) without libsystemd, for profd serve: READY=1,
 * STOPPING=1 and the watchdog's WATCHDOG=1, as datagrams to
 * $NOTIFY_SOCKET.  Reads systemd's variables (NOTIFY_SOCKET,
 * WATCHDOG_USEC, WATCHDOG_PID), not profd's (cmd/env.h).
 */
#ifndef PROFD_SDNOTIFY_H
#define PROFD_SDNOTIFY_H

#include <stdint.h>

/* One datagram; 0 when there is no systemd to tell, negative errno on failure. */
int sdnotify__send(const char *state);
/* The same, logging a warning on failure. */
void sdnotify__send_or_warn(const char *state);
/* The interval to ping the watchdog at (half WatchdogSec=), 0 for none. */
uint64_t sdnotify__watchdog_usec(void);

#endif
