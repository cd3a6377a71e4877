#!/bin/busybox sh
# shellcheck shell=dash
# /init of the test VMs (tests/vm/run.sh), run by busybox-static from the
# initramfs.  Loads the modules listed in /modules/order (Debian's kernel),
# mounts the host's / (9p tag "hostroot", read-only) at /newroot with fresh
# tmpfs, proc, sys, dev, tracefs... on it, mounts the per-run share (9p tag
# "profdvm") at /newroot/run/profd-vm, sets up the network, then runs
# /run/profd-vm/cmd.sh chrooted in /newroot with its output and exit code in
# that share, and ends the VM (reboot -f: qemu runs with -no-reboot).
/bin/busybox --install -s /bin
export PATH=/bin
R=/newroot
V=$R/run/profd-vm
msg() { echo "profd-vm: $*" >/dev/console; }
die() {
	msg "ERROR: $*"
	[ -d $V ] && echo "$*" >>$V/init-error
	reboot -f
	sleep 10000
}

mkdir -p /proc /sys /dev $R
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

if [ -f /modules/order ]; then
	while read -r m; do
		insmod "/modules/$m" || msg "insmod $m failed"
	done </modules/order
fi

# The virtio devices may show up a moment after the drivers load.
mount9p() { # TAG DIR OPTIONS
	i=0
	while ! mount -t 9p -o "trans=virtio,version=9p2000.L,msize=512000,$3" "$1" "$2" 2>/dev/null; do
		i=$((i + 1))
		[ $i -ge 50 ] && { mount -t 9p -o "trans=virtio,version=9p2000.L,msize=512000,$3" "$1" "$2"; return 1; }
		sleep 0.1
	done
}
# cache=loose: fast, and safe for a root the guest cannot write (a host file
# changed while the VM runs may be seen stale: build before run.sh).
mount9p hostroot $R ro,cache=loose || die "cannot mount the host's root over 9p"

mount -t tmpfs -o mode=755,nosuid,nodev tmpfs $R/run || die "tmpfs on /run"
mkdir -p $V
# The per-run share: written by the guest, read by the host at once (no cache).
mount9p profdvm $V rw,cache=none || die "cannot mount the per-run share"
[ -f $V/cmd.sh ] || die "no cmd.sh in the per-run share"
# arm64 guests (run.sh --arch arm64): the root is an arm64 Debian, the
# clone is shared read-only at /profd.
if [ -f $V/src ]; then
	mount9p profdsrc $R/profd ro,cache=loose || die "cannot mount the clone at /profd"
fi

mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $R/dev/pts
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs $R/dev/shm
ln -sf /proc/self/fd $R/dev/fd
ln -sf /proc/self/fd/0 $R/dev/stdin
ln -sf /proc/self/fd/1 $R/dev/stdout
ln -sf /proc/self/fd/2 $R/dev/stderr
mount -t tracefs tracefs $R/sys/kernel/tracing 2>/dev/null || msg "no tracefs"
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null || msg "no debugfs"
[ -d $R/sys/fs/bpf ] && mount -t bpf -o mode=700 bpf $R/sys/fs/bpf 2>/dev/null
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs $R/tmp
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs $R/var/tmp
mkdir -m 1777 $R/run/lock
mkdir -m 755 $R/run/user
# Writable places named by run.sh --tmpfs, one absolute path per line.
if [ -f $V/tmpfs ]; then
	while read -r d; do
		[ -d "$R$d" ] && mount -t tmpfs -o mode=755 tmpfs "$R$d" || msg "--tmpfs $d: not mounted"
	done <$V/tmpfs
fi
# postgres: its socket and lock files go to /run/postgresql.
if chroot $R id postgres >/dev/null 2>&1; then
	mkdir -p $R/run/postgresql
	chroot $R chown postgres:postgres /run/postgresql
	chmod 2775 $R/run/postgresql
fi

hostname profd-vm
ip link set lo up
if ip link show eth0 >/dev/null 2>&1; then
	ip addr add 10.0.2.15/24 dev eth0
	ip link set eth0 up
	ip route add default via 10.0.2.2
fi

# cmd.sh (written by run.sh) sets the environment, cds and execs the command.
chroot $R /usr/bin/env -i /bin/bash /run/profd-vm/cmd.sh \
	</dev/null >>$V/stdout 2>>$V/stderr
echo $? >$V/rc.tmp && mv $V/rc.tmp $V/rc
sync
reboot -f
sleep 10000
