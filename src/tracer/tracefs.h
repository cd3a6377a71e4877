/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tracefs: where the kernel's tracing filesystem is, and the layout of a
 * classic tracepoint's record, from its `format` file.  Records differ
 * between kernels (6.12 stores comms as char[16] where 6.18 has
 * __data_loc strings), so nothing may assume an offset.
 */
#ifndef PROFD_TRACEFS_H
#define PROFD_TRACEFS_H

#include <stddef.h>

struct tracefs_field {
	int offset;
	int size;
};

/*
 * The tracefs directory ("/sys/kernel/tracing" or the debugfs one).  When
 * neither is mounted, mount tracefs at /sys/kernel/tracing if allowed, as
 * perf does.  NULL, with errno set, when there is none.
 */
const char *tracefs__dir(void);

/* Find field `name` in the text of a format file.  0, -ENOENT, -EINVAL. */
int tracefs__parse_field(const char *format, const char *name, struct tracefs_field *out);

/* events/<category>/<event>/<file> into buf (len bytes, NUL-terminated):
 * 0 or negative errno. */
int tracefs__read_event(const char *category, const char *event, const char *file, char *buf,
			size_t len);

/* Read events/<category>/<event>/format and find the field in it. */
int tracefs__field(const char *category, const char *event, const char *name,
		   struct tracefs_field *out);

#endif
