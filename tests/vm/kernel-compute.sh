#!/bin/bash
# Build the "compute-6.12" test kernel (or find it in the cache) and print the
# directory that holds it: vmlinux, the boot image (x86: bzImage, arm64:
# Image), config, System.map, kernel.release.
#
# Source: Debian's linux-source-6.12 package (/usr/src/linux-source-6.12.tar.xz).
# Config: `make tinyconfig` + tests/vm/compute-6.12.config (x86-64) or
# tests/vm/compute-6.12-arm64.config (arm64, cross-compiled with Debian's
# gcc-aarch64-linux-gnu), then a check that every line of the fragment is in
# the final .config (Kconfig silently drops options whose dependencies are
# missing).
# Cache:  ${PROFD_VM_CACHE:-/var/cache/profd-vm}/compute-6.12-KEY (x86-64), or
# ${PROFD_ARM64_CACHE:-/var/cache/profd-arm64}/compute-6.12-arm64-KEY, KEY =
# hash of the fragment + this script + the linux-source-6.12 version (+ the
# cross compiler's for arm64).  Built in a temp dir beside it and renamed into
# place only when complete, under `nice -n 10` (the machine is shared).
#
# Usage: tests/vm/kernel-compute.sh [--arch x86|arm64] [--print-key]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
arch=x86
[ "${1:-}" = --arch ] && { arch=${2:-}; shift 2; }
case $arch in
x86)
	CACHE=${PROFD_VM_CACHE:-/var/cache/profd-vm}
	FRAG=$HERE/compute-6.12.config NAME=compute-6.12
	KARCH=x86_64 IMAGE=arch/x86/boot/bzImage CROSS="" ;;
arm64)
	CACHE=${PROFD_ARM64_CACHE:-/var/cache/profd-arm64}
	FRAG=$HERE/compute-6.12-arm64.config NAME=compute-6.12-arm64
	KARCH=arm64 IMAGE=arch/arm64/boot/Image CROSS=aarch64-linux-gnu- ;;
*) echo "kernel-compute: --arch x86 or arm64, not '$arch'" >&2; exit 2 ;;
esac
PKG=linux-source-6.12
TARBALL=/usr/src/linux-source-6.12.tar.xz
log() { echo "kernel-compute: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ver=$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null) || ver=""
[ -n "$ver" ] && [ -f "$TARBALL" ] ||
	die "$PKG is not installed (scripts/deps.sh --test, or apt-get install $PKG)"
ccver=""
if [ -n "$CROSS" ]; then
	ccver=$(dpkg-query -W -f='${Version}' "gcc-12-${CROSS%-}" 2>/dev/null) ||
		die "no ${CROSS}gcc (scripts/deps.sh --test, or apt-get install gcc-aarch64-linux-gnu)"
	ccver="gcc-12-${CROSS%-}=$ccver"
fi
key=$({ cat "$FRAG" "$HERE/kernel-compute.sh"; echo "$PKG=$ver"; [ -z "$ccver" ] || echo "$ccver"; } |
	sha256sum | cut -c1-16)
[ "${1:-}" = "--print-key" ] && { echo "$key"; exit 0; }
out=$CACHE/$NAME-$key
if [ -f "$out/vmlinux" ]; then echo "$out"; exit 0; fi

mkdir -p "$CACHE"
# One build at a time per cache; a second caller waits and then finds it built.
exec 9>"$CACHE/.$NAME.lock"
flock 9
if [ -f "$out/vmlinux" ]; then echo "$out"; exit 0; fi

# Leftovers of builds that were killed (we hold the lock: none is running).
rm -rf "$CACHE/.build-$NAME-"*
tmp=$(mktemp -d "$CACHE/.build-$NAME-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Long steps run in the background so that a signal ends them and the trap
# above removes the half-made tree at once.
bgpid=""
trap '[ -n "$bgpid" ] && kill "$bgpid" 2>/dev/null; exit 130' INT
trap '[ -n "$bgpid" ] && kill "$bgpid" 2>/dev/null; exit 143' TERM
bg() { "$@" & bgpid=$!; wait "$bgpid"; }
start=$(date +%s)
log "building $PKG $ver for $arch with $FRAG (key $key) in $tmp; takes ~15 min on 2 cores"
bg tar -xf "$TARBALL" -C "$tmp"
src=$tmp/linux-source-6.12
[ -d "$src" ] || die "unexpected layout of $TARBALL"
M() { nice -n 10 make -C "$src" ARCH=$KARCH ${CROSS:+CROSS_COMPILE=$CROSS} "$@"; }
M -s tinyconfig >"$tmp/config.log" 2>&1 || { cat "$tmp/config.log" >&2; die "make tinyconfig failed"; }
(cd "$src" && scripts/kconfig/merge_config.sh -m .config "$FRAG") >>"$tmp/config.log" 2>&1 ||
	{ cat "$tmp/config.log" >&2; die "merge_config.sh failed"; }
M -s olddefconfig >>"$tmp/config.log" 2>&1 || { cat "$tmp/config.log" >&2; die "make olddefconfig failed"; }

# Every "CONFIG_X=v" line of the fragment must be in .config as is, and every
# "# CONFIG_X is not set" must not be set to anything.
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)
		grep -qxF "$line" "$src/.config" || {
			log "config check: wanted '$line', got '$(grep -E "^(# )?${line%%=*}[= ]" "$src/.config" || echo absent)'"
			bad=1
		} ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }; opt=${opt%% *}
		! grep -q "^$opt=" "$src/.config" || {
			log "config check: wanted '$line', got '$(grep "^$opt=" "$src/.config")'"
			bad=1
		} ;;
	esac
done <"$FRAG"
[ $bad -eq 0 ] || die "the kernel config lacks options of $FRAG (missing dependencies?); see above"
log "config check: all $(grep -cE '^(CONFIG_|# CONFIG_.* is not set)' "$FRAG") options of the fragment are in .config"

jobs=$(($(nproc) + 1))
log "make -j$jobs ${IMAGE##*/} (log: $tmp/build.log)"
if ! bg M -j"$jobs" "${IMAGE##*/}" >"$tmp/build.log" 2>&1; then
	tail -40 "$tmp/build.log" >&2
	die "kernel build failed"
fi
mkdir "$tmp/out"
cp "$src/vmlinux" "$src/$IMAGE" "$src/System.map" "$tmp/out/"
cp "$src/.config" "$tmp/out/config"
M -s kernelrelease >"$tmp/out/kernel.release"
echo "$PKG=$ver key=$key built=$(date -u +%FT%TZ)" >"$tmp/out/build-info"
rm -rf "$src"
secs=$(($(date +%s) - start))
echo "build_seconds=$secs" >>"$tmp/out/build-info"
mv "$tmp/out" "$out"
log "built $(cat "$out/kernel.release") in ${secs}s ($((secs / 60))m$((secs % 60))s): $out" \
	"(vmlinux $(du -h "$out/vmlinux" | cut -f1), ${IMAGE##*/} $(du -h "$out/${IMAGE##*/}" | cut -f1))"
echo "$out"
