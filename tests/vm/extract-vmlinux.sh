#!/bin/bash
# Print the ELF vmlinux inside a bzImage/vmlinuz (xz, gzip or zstd), like the
# kernel's scripts/extract-vmlinux.  Usage: extract-vmlinux.sh VMLINUZ > vmlinux
set -uo pipefail
img=$1
try() { # MAGIC(grep -P) DECOMPRESSOR...
	local magic=$1; shift
	for pos in $(LC_ALL=C grep -abo -P "$magic" "$img" | cut -d: -f1 | head -5); do
		tail -c+$((pos + 1)) "$img" | "$@" >"$tmp" 2>/dev/null
		[ "$(head -c4 "$tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] && { cat "$tmp"; exit 0; }
	done
}
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
try '\xfd\x37\x7a\x58\x5a\x00' xz -dcq
try '\x28\xb5\x2f\xfd' zstd -dcq
try '\x1f\x8b\x08' gzip -dcq
echo "extract-vmlinux: no vmlinux found in $img" >&2
exit 1
