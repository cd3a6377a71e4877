#!/bin/bash
# Make (or find in the cache) the initramfs for a kernel directory made by
# kernel-debian.sh or kernel-compute.sh and print its path.  It holds
# busybox-static, tests/vm/init.sh as /init, and, when the kernel has
# lib/modules, the modules for virtio-pci, virtio-net and 9p over virtio with
# their dependencies (from modules.dep) in load order (/modules/order).
# Cache: KERNEL_DIR/initramfs-KEY.cpio.gz, KEY = hash of init.sh, this script,
# the busybox binary and the module list.  Usage: initramfs.sh KERNEL_DIR
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kdir=$1
# arm64 guests: an arm64 busybox-static (tests/vm/busybox-arm64.sh, via run.sh).
BUSYBOX=${PROFD_VM_BUSYBOX:-/bin/busybox}
WANT_MODULES="virtio_pci virtio_net 9pnet_virtio 9p"
die() { echo "initramfs: ERROR: $*" >&2; exit 1; }
[ -x "$BUSYBOX" ] && ! readelf -l "$BUSYBOX" 2>/dev/null | grep -q 'program interpreter' ||
	die "$BUSYBOX is not busybox-static (apt-get install busybox-static)"

mods=()
kver=$(cat "$kdir/kernel.release")
mdir=$kdir/lib/modules/$kver
if [ -d "$mdir" ]; then
	declare -A seen=()
	declare -A deps=() path=()
	while IFS= read -r line; do
		f=${line%%:*}; b=${f##*/}; b=${b%.ko*}
		path[$b]=$f; deps[$b]=${line#*:}
		path[${b//-/_}]=$f; deps[${b//-/_}]=${line#*:}
	done <"$mdir/modules.dep"
	add() { # NAME or PATH: its dependencies first, then itself
		local b=${1##*/}; b=${b%.ko*}; b=${b//-/_}
		[ -n "${seen[$b]:-}" ] && return
		seen[$b]=1
		[ -n "${path[$b]:-}" ] || {
			grep -qE "/$1\.ko|^kernel/.*/$1\.ko" "$mdir/modules.builtin" 2>/dev/null && return
			die "module $1 not in $mdir/modules.dep"
		}
		local d
		for d in ${deps[$b]}; do add "$d"; done
		mods+=("${path[$b]}")
	}
	for m in $WANT_MODULES; do add "$m"; done
fi

key=$({ cat "$HERE/init.sh" "$HERE/initramfs.sh" "$BUSYBOX"; printf '%s\n' "${mods[@]}"; } |
	sha256sum | cut -c1-16)
out=$kdir/initramfs-$key.cpio.gz
[ -f "$out" ] && { echo "$out"; exit 0; }

tmp=$(mktemp -d "$kdir/.initramfs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
s=$tmp/root
mkdir -p "$s/bin" "$s/dev" "$s/proc" "$s/sys" "$s/newroot" "$s/modules"
cp "$BUSYBOX" "$s/bin/busybox"
install -m 755 "$HERE/init.sh" "$s/init"
mknod "$s/dev/console" c 5 1
for f in "${mods[@]}"; do
	cp "$mdir/$f" "$s/modules/"
	echo "${f##*/}" >>"$s/modules/order"
done
(cd "$s" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -6 >"$tmp/initramfs.cpio.gz"
mv "$tmp/initramfs.cpio.gz" "$out"
echo "$out"
