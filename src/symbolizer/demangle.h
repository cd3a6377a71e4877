/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * demangle: C++ (Itanium ABI, "_Z...") and Rust (legacy "_ZN...17h<hash>E"
 * and v0 "_R...") symbol names as people read them, by libiberty's
 * demanglers (Debian's libiberty-dev, linked statically), which are what
 * binutils and gdb use: "_ZN2ns5Class6methodEi" is "ns::Class::method(int)",
 * a Rust function's name loses its hash.
 *
 * The names come from binaries any local user may have written, and a
 * mangled name of a few hundred bytes can stand for gigabytes of text
 * (substitutions nest: each doubles what it names).  So output is bounded:
 * past DEMANGLE_MAX_OUT bytes the demangler is left at once and the name
 * stays mangled; names longer than DEMANGLE_MAX_IN are not tried (the
 * demangler's stack use grows with the name's length).
 */
#ifndef PROFD_SYMBOLIZER_DEMANGLE_H
#define PROFD_SYMBOLIZER_DEMANGLE_H

#define DEMANGLE_MAX_IN 4096
#define DEMANGLE_MAX_OUT (16 << 10)

/*
 * The demangled form of name (malloc'd; the caller frees), or NULL when it
 * is not a C++ or Rust name, is malformed, is over the bounds above, or
 * memory ran out.  Thread-safe: it touches no global state.
 */
char *demangle__name(const char *name);

#endif
