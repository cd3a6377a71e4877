#!/bin/bash
# Make (or find in the cache) a minimal Debian root of one suite with that
# suite's own PostgreSQL server and client in it, as the compute images
# have: bullseye (glibc 2.31, postgresql-13), bookworm (2.36, 15), trixie
# (2.41, 17).  Prints its directory.  Callers copy nothing in but the static
# profd and use the root as it is (tests/sys/t_dist_roots.sh); they must not
# leave anything behind in it.
#
# Mirror: the one this host's apt uses for bookworm (apt-get indextargets);
# the other suites are read from the same registry, as deb.debian.org has
# them all.
# Cache:  ${PROFD_VM_CACHE:-/var/cache/profd-vm}/roots/SUITE-pg-KEY, KEY =
# hash of this script, the suite, the mirror and debootstrap's version.
# Made in a temporary directory beside it and renamed into place only when
# complete, under a lock per suite (two tests asking at once make it once).
#
# Exit 77 (skip) only when the mirror cannot be reached at all.
#
# Usage: tests/roots/suite.sh SUITE [--print-key]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${PROFD_VM_CACHE:-/var/cache/profd-vm}/roots
SUITE=${1:?usage: suite.sh SUITE [--print-key]}
log() { echo "roots/$SUITE: $*" >&2; }

# The suite's PostgreSQL major version: its postgresql-NN package.
case $SUITE in
bullseye) PG=13 ;;
bookworm) PG=15 ;;
trixie) PG=17 ;;
*) log "unknown suite (bullseye, bookworm, trixie)"; exit 2 ;;
esac

command -v debootstrap >/dev/null ||
	{ log "no debootstrap (scripts/deps.sh --test)"; exit 77; }
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
	awk '$2 == "bookworm" { print $1; exit }')
[ -n "$mirror" ] || { log "this host's apt has no bookworm source to find a mirror from"; exit 77; }
ver=$(dpkg-query -W -f='${Version}' debootstrap)
key=$({ cat "$HERE/suite.sh"; echo "$SUITE $mirror debootstrap=$ver"; } | sha256sum | cut -c1-16)
[ "${2:-}" = "--print-key" ] && { echo "$key"; exit 0; }
out=$CACHE/$SUITE-pg-$key
[ -f "$out/.complete" ] && { echo "$out"; exit 0; }

# A suite the mirror no longer has (bullseye once its LTS ends) is read
# from archive.debian.org.  Unreachable: a skip, said once, rather than
# debootstrap's long failure.
if ! curl -sfI -m 30 "${mirror%/}/dists/$SUITE/Release" >/dev/null; then
	archive=http://archive.debian.org/debian/
	curl -sfI -m 30 "${archive}dists/$SUITE/Release" >/dev/null ||
		{ log "cannot reach ${mirror%/}/dists/$SUITE/Release nor $archive: no $SUITE root"; exit 77; }
	log "${mirror%/} has no $SUITE: using $archive"
	mirror=$archive
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.$SUITE-pg.lock"
flock 9
[ -f "$out/.complete" ] && { echo "$out"; exit 0; }
rm -rf "$CACHE"/.build-$SUITE-pg-*
tmp=$(mktemp -d "$CACHE/.build-$SUITE-pg-$key.XXXXXX")
trap 'umount -R "$tmp/root/proc" 2>/dev/null || true; rm -rf "$tmp"' EXIT
start=$(date +%s)
log "debootstrap --variant=minbase $SUITE with postgresql-$PG from $mirror (once per machine)"
# postgresql-NN's postinst makes no cluster here (postgresql-common's
# createcluster.conf is read at install; the test makes its own cluster in
# a temporary directory), so the root stays read-only to its users.
debootstrap --variant=minbase --include="postgresql-$PG,postgresql-client-$PG,procps" \
	"$SUITE" "$tmp/root" "$mirror" >"$tmp/log" 2>&1 ||
	{ tail -30 "$tmp/log" >&2; log "ERROR: debootstrap failed"; exit 1; }
[ -x "$tmp/root/usr/lib/postgresql/$PG/bin/postgres" ] ||
	{ log "ERROR: no /usr/lib/postgresql/$PG/bin/postgres in the root"; exit 1; }
# No downloaded packages left over.
rm -rf "$tmp/root/var/cache/apt/archives/"*.deb
echo "$PG" >"$tmp/root/.pg-major"
touch "$tmp/root/.complete"
mv "$tmp/root" "$out"
log "made $out in $(($(date +%s) - start)) s"
echo "$out"
