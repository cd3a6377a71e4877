#!/bin/bash
# The README's set-up, as a new user types it, on a fresh Debian 12: a
# debootstrap minbase root (no make, git, compiler or pkg-config; cached by
# tests/roots/minbase.sh), this tree copied in, the README's apt-get line,
# then `make -j4 run`, which must serve /health at its first run; then
# `make dist` there, which must build the static tarball (issue 20).
#
# -j4 because people type it by habit, and it checks the two ways the first
# run broke at once: a variable asked of a tool the dependency step had not
# installed yet (MULTIARCH from a missing cc), and compiles racing that step.
# A serial `make run` is one of the orders -j4 may take.
#
# apt's downloads are kept in $PROFD_VM_CACHE/roots/apt-archives, so only the
# first run on a machine downloads the build's packages.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS/lib/serve.sh"
need_root
for tool in curl unshare chroot; do
	command -v $tool >/dev/null || { echo "skip: no $tool"; exit 77; }
done
ROOT=$(cd "$TESTS/.." && pwd)
CACHE=${PROFD_VM_CACHE:-/var/cache/profd-vm}

rc=0
src=$("$TESTS/roots/minbase.sh") || rc=$?
[ $rc = 77 ] && { echo "skip: no debootstrap root can be made here"; exit 77; }
[ $rc = 0 ] || fail "tests/roots/minbase.sh failed"

# The commands, as the README writes them: a README that changes them
# changes this test.
readme_apt='apt-get update && apt-get install -y make git'
grep -qxF "$readme_apt" "$ROOT/README.md" || fail "the README no longer says: $readme_apt"
grep -qE '^make run +#' "$ROOT/README.md" || fail "the README no longer says: make run"

# Not under /tmp: the root grows to ~1.5 GB with clang and LLVM.
R=$(mktemp -d /var/tmp/profd-fresh.XXXXXX)
runner=""
cleanup_fresh() {
	# The chroot's mounts live in its own mount namespace: once its
	# processes are gone, nothing of the host is mounted under $R.
	[ -n "$runner" ] && { kill -TERM -- "-$runner" 2>/dev/null || true; }
	for _ in $(seq 100); do
		[ -n "$runner" ] && kill -0 -- "-$runner" 2>/dev/null || break
		sleep 0.2
	done
	[ -n "$runner" ] && { kill -KILL -- "-$runner" 2>/dev/null || true; }
	rm -rf "$R"
	cleanup_common
}
trap cleanup_fresh EXIT
cp -a "$src/." "$R/"

# What the host's apt needs to reach its registry (its sources, and settings
# such as a snapshot mirror's Check-Valid-Until), as a fresh machine of this
# kind has them.  Nothing else of the host's.
rm -f "$R/etc/apt/sources.list"
cp -a /etc/apt/sources.list "$R/etc/apt/" 2>/dev/null || true
for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && cp "$f" "$R/etc/apt/sources.list.d/"
done
for f in /etc/apt/apt.conf.d/*; do
	[ -f "$f" ] && grep -q '^Acquire::' "$f" && cp "$f" "$R/etc/apt/apt.conf.d/"
done
cp /etc/resolv.conf "$R/etc/resolv.conf"
# No package's maintainer script starts a service inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
chmod 755 "$R/usr/sbin/policy-rc.d"
mkdir -p "$CACHE/roots/apt-archives/partial"

# This tree as it is, committed or not, less what git ignores (build/).
mkdir -p "$R/root/profd"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf -) | tar -xf - -C "$R/root/profd"
[ ! -e "$R/usr/bin/make" ] || fail "the root is not fresh: it has make"
[ ! -e "$R/usr/bin/cc" ] && [ ! -e "$R/usr/bin/pkg-config" ] || fail "the root is not fresh: it has cc or pkg-config"

port=$(free_port 17300)
cat >"$WORK/inside.sh" <<EOF
set -e
export DEBIAN_FRONTEND=noninteractive PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cd /root/profd
t0=\$(date +%s)
$readme_apt
echo "=== t_readme_fresh: make and git installed in \$((\$(date +%s) - t0)) s"
exec make -j4 run PROFD_ARGS='--listen 127.0.0.1:$port'
EOF
cp "$WORK/inside.sh" "$R/root/inside.sh"
# A clean environment, as a new user's login has: under `make test` this
# runs inside make, whose MAKEFLAGS (PROFD_DEPS_DONE=1, the jobserver)
# would otherwise reach the inner make.
setsid env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8 \
	unshare --mount --propagation private /bin/sh -c '
	set -e
	R=$1
	mount --rbind /dev "$R/dev"
	mount -t proc proc "$R/proc"
	mount --rbind /sys "$R/sys"
	mount --bind "$2" "$R/var/cache/apt/archives"
	exec chroot "$R" /bin/sh /root/inside.sh
' fresh "$R" "$CACHE/roots/apt-archives" >"$WORK/fresh.log" 2>&1 &
runner=$!
start=$(date +%s)

# Bounded by the make run (apt, the build, the daemon's start), not by a
# guess at how long it takes: it either serves or ends.  30 min is the
# safety net for an apt that hangs.
up=""
for _ in $(seq 3600); do
	if curl -sf -m 2 -o "$WORK/health.json" "http://127.0.0.1:$port/health"; then
		up=1
		break
	fi
	kill -0 "$runner" 2>/dev/null || break
	sleep 0.5
done
if [ -z "$up" ]; then
	tail -60 "$WORK/fresh.log" >&2
	fail "the first \`make -j4 run\` in a fresh Debian 12 root did not serve /health"
fi
took=$(($(date +%s) - start))
grep -q '"status": *"ok"' "$WORK/health.json" || fail "/health: $(cat "$WORK/health.json")"
grep '^=== t_readme_fresh' "$WORK/fresh.log" || true
pass "fresh Debian 12 root: README's apt-get line, then make -j4 run served /health after $took s"

# The daemon built there profiles: a real profile of the host's CPUs.
code=$(curl -s -m 60 -o "$WORK/cpu.pb.gz" -w '%{http_code}' \
	"http://127.0.0.1:$port/debug/pprof/profile?seconds=1")
[ "$code" = 200 ] || fail "GET /debug/pprof/profile from the fresh root's daemon: $code"
[ "$(head -c2 "$WORK/cpu.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] ||
	fail "the profile is not gzip"
pass "its daemon served a CPU profile ($(stat -c %s "$WORK/cpu.pb.gz") bytes)"

# Nothing was compiled before the dependency step ended: the first compile
# comes after apt's last line in the log.
# (|| true: a grep that finds nothing must reach the check below, not end
# the test silently under pipefail.)
first_cc=$(grep -n -m1 -E '^(cc|clang) ' "$WORK/fresh.log" | cut -d: -f1 || true)
last_apt=$(grep -n -E '^(Setting up|Processing triggers) ' "$WORK/fresh.log" | tail -1 | cut -d: -f1 || true)
[ -n "$first_cc" ] && [ -n "$last_apt" ] || fail "cannot find the compiles and apt's lines in the log"
[ "$first_cc" -gt "$last_apt" ] ||
	fail "a compile (log line $first_cc) ran before apt finished (line $last_apt)"
pass "under -j4, the first compile (log line $first_cc) came after apt's last line ($last_apt)"

# Issue 20's "make dist builds the static tarball on a fresh Debian 12": in
# the same root, with only what the README's line and `make run`'s own
# dependency step installed, `make dist` as the README writes it.  (The
# tree is copied without .git: the version is "unknown", as
# docs/operations.md says of a tree outside a clone.)
grep -qE '^make dist +#' "$ROOT/README.md" || fail "the README no longer says: make dist"
setsid env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8 \
	nsenter -t "$runner" -m -- chroot "$R" /bin/sh -c 'cd /root/profd && exec make dist' \
	>"$WORK/dist.log" 2>&1 || { tail -40 "$WORK/dist.log" >&2; fail "make dist failed in the fresh root"; }
tarball=$(sed -n 's/^dist: \([^ ]*\.tar\.gz\) .*/\1/p' "$WORK/dist.log" | tail -1)
[ -n "$tarball" ] && [ -f "$R/root/profd/$tarball" ] || fail "make dist names no tarball: $(tail -3 "$WORK/dist.log")"
[ "$tarball" = "dist/profd-unknown-$(uname -m)-linux.tar.gz" ] || fail "tarball $tarball"
mkdir "$WORK/dist"
tar -xzf "$R/root/profd/$tarball" -C "$WORK/dist"
d=$WORK/dist/profd-unknown-$(uname -m)-linux
readelf -lW "$d/profd" >"$WORK/dist.segments"
grep -q 'program interpreter' "$WORK/dist.segments" && fail "the fresh root's profd is not static"
"$d/profd" --version >"$WORK/dist.version" || fail "the fresh root's static profd does not run here"
grep -q '^build: static' "$WORK/dist.version" || fail "--version: $(cat "$WORK/dist.version")"
[ -f "$d/libprofd_heap.so" ] || fail "no libprofd_heap.so in the fresh root's tarball"
pass "fresh Debian 12 root: make dist built $tarball ($(du -k "$R/root/profd/$tarball" | cut -f1) KiB), a static profd that runs"
