#!/bin/bash
# Make (or find in the cache) the arm64 Debian 12 root of the arm64 test
# guests (tests/vm/run.sh --arch arm64) and print its directory; the guest
# mounts it read-only over virtio-9p as its / (tests/vm/init.sh), with tmpfs
# on /tmp, /run..., as the x86 guests do with the host's /.
#
# Made once with debootstrap --foreign (the arm64 .debs unpacked here) and
# its second stage run in a chroot through qemu-user-static's binfmt
# handler (the "F" flag: the emulator is opened at registration, so nothing
# is copied into the root).  Holds postgresql-15 (postgres, pgbench), curl,
# procps, and an empty /profd: the mount point of the clone in the guest.
# Services are not started in the chroot (policy-rc.d says no).
#
# Cache: ${PROFD_ARM64_CACHE:-/var/cache/profd-arm64}/root-bookworm-KEY, KEY =
# hash of this script + debootstrap's and qemu-user-static's versions; made in
# a temp dir beside it and renamed into place when complete (root/.done).
# PROFD_ARM64_MIRROR: the Debian mirror (default: the host's, else
# deb.debian.org).  Usage: tests/vm/root-arm64.sh [--print-key]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${PROFD_ARM64_CACHE:-/var/cache/profd-arm64}
SUITE=bookworm
PKGS=postgresql-15,curl,procps
log() { echo "root-arm64: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

vers=$(dpkg-query -W -f='${Package}=${Version}\n' debootstrap qemu-user-static 2>/dev/null) || vers=""
[ "$(echo "$vers" | grep -c =)" = 2 ] ||
	die "debootstrap and qemu-user-static are needed (scripts/deps.sh --test)"
key=$({ cat "$HERE/root-arm64.sh"; echo "$vers"; } | sha256sum | cut -c1-16)
[ "${1:-}" = "--print-key" ] && { echo "$key"; exit 0; }
out=$CACHE/root-$SUITE-$key
if [ -f "$out/root/.done" ]; then echo "$out/root"; exit 0; fi
[ "$(id -u)" = 0 ] || die "making the root needs root (debootstrap, chroot)"
grep -qs '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 ||
	die "no qemu-aarch64 binfmt handler with the F flag (apt-get install qemu-user-static binfmt-support; update-binfmts --enable qemu-aarch64)"
mirror=${PROFD_ARM64_MIRROR:-$(sed -n 's/^URIs: *\(http[^ ]*debian\)\/\?$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)}
mirror=${mirror:-http://deb.debian.org/debian}

mkdir -p "$CACHE"
exec 9>"$CACHE/.root-$SUITE.lock"
flock 9
if [ -f "$out/root/.done" ]; then echo "$out/root"; exit 0; fi
# Leftovers of killed runs (we hold the lock: none is running); a proc left
# mounted in one is unmounted first.
for d in "$CACHE"/.root-$SUITE-*; do
	[ -d "$d" ] || continue
	umount -l "$d/root/proc" "$d/root/sys" 2>/dev/null || true
	rm -rf --one-file-system "$d"
done
tmp=$(mktemp -d "$CACHE/.root-$SUITE-$key.XXXXXX")
cleanup() {
	umount -l "$tmp/root/proc" "$tmp/root/sys" 2>/dev/null || true
	rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
start=$(date +%s)
log "debootstrap --arch arm64 $SUITE ($PKGS) from $mirror into $tmp; ~15 min on 2 cores"
nice -n 10 debootstrap --arch=arm64 --foreign --variant=minbase --include="$PKGS" \
	"$SUITE" "$tmp/root" "$mirror" >"$tmp/first.log" 2>&1 ||
	{ tail -30 "$tmp/first.log" >&2; die "debootstrap (first stage) failed"; }
t1=$(date +%s)
# No daemon starts in the chroot (postgresql's postinst would start one).
printf '#!/bin/sh\nexit 101\n' >"$tmp/root/usr/sbin/policy-rc.d"
chmod 755 "$tmp/root/usr/sbin/policy-rc.d"
log "second stage under qemu-user (first stage took $((t1 - start))s)"
nice -n 10 chroot "$tmp/root" /debootstrap/debootstrap --second-stage >"$tmp/second.log" 2>&1 ||
	{ tail -30 "$tmp/second.log" >&2; tail -30 "$tmp/root/debootstrap/debootstrap.log" >&2 2>/dev/null
	  die "debootstrap (second stage, in the chroot) failed"; }
umount -l "$tmp/root/proc" "$tmp/root/sys" 2>/dev/null || true
[ -x "$tmp/root/usr/lib/postgresql/15/bin/postgres" ] && [ -x "$tmp/root/usr/lib/postgresql/15/bin/pgbench" ] ||
	die "no postgres 15 in the root"
chroot "$tmp/root" id postgres >/dev/null || die "no postgres user in the root"
mkdir -m 755 "$tmp/root/profd"
rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"*_Packages
secs=$(($(date +%s) - start))
echo "$vers" >"$tmp/root/.profd-root-info"
echo "made=$(date -u +%FT%TZ) seconds=$secs first_stage=$((t1 - start)) mirror=$mirror" >>"$tmp/root/.profd-root-info"
touch "$tmp/root/.done"
mv "$tmp" "$out"
trap - EXIT
log "made in ${secs}s ($((secs / 60))m$((secs % 60))s, first stage $((t1 - start))s): $out/root ($(du -sh "$out/root" | cut -f1))"
echo "$out/root"
