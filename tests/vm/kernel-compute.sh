#!/bin/bash
# Build the "compute-6.12" test kernel (or find it in the cache) and print the
# directory that holds it: vmlinux, bzImage, config, System.map, kernel.release.
#
# Source: Debian's linux-source-6.12 package (/usr/src/linux-source-6.12.tar.xz).
# Config: `make tinyconfig` + tests/vm/compute-6.12.config, then a check that
# every line of the fragment is in the final .config (Kconfig silently drops
# options whose dependencies are missing).
# Cache:  ${PROFD_VM_CACHE:-/var/cache/profd-vm}/compute-6.12-KEY, KEY = hash of
# the fragment + this script + the linux-source-6.12 version.  Built in a temp
# dir beside it and renamed into place only when complete.
#
# Usage: tests/vm/kernel-compute.sh [--print-key]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${PROFD_VM_CACHE:-/var/cache/profd-vm}
FRAG=$HERE/compute-6.12.config
PKG=linux-source-6.12
TARBALL=/usr/src/linux-source-6.12.tar.xz
log() { echo "kernel-compute: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ver=$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null) || ver=""
[ -n "$ver" ] && [ -f "$TARBALL" ] ||
	die "$PKG is not installed (scripts/deps.sh --test, or apt-get install $PKG)"
key=$({ cat "$FRAG" "$HERE/kernel-compute.sh"; echo "$PKG=$ver"; } | sha256sum | cut -c1-16)
[ "${1:-}" = "--print-key" ] && { echo "$key"; exit 0; }
out=$CACHE/compute-6.12-$key
if [ -f "$out/vmlinux" ]; then echo "$out"; exit 0; fi

mkdir -p "$CACHE"
# One build at a time per cache; a second caller waits and then finds it built.
exec 9>"$CACHE/.compute-6.12.lock"
flock 9
if [ -f "$out/vmlinux" ]; then echo "$out"; exit 0; fi

# Leftovers of builds that were killed (we hold the lock: none is running).
rm -rf "$CACHE"/.build-compute-6.12-*
tmp=$(mktemp -d "$CACHE/.build-compute-6.12-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Long steps run in the background so that a signal ends them and the trap
# above removes the half-made tree at once.
bgpid=""
trap '[ -n "$bgpid" ] && kill "$bgpid" 2>/dev/null; exit 130' INT
trap '[ -n "$bgpid" ] && kill "$bgpid" 2>/dev/null; exit 143' TERM
bg() { "$@" & bgpid=$!; wait "$bgpid"; }
start=$(date +%s)
log "building $PKG $ver with $FRAG (key $key) in $tmp; takes ~15 min on 2 cores"
bg tar -xf "$TARBALL" -C "$tmp"
src=$tmp/linux-source-6.12
[ -d "$src" ] || die "unexpected layout of $TARBALL"
M() { make -C "$src" ARCH=x86_64 "$@"; }
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
log "make -j$jobs bzImage (log: $tmp/build.log)"
if ! bg M -j"$jobs" bzImage >"$tmp/build.log" 2>&1; then
	tail -40 "$tmp/build.log" >&2
	die "kernel build failed"
fi
mkdir "$tmp/out"
cp "$src/vmlinux" "$src/arch/x86/boot/bzImage" "$src/System.map" "$tmp/out/"
cp "$src/.config" "$tmp/out/config"
M -s kernelrelease >"$tmp/out/kernel.release"
echo "$PKG=$ver key=$key built=$(date -u +%FT%TZ)" >"$tmp/out/build-info"
rm -rf "$src"
secs=$(($(date +%s) - start))
echo "build_seconds=$secs" >>"$tmp/out/build-info"
mv "$tmp/out" "$out"
log "built $(cat "$out/kernel.release") in ${secs}s ($((secs / 60))m$((secs % 60))s): $out" \
	"(vmlinux $(du -h "$out/vmlinux" | cut -f1), bzImage $(du -h "$out/bzImage" | cut -f1))"
echo "$out"
