#!/bin/bash
# Fetch Debian 12's stock kernel (what linux-image-amd64 points to, e.g.
# linux-image-6.1.0-NN-amd64) into the cache and print the directory holding it:
#   vmlinuz, vmlinux (decompressed, for a faster boot under TCG when it is
#   there), config, System.map, kernel.release, lib/modules/RELEASE/...
# The package is fetched with `apt-get download` and unpacked with dpkg-deb -x,
# never installed.  Cache: ${PROFD_VM_CACHE:-/var/cache/profd-vm}/debian-6.1-
# PACKAGE_VERSION, written in a temp dir and renamed into place when complete.
# --arch arm64: linux-image-arm64's kernel (vmlinuz: a gzipped Image) into
# ${PROFD_ARM64_CACHE:-/var/cache/profd-arm64}/debian-6.1-arm64-PACKAGE_VERSION
# (apt needs the arm64 architecture: dpkg --add-architecture arm64).
set -euo pipefail
a=amd64 CACHE=${PROFD_VM_CACHE:-/var/cache/profd-vm} NAME=debian-6.1
if [ "${1:-}" = --arch ]; then
	case ${2:-} in
	x86) ;;
	arm64) a=arm64 CACHE=${PROFD_ARM64_CACHE:-/var/cache/profd-arm64} NAME=debian-6.1-arm64 ;;
	*) echo "kernel-debian: --arch x86 or arm64" >&2; exit 2 ;;
	esac
fi
log() { echo "kernel-debian: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# The newest cached one will do when apt cannot tell (no lists, no network).
newest_cached() { ls -d "$CACHE/$NAME"-[0-9]*/ 2>/dev/null | sort -V | tail -1 | sed 's:/$::'; }

# apt-cache takes a second: remember its answer until apt's lists change.
lists=$(stat -c %Y /var/lib/apt/lists 2>/dev/null || echo 0)
memo=$CACHE/.$NAME.resolved
pkg="" ver=""
if [ -f "$memo" ] && read -r l p v <"$memo" && [ "$l" = "$lists" ]; then
	pkg=$p ver=$v
else
	pkg=$(apt-cache depends linux-image-$a:$a 2>/dev/null |
		sed -n "s/^ *Depends: \(linux-image-6\.1\.[0-9.-]*-$a\)\(:$a\)\{0,1\}\$/\1/p" | head -1) || true
	[ -n "$pkg" ] && ver=$(apt-cache policy "$pkg:$a" | sed -n 's/^ *Candidate: //p')
	[ -n "$ver" ] && [ "$ver" != "(none)" ] && mkdir -p "$CACHE" &&
		echo "$lists $pkg $ver" >"$memo.$$" && mv "$memo.$$" "$memo"
fi
if [ -z "$pkg" ] || [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
	c=$(newest_cached)
	[ -n "$c" ] && { log "apt knows no linux-image-$a; using cached $c"; echo "$c"; exit 0; }
	die "cannot resolve linux-image-$a:$a (run apt-get update)"
fi
out=$CACHE/$NAME-$ver
if [ -f "$out/vmlinuz" ]; then echo "$out"; exit 0; fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.$NAME.lock"
flock 9
if [ -f "$out/vmlinuz" ]; then echo "$out"; exit 0; fi
rm -rf "$CACHE/.fetch-$NAME".* # leftovers of killed fetches
tmp=$(mktemp -d "$CACHE/.fetch-$NAME.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
log "fetching $pkg $ver"
chmod 755 "$tmp" # apt-get download runs as _apt where it can
(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$pkg:$a=$ver" >&2) || die "apt-get download $pkg:$a=$ver failed"
deb=$(ls "$tmp"/*.deb)
dpkg-deb -x "$deb" "$tmp/x"
kver=$(ls "$tmp/x/lib/modules")
mkdir "$tmp/out"
cp "$tmp/x/boot/vmlinuz-$kver" "$tmp/out/vmlinuz"
cp "$tmp/x/boot/config-$kver" "$tmp/out/config"
cp "$tmp/x/boot/System.map-$kver" "$tmp/out/System.map"
echo "$kver" >"$tmp/out/kernel.release"
mkdir -p "$tmp/out/lib/modules"
mv "$tmp/x/lib/modules/$kver" "$tmp/out/lib/modules/"
# depmod: the package ships no modules.dep (the postinst makes it).
depmod -b "$tmp/out" "$kver"
# An uncompressed vmlinux boots faster under TCG (-kernel ELF, PVH entry).
if grep -q '^CONFIG_PVH=y' "$tmp/out/config"; then
	HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	"$HERE/extract-vmlinux.sh" "$tmp/out/vmlinuz" >"$tmp/out/vmlinux" 2>/dev/null &&
		[ "$(head -c4 "$tmp/out/vmlinux" | od -An -c | tr -d ' ')" = '177ELF' ] ||
		{ log "no vmlinux extracted from vmlinuz; will boot vmlinuz"; rm -f "$tmp/out/vmlinux"; }
fi
echo "$pkg=$ver fetched=$(date -u +%FT%TZ)" >"$tmp/out/build-info"
mv "$tmp/out" "$out"
log "fetched $pkg $ver ($kver) in $(($(date +%s) - start))s: $out"
echo "$out"
