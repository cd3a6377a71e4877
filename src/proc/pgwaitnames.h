/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pgwaitnames: the names pg_stat_activity gives PostgreSQL's wait events,
 * per major version.  A wait event is a uint32: the top byte its class
 * (LWLock 0x01, Lock 0x03, BufferPin 0x04, Activity 0x05, Client 0x06,
 * Extension 0x07, IPC 0x08, Timeout 0x09, IO 0x0A; InjectionPoint 0x0B
 * from 17), the low 16 bits the event.  Each major numbers its events its
 * own way (14-16 by wait_event.h's enums, 17 by wait_event_names.txt's
 * order), so an id means nothing without the version.  Named: 13 to 17.
 */
#ifndef PROFD_PROC_PGWAITNAMES_H
#define PROFD_PROC_PGWAITNAMES_H

#include <stdint.h>

/*
 * wait_event_type for id ("LWLock"), or NULL where the class byte is none
 * PostgreSQL `major` has (major 0: not known, the classes all have).
 */
const char *pgwaitnames__class(uint32_t id, uint32_t major);

/*
 * wait_event for id in PostgreSQL `major` ("WALWrite", "transactionid"),
 * or NULL where profd does not know it: an unknown major, an event added
 * in a later minor release than the tables were read from, an extension's
 * own LWLock tranche or wait event.  Static storage.
 */
const char *pgwaitnames__event(uint32_t id, uint32_t major);

#endif
