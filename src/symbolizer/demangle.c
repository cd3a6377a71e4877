// SPDX-License-Identifier: BSD-2-Clause
/* demangle: C++ and Rust symbol names by libiberty, bounded (the contract: demangle.h). */
#include <setjmp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "lib/strbuf.h"
#include "symbolizer/demangle.h"

/* What binutils' c++filt and addr2line -C print: parameters, qualifiers. */
#define DEMANGLE_OPTS (DMGL_PARAMS | DMGL_ANSI)

struct out {
	struct strbuf sb;
	jmp_buf over;		/* where put() leaves the demangler for */
};

/*
 * The demanglers' output callback.  Leaving by longjmp is safe: their
 * callback forms keep all their state on the stack (that is what they are
 * for: demangling in signal handlers), so nothing is leaked, and the
 * buffer is ours.
 */
static void put(const char *s, size_t n, void *opaque)
{
	struct out *o = opaque;

	if (o->sb.len + n > DEMANGLE_MAX_OUT)
		longjmp(o->over, 1);
	strbuf__add(&o->sb, s, n);
}

/* Into o, true if name was a C++ or Rust name and its text fit.  setjmp
 * alone in its function: nothing here is changed between it and a
 * longjmp back but o (ours, on the heap) and ok (volatile). */
static bool run(struct out *o, const char *name)
{
	volatile bool ok = false;

	if (setjmp(o->over))
		return false;
	/* Rust first: its legacy names are valid C++ names too, whose C++
	 * reading would keep the hash as a last component. */
	ok = rust_demangle_callback(name, DEMANGLE_OPTS, put, o);
	if (!ok && name[1] == 'Z') {
		strbuf__reset(&o->sb);
		ok = cplus_demangle_v3_callback(name, DEMANGLE_OPTS, put, o);
	}
	return ok;
}

char *demangle__name(const char *name)
{
	struct out *o;
	char *text = NULL;

	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') ||
	    strnlen(name, DEMANGLE_MAX_IN + 1) > DEMANGLE_MAX_IN)
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	if (run(o, name) && !strbuf__err(&o->sb) && o->sb.len)
		text = strbuf__detach(&o->sb, NULL);
	strbuf__free(&o->sb);
	free(o);
	return text;
}
