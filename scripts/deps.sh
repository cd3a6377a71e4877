#!/bin/sh
# Install what profd needs to build, run and test, from Debian 12's packages.
# Idempotent: asks apt-get only for packages that are missing.
set -eu

# gcc: $(CC), which also tells the Makefile the multiarch triplet; a
# minimal Debian has none.
BUILD_PKGS="make gcc libc6-dev clang llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev
libevent-dev libjson-c-dev libcapstone-dev libdebuginfod-dev libiberty-dev pkg-config binutils
liblzma-dev libbz2-dev"
# liblzma-dev, libbz2-dev: the static archives make dist links (libdw.a's
# decompressors); libdw-dev pulls only the first in.
TEST_PKGS="libcriterion-dev protobuf-compiler golang-go golang-github-google-pprof-dev
golang-google-protobuf-dev
postgresql-15 postgresql-contrib curl procps libjemalloc2 libxml2-utils libc6-dbg
util-linux chromium fonts-dejavu-core gdb
qemu-system-x86 busybox-static linux-source-6.12 bc bison flex libssl-dev libelf-dev
cpio xz-utils kmod debuginfod debootstrap
libclang-rt-dev g++ rustc"
# libclang-rt-dev: libFuzzer and clang's sanitizer runtimes (make fuzz,
# make test SANITIZE=1); only a Recommends of clang.  g++ and rustc: the
# C++ and Rust workloads whose names must come out demangled.

BENCH_PKGS="linux-perf bpftrace"
# The arm64 cross build (make ARCH=arm64), its unit tests under qemu-user
# (tests/sys/t_arm64_build.sh) and the arm64 guest under
# qemu-system-aarch64 (tests/sys/t_arm64_vm.sh): Debian's cross compiler and the
# :arm64 libraries that install beside the native ones (Multi-Arch: same;
# dpkg --add-architecture arm64 first).  libevent-dev and libcriterion-dev
# can't (they would remove the amd64 ones): scripts/arm64-sysroot.sh
# unpacks those, and the runtime libraries libcriterion3 needs are here.
ARM64_PKGS="gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu
qemu-user-static binfmt-support qemu-system-arm libc6-dev:arm64 linux-libc-dev:arm64 libbpf-dev:arm64
libelf-dev:arm64 libdw-dev:arm64 zlib1g-dev:arm64 libjson-c-dev:arm64 libcapstone-dev:arm64
libdebuginfod-dev:arm64 libiberty-dev:arm64 liblzma-dev:arm64 libbz2-dev:arm64
libevent-2.1-7:arm64 libgit2-1.5:arm64 libffi8:arm64"

case ${1:---build} in
--build | --test | --bench) ;;
*) echo "usage: scripts/deps.sh [--build|--test|--bench]" >&2; exit 2 ;;
esac
want="$BUILD_PKGS"
[ "${1:-}" = "--test" ] && want="$BUILD_PKGS $TEST_PKGS $BENCH_PKGS"
[ "${1:-}" = "--test" ] && [ "$(uname -m)" = x86_64 ] && want="$want $ARM64_PKGS"
# make ARCH=arm64 passes ARCH on.
[ "${ARCH:-}" = arm64 ] && [ "$(uname -m)" = x86_64 ] && want="$want $ARM64_PKGS"
[ "${1:-}" = "--bench" ] && want="$BUILD_PKGS $TEST_PKGS $BENCH_PKGS"
# The browser tests get playwright-core with npm (tests/lib/browser.sh); a
# node that bundles npm is as good as Debian's npm package.
[ "${1:-}" = "--test" ] && ! command -v npm >/dev/null && want="$want npm"

missing=""
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "profd: missing packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
	exit 1
fi
echo "profd: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
case "$missing" in
*:arm64*) dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64 ;;
esac
apt-get update -q
apt-get install -y -q --no-install-recommends $missing
