#!/bin/bash
# Print the path of an arm64 busybox-static (for the arm64 guests' initramfs,
# tests/vm/initramfs.sh), fetched once per version with apt-get download and
# unpacked (never installed) under ${PROFD_ARM64_CACHE:-/var/cache/profd-arm64}/vm/
# busybox-static-VERSION, the directory tests/sys/t_arm64_vm.sh uses too.
set -euo pipefail
CACHE=${PROFD_ARM64_CACHE:-/var/cache/profd-arm64}/vm
die() { echo "busybox-arm64: ERROR: $*" >&2; exit 1; }
ver=$(apt-cache policy busybox-static:arm64 2>/dev/null | sed -n 's/^ *Candidate: //p')
if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
	dir=$(ls -d "$CACHE"/busybox-static-*/ 2>/dev/null | sort -V | tail -1)
	[ -n "$dir" ] && [ -x "$dir/bin/busybox" ] && { echo "${dir}bin/busybox"; exit 0; }
	die "apt knows no busybox-static:arm64 (dpkg --add-architecture arm64; apt-get update)"
fi
dir=$CACHE/busybox-static-$(echo "$ver" | tr ':~' '__')
if [ ! -f "$dir/.done" ]; then
	mkdir -p "$CACHE"
	tmp=$(mktemp -d "$CACHE/.tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	chmod 755 "$tmp"
	(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "busybox-static:arm64=$ver" >&2) ||
		die "apt-get download busybox-static:arm64=$ver"
	dpkg-deb -x "$tmp"/*.deb "$tmp/root"
	touch "$tmp/root/.done"
	rm -rf "$dir"
	mv "$tmp/root" "$dir"
fi
echo "$dir/bin/busybox"
