/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pgwait: PostgreSQL's wait events, as pg_stat_activity shows them.  Every
 * backend publishes the event it waits in as a uint32 at
 * *my_wait_event_info (a pointer the executable exports: to a process
 * variable until the backend has its PGPROC, then into shared memory).
 * The top byte is the class (LWLock 0x01, Lock 0x03, BufferPin 0x04,
 * Activity 0x05, Client 0x06, Extension 0x07, IPC 0x08, Timeout 0x09,
 * IO 0x0A), the low 16 bits the event.
 */
#ifndef PROFD_PROC_PGWAIT_H
#define PROFD_PROC_PGWAIT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Where my_wait_event_info lives in process pid (PROC_ROOT/PID/exe's
 * dynamic symbols, relocated by where PROC_ROOT/PID/maps says the
 * executable is loaded), and its PostgreSQL major version (from the path,
 * /usr/lib/postgresql/NN/bin/; 0 if not found).  0, -ENOENT if the
 * executable exports no such symbol (stripped of it), or negative errno.
 */
int pgwait__info_addr(const char *proc_root, int pid, uint64_t *addr, uint32_t *major);

/*
 * "Type:Name" as pg_stat_activity's wait_event_type and wait_event read,
 * for PostgreSQL `major` (proc/pgwaitnames.h: 13 to 17, every class):
 * "LWLock:WALWrite", "Lock:transactionid"; an event profd cannot name
 * keeps its class and shows the id, "IO:0x0A00002A"; an unknown class
 * "0x2A000001".  Writes at most len bytes, NUL-terminated.
 */
void pgwait__format(uint32_t id, uint32_t major, char *buf, size_t len);

#endif
