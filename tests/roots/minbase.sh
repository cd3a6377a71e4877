#!/bin/bash
# Make (or find in the cache) a pristine Debian 12 root as debootstrap's
# minbase variant makes it: no make, no git, no compiler.  Prints its
# directory.  Callers copy it and work on the copy (tests/sys/t_readme_fresh.sh).
#
# Mirror: the one this host's apt uses for bookworm (apt-get indextargets),
# so the root reaches the same registry the host does.
# Cache:  ${PROFD_VM_CACHE:-/var/cache/profd-vm}/roots/bookworm-minbase-KEY,
# KEY = hash of this script, the mirror and debootstrap's version.  Made in a
# temporary directory beside it and renamed into place only when complete.
#
# Usage: tests/roots/minbase.sh [--print-key]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${PROFD_VM_CACHE:-/var/cache/profd-vm}/roots
SUITE=bookworm
log() { echo "minbase: $*" >&2; }

command -v debootstrap >/dev/null ||
	{ log "no debootstrap (scripts/deps.sh --test)"; exit 77; }
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
	awk -v s=$SUITE '$2 == s { print $1; exit }')
[ -n "$mirror" ] || { log "this host's apt has no $SUITE source to debootstrap from"; exit 77; }
ver=$(dpkg-query -W -f='${Version}' debootstrap)
key=$({ cat "$HERE/minbase.sh"; echo "$mirror debootstrap=$ver"; } | sha256sum | cut -c1-16)
[ "${1:-}" = "--print-key" ] && { echo "$key"; exit 0; }
out=$CACHE/$SUITE-minbase-$key
[ -f "$out/.complete" ] && { echo "$out"; exit 0; }

mkdir -p "$CACHE"
exec 9>"$CACHE/.$SUITE-minbase.lock"
flock 9
[ -f "$out/.complete" ] && { echo "$out"; exit 0; }
rm -rf "$CACHE"/.build-$SUITE-minbase-*
tmp=$(mktemp -d "$CACHE/.build-$SUITE-minbase-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
log "debootstrap --variant=minbase $SUITE from $mirror (once per machine)"
debootstrap --variant=minbase "$SUITE" "$tmp/root" "$mirror" >"$tmp/log" 2>&1 ||
	{ tail -30 "$tmp/log" >&2; log "ERROR: debootstrap failed"; exit 1; }
# As a fresh install: no downloaded packages left over.
rm -rf "$tmp/root/var/cache/apt/archives/"*.deb
touch "$tmp/root/.complete"
mv "$tmp/root" "$out"
log "made $out in $(($(date +%s) - start)) s"
echo "$out"
