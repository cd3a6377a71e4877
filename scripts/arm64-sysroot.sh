#!/bin/sh
# The arm64 packages a cross build needs that can't be installed beside
# their amd64 versions (neither is Multi-Arch: same, or a dependency isn't):
# unpacked from Debian's archive into a directory of their own, once,
# keyed by their versions.  Prints that directory.  The Makefile's
# ARCH=arm64 build adds its include and library directories, and the
# tests run the arm64 unit binaries with its libraries
# (tests/sys/t_arm64_build.sh).  Installing them with apt-get instead
# would remove libevent-dev and libcriterion-dev, which the native build
# and its tests need.
#
#   scripts/arm64-sysroot.sh    [CACHE]   (default /var/cache/profd-arm64)
set -eu

# libevent-dev's .so links point at the runtime libraries: those too, beside them.
PKGS="libevent-dev libevent-2.1-7 libevent-core-2.1-7 libevent-extra-2.1-7
libevent-pthreads-2.1-7 libevent-openssl-2.1-7 libcriterion-dev libcriterion3 libnanomsg5"
cache=${1:-/var/cache/profd-arm64}

versions=""
for p in $PKGS; do
	v=$(apt-cache policy "$p:arm64" 2>/dev/null | awk '/Candidate:/ {print $2}')
	if [ -z "$v" ] || [ "$v" = "(none)" ]; then
		echo "arm64-sysroot: no $p:arm64 in apt's lists (dpkg --add-architecture arm64; apt-get update)" >&2
		exit 1
	fi
	versions="$versions $p=$v"
done
key=$(echo "$versions" | sha256sum | cut -c1-16)
dir=$cache/sysroot-$key
if [ -f "$dir/.done" ]; then
	echo "$dir"
	exit 0
fi
tmp=$(mktemp -d "$cache.XXXXXX" 2>/dev/null || { mkdir -p "$cache" && mktemp -d "$cache/tmp.XXXXXX"; })
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debs" "$tmp/root"
chmod 755 "$tmp" "$tmp/debs"	# apt-get download as _apt
(cd "$tmp/debs" && for pv in $versions; do apt-get download -q "${pv%%=*}:arm64=${pv#*=}" >&2; done)
for d in "$tmp"/debs/*.deb; do
	dpkg-deb -x "$d" "$tmp/root"
done
touch "$tmp/root/.done"
mkdir -p "$cache"
rm -rf "$dir"
mv "$tmp/root" "$dir"
echo "$dir"
