#!/bin/sh
# Pack the static profd into dist/profd-VERSION-ARCH-linux.tar.gz (make dist).
#
# The tarball holds one directory, profd-VERSION-ARCH-linux/:
#   profd           the static binary, stripped
#   profd.debug     its debug information (objcopy --only-keep-debug), found
#                   by the build ID both carry or by profd's .gnu_debuglink
#   BUILD-ID        profd's build ID, in hex
#   libprofd_heap.so  the sampled heap mode's library, preloaded into
#                   postgres (preload/heap_preload.c), without its DWARF
#   profd.service   the systemd unit
#   every file under packaging/ (the README, the inittab line, the example
#                   config), as they are
#   SHA256SUMS      of the files above
#
# Refuses a binary that is not static (an interpreter or a NEEDED library):
# the point of the tarball is that it runs on any glibc, or none.  Refuses
# a library of another architecture, one that needs more than libc or a
# glibc symbol version newer than bullseye's 2.31 (the oldest compute
# image's: it must load into postgres there), or one that lacks the two
# functions profd probes.
#
# Usage: scripts/dist.sh BINARY VERSION OUTDIR PRELOAD_LIBRARY
set -eu
[ $# = 4 ] || { echo "usage: scripts/dist.sh BINARY VERSION OUTDIR PRELOAD_LIBRARY" >&2; exit 2; }
bin=$1 version=$2 outdir=$3 lib=$4
top=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "dist: $*" >&2; exit 1; }
[ -x "$bin" ] || die "no $bin"
# The binary's architecture, not this machine's: make dist ARCH=arm64
# packs a cross-built one, with the cross binutils.
tools=
case $(readelf -hW "$bin" | sed -n 's/^ *Machine: *//p') in
*X86-64*) march=x86_64 ;;
*AArch64*) march=aarch64 ;;
*) die "$bin: an architecture profd is not built for" ;;
esac
[ "$march" = "$(uname -m)" ] || tools=$march-linux-gnu-
name=profd-$version-$march-linux
! readelf -lW "$bin" | grep -q 'Requesting program interpreter' ||
	die "$bin asks for a program interpreter: not static"
! readelf -dW "$bin" 2>/dev/null | grep -q '(NEEDED)' ||
	die "$bin needs shared libraries: not static"
readelf -nW "$bin" | grep -q 'Build ID' || die "$bin has no build ID"

# The preload library, checked as postgres's ld.so will take it.
[ -f "$lib" ] || die "no $lib"
[ "$(readelf -hW "$lib" | sed -n 's/^ *Machine: *//p')" = \
	"$(readelf -hW "$bin" | sed -n 's/^ *Machine: *//p')" ] ||
	die "$lib is not built for $bin's architecture"
readelf -hW "$lib" | grep -q 'Type: *DYN' || die "$lib is not a shared object"
needed=$(readelf -dW "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | xargs)
[ "$needed" = libc.so.6 ] || die "$lib needs $needed: only libc.so.6 may be needed"
syms=$(readelf --dyn-syms -W "$lib")
for f in profd_heap_sampled profd_heap_freed malloc free; do
	printf '%s\n' "$syms" | grep -qE " FUNC +GLOBAL +DEFAULT +[0-9]+ $f\$" ||
		die "$lib does not define $f"
done
newest=$(readelf -VW "$lib" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
[ "$(printf '%s\n' "$newest" GLIBC_2.31 | sort -V | tail -1)" = GLIBC_2.31 ] ||
	die "$lib needs $newest: it would not load in bullseye (glibc 2.31)"

mkdir -p "$outdir"
stage=$(mktemp -d "$outdir/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
d=$stage/$name
mkdir -p "$d"
${tools}objcopy --only-keep-debug "$bin" "$d/profd.debug"
# The link goes in after stripping: it names profd.debug and its CRC.
${tools}strip --strip-all -o "$d/profd" "$bin"
${tools}objcopy --add-gnu-debuglink="$d/profd.debug" "$d/profd"
chmod 0755 "$d/profd"
# For installing profd.debug by build ID where there is no readelf (a slim image).
readelf -nW "$d/profd" | awk '/Build ID:/ {print $NF}' >"$d/BUILD-ID"
chmod 0644 "$d/profd.debug"
# Its symbol table stays (names of its own functions in CPU profiles of
# postgres); its DWARF is of no use where it runs.
${tools}strip --strip-debug -o "$d/libprofd_heap.so" "$lib"
chmod 0644 "$d/libprofd_heap.so"
install -m 0644 "$top/systemd/profd.service" "$d/profd.service"
# Every file under packaging/, so what is added there ships without an edit here.
for f in "$top"/packaging/*; do
	[ -f "$f" ] && install -m 0644 "$f" "$d/$(basename "$f")"
done
(cd "$d" && sha256sum $(ls | grep -v '^SHA256SUMS$') >SHA256SUMS)

# Same tree, same bytes: names sorted, owner root, times from the commit.
mtime=$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
	-C "$stage" -cf - "$name" | gzip -9n >"$stage/$name.tar.gz"
mv "$stage/$name.tar.gz" "$outdir/$name.tar.gz"
echo "dist: $outdir/$name.tar.gz ($(du -k "$outdir/$name.tar.gz" | cut -f1) KiB;" \
	"profd $(du -k "$d/profd" | cut -f1) KiB, profd.debug $(du -k "$d/profd.debug" | cut -f1) KiB," \
	"libprofd_heap.so $(du -k "$d/libprofd_heap.so" | cut -f1) KiB, needs $newest)"
