/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * proctitle: sample labels from what a process says it is doing.
 *
 * Servers that fork workers (PostgreSQL above all) rewrite their argv so
 * that ps shows each process's role; /proc/PID/cmdline returns those
 * bytes.  This turns them into a few bounded, printable labels for pprof
 * samples.  Pure code: no I/O, no allocation, no state between calls, so a
 * title that changed since the last read is simply parsed again.
 *
 * Titles are untrusted: any user can set their own process's title to
 * anything.  Every byte read is within [title, title + len); labels are
 * always NUL-terminated, at most PROCTITLE_LABEL_MAX - 1 bytes, valid
 * UTF-8 with control characters and invalid bytes replaced by '?'; at most
 * PROCTITLE_SCAN_MAX bytes of a title are looked at.
 *
 * PostgreSQL (ps_status.c; checked against 15): "postgres: [CLUSTER: ]PART"
 * padded with NULs, where PART is a fixed role ("checkpointer ", "startup
 * recovering X", "autovacuum worker DB", ...), a background worker's
 * bgw_name, "USER DB HOST ACTIVITY" for a client backend or "walsender
 * USER [DB] HOST ACTIVITY", HOST being "[local]" or "ADDR(PORT)".  The
 * postmaster keeps its original argv and is known by its comm.  Labels:
 *  - backend_type: "client backend", "checkpointer", ..., "postmaster", or
 *    "background worker NAME" with each run of digits in NAME folded to
 *    "N" (so "parallel worker for PID 123"-like names don't explode the
 *    label's cardinality) and the whole cut to 63 bytes;
 *  - user, database: client backends and walsenders (15 prints no
 *    database for walsenders; newer versions, seen in 17, print a logical
 *    one's); database alone for an autovacuum worker that has picked one.
 *
 * Heuristics and their limits (names are printed unquoted, so a title is
 * not always decodable; every guess below is bounded and never unsafe):
 *  - Cluster prefix.  cluster_name may contain spaces and even ": ", and a
 *    part has no ": " except in exotic user/database/worker names.  So the
 *    part is taken after the first of the first 8 ": " that is followed by
 *    a recognised part (a client/walsender with a HOST token and no ": "
 *    before it, or a fixed role word followed by a space or the end), else
 *    the whole text if that is recognised.  Trying the stripped candidates
 *    first keeps a cluster named e.g. "startup db" from reading as the
 *    startup process.  If nothing is recognised the process is a background
 *    worker whose name is what follows the first ": ", if any: right with
 *    Debian's default cluster_name ("15/main"), but without a cluster name
 *    a worker named "Citus Maintenance Daemon: 16384/10" is labelled
 *    "background worker N/N".
 *  - Client backends are recognised before fixed roles, so a user named
 *    "checkpointer" is still a client.  A user named "walsender" reads as a
 *    physical walsender whose user is the database's name.
 *  - User and database names containing spaces are split at the first
 *    space: user gets the first word, database the rest up to HOST.
 *  - PostgreSQL truncates the title to its original argv's length, so a
 *    short command line (e.g. "postgres -D x") can cut HOST off: such a
 *    client backend is then labelled as a background worker.
 *  - Any process whose comm is "postgres" or "postmaster" and whose title
 *    was not rewritten is "postmaster", including "postgres --single" and
 *    initdb's bootstrap backend.
 *  - A title starting "postgres: " is labelled whatever its comm (a process
 *    named "evil" included): postgres may run from a renamed binary, and a
 *    title proves nothing anyway, since the same user could run the real
 *    binary.  Callers that want certainty must check the executable.
 *
 * Adding a program (pgbouncer, a service that sets its title): write a
 * parse function in proctitle.c (static, returning 1 if it labelled the
 * title, 0 if not; it must write every label with label_put() or
 * label_puts(), so that the bounds and sanitising above hold) and add one
 * entry to `rules`, naming the comms and/or the title prefix that identify
 * the program.  Add its titles to the tables in tests/unit/proc/test_proctitle.c.
 */
#ifndef PROFD_PROCTITLE_H
#define PROFD_PROCTITLE_H

#include <stddef.h>

#define PROCTITLE_LABEL_MAX 64
#define PROCTITLE_SCAN_MAX 4096	/* bytes of a title looked at; postgres's are < 1 KB */

struct proctitle {		/* empty string = label absent */
	char backend_type[PROCTITLE_LABEL_MAX];
	char database[PROCTITLE_LABEL_MAX];
	char user[PROCTITLE_LABEL_MAX];
};

/*
 * comm: the process name (/proc/PID/comm, at most 15 bytes, a trailing
 * newline is ignored), or NULL if unknown.  title: the raw bytes of
 * /proc/PID/cmdline, len of them (NULs allowed; NULL only if len is 0).
 * Returns 1 if a rule matched and filled out, 0 if no rule applies (out
 * zeroed), -EINVAL if out is NULL or title is NULL with len > 0.
 */
int proctitle__parse(const char *comm, const char *title, size_t len, struct proctitle *out);

/*
 * dst = src[0..n) (stopping at a NUL) made a label with the same guarantees
 * as the title's: valid, printable UTF-8 of at most PROCTITLE_LABEL_MAX - 1
 * bytes.  For other names a process sets itself (its comm).
 */
void proctitle__sanitize(char dst[PROCTITLE_LABEL_MAX], const char *src, size_t n);

#endif
