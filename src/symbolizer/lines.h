/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lines: an object's DWARF line tables, decoded here a unit at a time into
 * a compact sorted form, a few units kept (internal to symbolizer/).
 *
 * libdw's dwarf_getsrc_die and dwarf_getsrcfiles (elfutils 0.188, Debian
 * 12's) decode a unit's whole line program into ~50-byte rows, which stay
 * until the object's Dwarf is closed: a whole-system `record` that met 40
 * of libc6-dbg's units held 21 MiB of them at its peak.  Rows here are 8
 * bytes (lines.c: struct line_packed), and an object keeps at most LINES_MAX_BYTES of them, least
 * recently used out; a unit asked about again is decoded again (~0.1 ms
 * for libc's largest, 14k rows).  Lookups answer as libdw's do.  Larger
 * units are libdw's still (lines__at's -E2BIG).
 *
 * The file and directory names returned point into the object's DWARF
 * sections, valid while its Dwarf is; nothing returned points into a
 * unit's decoded rows, so evicting one invalidates nothing.
 */
#ifndef PROFD_SYMBOLIZER_LINES_H
#define PROFD_SYMBOLIZER_LINES_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

/* Decoded units an object keeps, in bytes of rows and file tables: the
 * units a profile's samples fall in usually fit (libc's 2,063 units
 * average 141 rows), and so does the largest kept (128k rows, 2 MiB);
 * past it the least recently used goes. */
#define LINES_MAX_BYTES (2u << 20)

struct line_unit;

struct lines {
	struct line_unit *mru;	/* most recently used first */
	size_t bytes;		/* of the units kept */
	size_t nunits;
	size_t decodes;		/* units decoded, for tests and figures */
	/* The sections, found once per Dwarf. */
	Dwarf *dw;
	const unsigned char *line, *line_str, *str;
	size_t line_size, line_str_size, str_size;
};

/* A position: the file as libdw names it, dir joined to name when name is
 * relative (dir NULL: name alone), and the line (0: unknown). */
struct line_pos {
	const char *dir;
	const char *name;
	int line;
};

/* The line table's row at pc (a DWARF address) in cudie's unit.  0, or
 * -ENOENT if no row covers pc, -EINVAL for a malformed table, -ENOMEM,
 * and -ENOTSUP or -E2BIG for a table to ask libdw about instead (a form
 * this does not read; a unit too large to keep here). */
int lines__at(struct lines *l, Dwarf_Die *cudie, uint64_t pc, struct line_pos *pos);

/* File idx of cudie's unit, in DW_AT_call_file's numbering (line is 0).
 * 0, or -ENOENT for an index the table lacks, else as lines__at. */
int lines__file(struct lines *l, Dwarf_Die *cudie, uint64_t idx, struct line_pos *pos);

/* Forget every decoded unit (the Dwarf stays the caller's). */
void lines__free(struct lines *l);

#endif
