#!/bin/bash
# Run one command in a qemu VM booted with another kernel, the host's / as the
# guest's root (read-only, virtio-9p).  See docs/vm.md.
#
#   tests/vm/run.sh [--arch arm64] --kernel debian-6.1|compute-6.12 [options] -- COMMAND [ARGS...]
#
# Options:
#   --kernel K        debian-6.1 (Debian 12's stock kernel) or compute-6.12
#                     (built from linux-source-6.12 with tests/vm/compute-6.12.config)
#   --arch A          x86 (default) or arm64: an arm64 guest under
#                     qemu-system-aarch64 (TCG, -cpu max: PAC and BTI), its
#                     kernel the arm64 one of that name (compute-6.12:
#                     tests/vm/compute-6.12-arm64.config), its root the
#                     arm64 Debian of tests/vm/root-arm64.sh (not the host's
#                     /), this clone read-only at /profd (the command runs
#                     there, or in the same place below it as here)
#   --smp N           CPUs (default 2)          --mem MB   memory (default 2048)
#   --timeout SEC     for the VM run, kernel build excluded (default 600); exit 124
#   --env NAME[=VAL]  pass NAME (its value here, or VAL) to the command; repeatable
#   --fwd VAR         forward a free 127.0.0.1 port of the host to the guest port;
#                     VAR=guest port is set in the command's environment
#   --guest-port P    the guest port for --fwd (default 7117)
#   --port-file FILE  write the host port there (implies --fwd PROFD_VM_PORT)
#   --tmpfs DIR       a fresh writable tmpfs on DIR in the guest; repeatable
#   --console FILE    keep the guest's serial console log in FILE
#   -v, --verbose     say what happens (kernel, port, boot time) on stderr
#
# Accelerator: KVM only once a guest has been seen to reach the command under
# it (see docs/vm.md); TCG otherwise.  One line on stderr says which ran:
# "run.sh: accelerator kvm" or "run.sh: accelerator tcg: WHY".
#   PROFD_VM_ACCEL=kvm|tcg   force one (kvm: no fallback)
#   PROFD_VM_QEMU=PATH       the qemu-system-x86_64 to run (a wrapper, say)
#   PROFD_VM_KVM_PROOF=SEC   how long a KVM guest may take to reach the
#                            command before TCG is used instead (default 60)
#   PROFD_VM_ACCEL_CACHE=DIR where verdicts are kept ($PROFD_VM_CACHE/accel)
#
# The command's stdout and stderr come out on run.sh's, its exit code is
# run.sh's.  Exit 124: timeout; 125: the VM failed (boot, harness); 77: cannot
# run here (not root, no qemu).  The guest sees /tmp, /var/tmp, /run, /dev/shm
# as fresh tmpfs: put host files it needs elsewhere (e.g. build/).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
me=run.sh
say() { [ "$verbose" = 1 ] && echo "$me: $*" >&2 || true; }
die() { echo "$me: $*" >&2; exit 125; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

kernel="" arch=x86 smp=2 mem=2048 timeout=600 fwd_var="" guest_port=7117 port_file=""
console_keep="" verbose=0
envs=() tmpfs=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--arch) arch=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--env) envs+=("$2"); shift 2 ;;
	--fwd) fwd_var=$2; shift 2 ;;
	--guest-port) guest_port=$2; shift 2 ;;
	--port-file) port_file=$2; shift 2 ;;
	--tmpfs) tmpfs+=("$2"); shift 2 ;;
	--console) console_keep=$2; shift 2 ;;
	-v | --verbose) verbose=1; shift ;;
	-h | --help) usage ;;
	--) shift; break ;;
	*) echo "$me: unknown option $1" >&2; usage ;;
	esac
done
[ $# -gt 0 ] || { echo "$me: no command" >&2; usage; }
[ -n "$port_file" ] && [ -z "$fwd_var" ] && fwd_var=PROFD_VM_PORT
for n in "$smp" "$mem" "$timeout" "$guest_port"; do
	case $n in '' | *[!0-9]*) echo "$me: not a number: '$n'" >&2; exit 2 ;; esac
done

[ "$(id -u)" -eq 0 ] || { echo "skip: $me needs root (the guest reads all of / as root)" >&2; exit 77; }
case $arch in
x86) QEMU=${PROFD_VM_QEMU:-$(command -v qemu-system-x86_64)} ||
	{ echo "skip: $me: no qemu-system-x86_64 (apt-get install qemu-system-x86)" >&2; exit 77; } ;;
arm64) QEMU=$(command -v qemu-system-aarch64) ||
	{ echo "skip: $me: no qemu-system-aarch64 (apt-get install qemu-system-arm)" >&2; exit 77; } ;;
*) echo "$me: --arch x86 or arm64" >&2; exit 2 ;;
esac
CACHE=${PROFD_VM_CACHE:-/var/cache/profd-vm}
kvm_proof=${PROFD_VM_KVM_PROOF:-60}
case $kvm_proof in '' | *[!0-9]*) echo "$me: PROFD_VM_KVM_PROOF: not a number: '$kvm_proof'" >&2; exit 2 ;; esac

case $kernel in
debian-6.1) kdir=$("$HERE/kernel-debian.sh" --arch "$arch") ;;
compute-6.12) kdir=$("$HERE/kernel-compute.sh" --arch "$arch") ;;
*) echo "$me: --kernel debian-6.1 or compute-6.12" >&2; exit 2 ;;
esac || die "no $kernel kernel ($arch)"
# arm64: the guest's root (made once), its busybox for the initramfs, and
# this clone shared at /profd.
guest_root=/ src=""
if [ "$arch" = arm64 ]; then
	guest_root=$("$HERE/root-arm64.sh") || die "no arm64 root (tests/vm/root-arm64.sh)"
	PROFD_VM_BUSYBOX=$("$HERE/busybox-arm64.sh") || die "no arm64 busybox"
	export PROFD_VM_BUSYBOX
	src=$(cd "$HERE/../.." && pwd)
fi
initrd=$("$HERE/initramfs.sh" "$kdir") || die "no initramfs for $kdir"
# The uncompressed ELF boots faster under TCG (PVH entry); the bzImage
# otherwise.  arm64: the Image (raw, or Debian's gzipped vmlinuz).
img=""
imgs="vmlinux bzImage vmlinuz"
[ "$arch" = arm64 ] && imgs="Image vmlinuz"
for f in $imgs; do
	[ -f "$kdir/$f" ] && { img=$kdir/$f; break; }
done
[ -n "${PROFD_VM_NO_VMLINUX:-}" ] && [ -f "$kdir/vmlinux" ] &&
	for f in bzImage vmlinuz; do [ -f "$kdir/$f" ] && { img=$kdir/$f; break; }; done
say "kernel $(cat "$kdir/kernel.release"): $img, initramfs $initrd"

# The accelerator.  A /dev/kvm that opens proves nothing: under nested
# virtualization qemu may abort at once ("failed to set MSR 0x10a") or boot a
# guest that never prints.  So KVM is used on proof: a guest that reaches the
# command under it.  The verdict is kept per machine, boot and qemu build
# (both kvm and tcg), so a broken KVM costs its proof once per boot.
#   accel      what this run uses now
#   accel_why  for TCG, why (printed)
#   proving    1: a KVM run whose failure before the command means TCG, once
verdicts=${PROFD_VM_ACCEL_CACHE:-$CACHE/accel}
verdict_file=""
accel_why="" proving=0
accel_mode=${PROFD_VM_ACCEL:-auto}
# An arm64 guest on this x86-64 host: TCG, there is nothing else.
[ "$arch" = arm64 ] && accel_mode=tcg-arm64
case $accel_mode in
tcg-arm64) accel=tcg accel_why="an arm64 guest on $(uname -m)" ;;
kvm) accel=kvm ;;
tcg) accel=tcg accel_why="PROFD_VM_ACCEL=tcg" ;;
auto)
	accel=tcg accel_why="no /dev/kvm that opens"
	kvm_dev=${PROFD_VM_KVM_DEV:-/dev/kvm} # the harness's own test points it elsewhere
	if [ -e "$kvm_dev" ] && { exec 8<>"$kvm_dev"; } 2>/dev/null; then
		exec 8>&-
		vkey=$({
			cat /etc/machine-id /proc/sys/kernel/random/boot_id 2>/dev/null
			readlink -f "$QEMU"
			"$QEMU" --version 2>/dev/null | head -1
		} | sha256sum | cut -c1-16)
		verdict_file=$verdicts/$vkey
		v=$(cat "$verdict_file" 2>/dev/null) || v=""
		case $v in
		tcg*) accel_why="KVM unusable here (${v#tcg }); verdict cached in $verdict_file" ;;
		*) accel=kvm proving=1 ;;
		esac
	fi
	;;
*) echo "$me: PROFD_VM_ACCEL must be kvm or tcg, not '$PROFD_VM_ACCEL'" >&2; exit 2 ;;
esac
# verdict WHAT: remember it for this machine's later runs.
verdict() {
	[ -n "$verdict_file" ] || return 0
	mkdir -p "$verdicts" && echo "$1" >"$verdict_file.$$" && mv "$verdict_file.$$" "$verdict_file"
} 2>/dev/null
cpu=${PROFD_VM_CPU:-max}
# pauth-impdef: qemu's own PAC algorithm, much cheaper to emulate than QARMA.
[ "$arch" = arm64 ] && cpu=${PROFD_VM_CPU:-max,pauth-impdef=on}

run=$(mktemp -d /tmp/profd-vm.XXXXXX)
qpid="" tails=()
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null || true
	for t in "${tails[@]}"; do kill "$t" 2>/dev/null || true; done
	[ -n "$console_keep" ] && [ -f "$run/console.log" ] && cp "$run/console.log" "$console_keep" 2>/dev/null
	rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
sh=$run/share
mkdir -m 755 "$sh"
: >"$sh/stdout"
: >"$sh/stderr"

# The command as a bash script: arbitrary quoting survives, nothing goes
# through the kernel command line.
{
	echo "# written by tests/vm/run.sh"
	echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	echo "export HOME=/root USER=root LOGNAME=root SHELL=/bin/bash TERM=dumb"
	for e in "${envs[@]}"; do
		name=${e%%=*}
		[[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || { echo "$me: bad --env $e" >&2; exit 2; }
		if [[ $e == *=* ]]; then val=${e#*=}
		elif [ -n "${!name+x}" ]; then val=${!name}
		else continue
		fi
		printf 'export %s=%q\n' "$name" "$val"
	done
	[ -n "$fwd_var" ] && printf 'export %s=%q\n' "$fwd_var" "$guest_port"
	if [ -n "$src" ]; then
		case $PWD/ in "$src"/*) rel=${PWD#"$src"} ;; *) rel="" ;; esac
		printf 'cd %q 2>/dev/null || cd /profd\n' "/profd$rel"
	else
		printf 'cd %q 2>/dev/null || cd /\n' "$PWD"
	fi
	# Where the kernel's text is (KASLR): a hung guest's vCPUs are named
	# from the host against System.map (dump_vcpus).
	echo "grep -m1 ' _stext\$' /proc/kallsyms >/run/profd-vm/stext 2>/dev/null || true"
	# Debian's System.map is a stub: the kernel's text symbols, once per
	# kernel, in the background (reading kallsyms under TCG takes seconds),
	# kept beside it for the next runs.
	echo "[ -f /run/profd-vm/want-kallsyms ] && { nice grep ' [tTwW] ' /proc/kallsyms >/run/profd-vm/kallsyms.part && mv /run/profd-vm/kallsyms.part /run/profd-vm/kallsyms; } >/dev/null 2>&1 &"
	echo ': >/run/profd-vm/started'
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$sh/cmd.sh"
[ -s "$kdir/kallsyms.text" ] || : >"$sh/want-kallsyms"
[ -n "$src" ] && : >"$sh/src"
for d in "${tmpfs[@]}"; do
	case $d in /*) echo "$d" >>"$sh/tmpfs" ;; *) echo "$me: --tmpfs wants an absolute path" >&2; exit 2 ;; esac
done

pick_port() { # a port nothing listens on; qemu failing to bind is retried
	local p
	while :; do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}

# A guest kernel that locks up panics (the VM ends at once, -no-reboot)
# rather than sitting out the timeout, and shows every CPU's stack first:
# loglevel=5 lets through the backtraces (printed at the default level,
# which `quiet` hides) and keeps the boot's info messages out.
base_append="console=ttyS0 tsc=reliable panic=-1 loglevel=5 softlockup_panic=1"
[ "$arch" = arm64 ] && base_append="console=ttyAMA0 panic=-1 loglevel=5 softlockup_panic=1"
base_append="$base_append softlockup_all_cpu_backtrace=1"
# Under TCG the guest's TSC ticks at the host's rate: tell the kernel that rate,
# since PIT calibration often fails under TCG and a kernel without ACPI (no
# HPET, no PM timer to calibrate against) then falls back to jiffies.
tsc_khz() {
	local cache=${PROFD_VM_CACHE:-/var/cache/profd-vm}/helpers src=$HERE/tsc_khz.c boot bin
	boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null) || boot=unknown
	[ -s "$cache/tsc_khz.$boot" ] && { cat "$cache/tsc_khz.$boot"; return; }
	bin=$cache/tsc_khz-$(sha256sum "$src" | cut -c1-12)
	mkdir -p "$cache"
	[ -x "$bin" ] || { cc -O2 -o "$bin.$$" "$src" && mv "$bin.$$" "$bin"; } >&2 || return 1
	"$bin" >"$cache/tsc_khz.$boot.$$" && mv "$cache/tsc_khz.$boot.$$" "$cache/tsc_khz.$boot" &&
		cat "$cache/tsc_khz.$boot"
}
set_append() { # the kernel command line for $accel
	append=$base_append
	if [ "$arch" = x86 ] && [ "$accel" = tcg ] && [ -z "${PROFD_VM_NO_TSC_KHZ:-}" ]; then
		if khz=$(tsc_khz) && [ "${khz:-0}" -gt 0 ]; then
			append="$append tsc_early_khz=$khz"
		else
			echo "$me: warning: cannot measure the host's TSC frequency (no cc?);" \
				"the guest may fall back to jiffies" >&2
		fi
	fi
}
launch() {
	local net="user,id=n0"
	[ -n "$fwd_var" ] && net="$net,hostfwd=tcp:127.0.0.1:$port-:$guest_port"
	: >"$run/console.log"
	start_ns=$(date +%s%N)
	# timeout(1): qemu dies even if this script is killed with SIGKILL.
	local machine=${PROFD_VM_MACHINE:-q35} extra=()
	[ "$arch" = arm64 ] && machine=virt
	# arm64: this clone, read-only, at /profd (init.sh mounts it when the
	# per-run share has a file "src").
	[ -n "$src" ] && extra=(-fsdev "local,id=profdsrc,path=$src,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=profdsrc,mount_tag=profdsrc)
	timeout -k 10 $((timeout + 60)) "$QEMU" -machine "$machine" ${PROFD_VM_QEMU_ARGS:-} -accel "$accel" -cpu "$cpu" -m "$mem" -smp "$smp,sockets=$smp" \
		-nodefaults -no-user-config -display none -no-reboot \
		-monitor "unix:$run/monitor.sock,server=on,wait=off" \
		-serial "file:$run/console.log" \
		-kernel "$img" -initrd "$initrd" -append "$append" \
		-fsdev "local,id=hostroot,path=$guest_root,security_model=none,readonly=on,multidevs=remap" \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot "${extra[@]}" \
		-fsdev "local,id=profdvm,path=$sh,security_model=none" \
		-device virtio-9p-pci,fsdev=profdvm,mount_tag=profdvm \
		-netdev "$net" -device virtio-net-pci,netdev=n0,romfile= \
		</dev/null >"$run/qemu.out" 2>&1 &
	qpid=$!
}

# start_vm: qemu running as $qpid (0), or ended at once (1, its words in
# $run/qemu.out; first_err keeps the first of them).
port="" first_err=""
start_vm() {
	set_append
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ -n "$fwd_var" ] && port=$(pick_port)
		launch
		# qemu fails at once on a bad -cpu or a port taken since pick_port.
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$qpid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$qpid" 2>/dev/null && return 0
		[ -n "$first_err" ] || first_err=$(grep -m1 -i -e error -e assert "$run/qemu.out" ||
			head -1 "$run/qemu.out")
		if grep -q "host forwarding" "$run/qemu.out"; then
			say "port $port taken, another one"
		elif [ "$cpu" = max ] && grep -qi "cpu" "$run/qemu.out"; then
			say "-cpu max failed, -cpu qemu64: $(head -1 "$run/qemu.out")"
			cpu=qemu64
		else
			return 1 # the VM ended at once: reported below with the console log
		fi
		wait "$qpid" 2>/dev/null || true
	done
	return 1
}
# to_tcg WHY: this run goes on under TCG, and so do this machine's next ones.
to_tcg() {
	accel=tcg cpu=${PROFD_VM_CPU:-max} proving=0 first_err=""
	accel_why="KVM unusable here ($1)"
	verdict "tcg $1"
	rm -f "$sh/started" "$sh/rc" "$sh/init-error"
	: >"$sh/stdout"
	: >"$sh/stderr"
}
if ! start_vm && [ "$proving" = 1 ]; then
	to_tcg "qemu: ${first_err:-ended at once}"
	start_vm || true
fi
# Under KVM on trial: the guest must reach the command within the proof's
# bound (seconds where KVM works), or it is killed and run again under TCG.
if [ "$proving" = 1 ]; then
	proof_end=$((SECONDS + kvm_proof))
	while [ ! -f "$sh/started" ] && kill -0 "$qpid" 2>/dev/null && [ $SECONDS -lt $proof_end ]; do
		sleep 0.1
	done
	if [ -f "$sh/started" ]; then
		verdict kvm
	else
		if kill -0 "$qpid" 2>/dev/null; then
			why="the guest did not reach the command in ${kvm_proof}s"
			[ -s "$run/console.log" ] || why="$why; it printed nothing"
			kill "$qpid" 2>/dev/null || true
		else
			why="the guest ended before the command: $(tail -1 "$run/console.log" 2>/dev/null)"
		fi
		[ -n "$first_err" ] && why="-cpu max: $first_err; -cpu $cpu: $why"
		wait "$qpid" 2>/dev/null || true
		to_tcg "$why"
		start_vm || true
	fi
fi
if [ "$accel" = kvm ]; then
	echo "$me: accelerator kvm" >&2
else
	echo "$me: accelerator tcg: $accel_why" >&2
fi
say "qemu $accel -cpu $cpu -smp $smp -m $mem (pid $qpid)"
if [ -n "$fwd_var" ]; then
	if [ -n "$port_file" ]; then
		echo "$port" >"$port_file.tmp.$$" && mv "$port_file.tmp.$$" "$port_file"
		say "forwarding 127.0.0.1:$port -> guest :$guest_port (\$$fwd_var in the guest)"
	else
		echo "$me: forwarding 127.0.0.1:$port -> guest :$guest_port (\$$fwd_var in the guest)" >&2
	fi
fi

# The guest appends to these files in the per-run share as the command writes.
tail -q -c +1 -f -s 0.2 --pid="$qpid" "$sh/stdout" &
tails+=($!)
tail -q -c +1 -f -s 0.2 --pid="$qpid" "$sh/stderr" >&2 &
tails+=($!)

# dump_vcpus: where each vCPU of a guest that seems hung is, three times a
# second apart, from qemu's monitor, named against the kernel's System.map
# (moved by the guest's KASLR slide, from its /proc/kallsyms _stext): a
# guest stuck with interrupts off prints nothing of its own (docs/vm.md).
dump_vcpus() {
	[ -S "$run/monitor.sock" ] || return 0
	echo "$me: the guest's vCPUs (qemu's monitor, info registers -a), three times 1 s apart:"
	local map=$kdir/System.map
	[ -s "$kdir/kallsyms.text" ] && map=$kdir/kallsyms.text
	python3 - "$run/monitor.sock" "$map" "$sh/stext" <<'PY' || true
import bisect, re, socket, sys, time
sock, smap, stext_file = sys.argv[1:4]
syms = []
try:
    for line in open(smap):
        f = line.split()
        if len(f) >= 3 and f[1] in ("t", "T", "w", "W"):
            try:
                syms.append((int(f[0], 16), f[2]))
            except ValueError:
                pass
    syms.sort()
except OSError:
    pass
slide = 0
try:
    run = int(open(stext_file).read().split()[0], 16)
    base = next(a for a, n in syms if n == "_stext")
    slide = run - base
except (OSError, ValueError, IndexError, StopIteration):
    pass
addrs = [a for a, _ in syms]
def name(pc):
    i = bisect.bisect_right(addrs, pc - slide) - 1
    if i < 0 or not syms:
        return "?"
    return f"{syms[i][1]}+{pc - slide - syms[i][0]:#x}"
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sock)
def read_all():
    # Until the monitor has been quiet for 0.5 s (5 s at most): its prompt
    # comes more than once, so it marks no end.
    out, end = b"", time.time() + 5
    s.settimeout(0.5)
    while time.time() < end:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        out += chunk
    return out.decode(errors="replace")
def cmd(c):
    s.sendall(c.encode() + b"\n")
    return read_all()
read_all()
for round in range(3):
    regs = cmd("info registers -a")
    pcs = re.findall(r"(?:RIP|PC)=([0-9a-fA-F]+)", regs)
    fl = re.findall(r"RFL=([0-9a-fA-F]+)", regs)
    for i, pc in enumerate(pcs):
        pc = int(pc, 16)
        irq = ""
        if i < len(fl):
            irq = " interrupts " + ("on" if int(fl[i], 16) & 0x200 else "off")
        print(f"  round {round + 1}, vCPU {i}: {pc:#x} {name(pc)}{irq}")
    time.sleep(1)
PY
}
abort_req=0
# SIGUSR1 from the test: the guest is taken for hung now, not at the timeout.
trap 'abort_req=1' USR1
timed_out=0
deadline=$((SECONDS + timeout))
# A guest kernel that stops printing before the command has even started
# (an emulated one was seen stuck for 10 minutes after its MTRR lines, once
# in CI, under load) is booted again, once: nothing has run in it yet.  The
# retry is said on stderr and in CI's notes ($PROFD_CI_NOTES).
boot_stall=${PROFD_VM_BOOT_STALL:-240} rebooted=0 last_size=-1 quiet_since=$SECONDS
while kill -0 "$qpid" 2>/dev/null; do
	if [ "$SECONDS" -ge "$deadline" ] || [ $abort_req = 1 ]; then
		timed_out=1
		[ $abort_req = 1 ] && echo "$me: the test took the guest for hung (SIGUSR1): stopped before the timeout" >&2
		dump_vcpus >&2
		kill "$qpid" 2>/dev/null || true
		break
	fi
	if [ $rebooted = 0 ] && [ ! -f "$sh/started" ]; then
		size=$(stat -c %s "$run/console.log" 2>/dev/null || echo 0)
		if [ "$size" != "$last_size" ]; then
			last_size=$size quiet_since=$SECONDS
		elif [ $((SECONDS - quiet_since)) -ge "$boot_stall" ]; then
			rebooted=1
			{
				echo "$me: the guest ($kernel, $accel) printed nothing for ${boot_stall}s before its command: booted again; its console's last lines:"
				tail -n 5 "$run/console.log"
			} | tee -a "${PROFD_CI_NOTES:-/dev/null}" >&2
			kill "$qpid" 2>/dev/null || true
			wait "$qpid" 2>/dev/null || true
			for t in "${tails[@]}"; do wait "$t" 2>/dev/null || true; done
			tails=()
			rm -f "$sh/started" "$sh/rc" "$sh/init-error"
			start_vm || break
			tail -q -c +1 -f -s 0.2 --pid="$qpid" "$sh/stdout" &
			tails+=($!)
			tail -q -c +1 -f -s 0.2 --pid="$qpid" "$sh/stderr" >&2 &
			tails+=($!)
			deadline=$((SECONDS + timeout))
		fi
	fi
	sleep 0.2
done
qrc=0
wait "$qpid" 2>/dev/null || qrc=$?
if [ -f "$sh/want-kallsyms" ] && [ -s "$sh/kallsyms" ] && grep -q ' _stext$' "$sh/kallsyms"; then
	cp "$sh/kallsyms" "$kdir/kallsyms.text.$$" && mv "$kdir/kallsyms.text.$$" "$kdir/kallsyms.text"
fi
qpid=""
end_ns=$(date +%s%N)
for t in "${tails[@]}"; do wait "$t" 2>/dev/null || true; done
tails=()

if [ -f "$sh/started" ]; then
	started_ns=$(stat -c %.9Y "$sh/started" | tr -d .)
	say "boot to command: $(((started_ns - start_ns) / 1000000)) ms;" \
		"command + poweroff: $(((end_ns - started_ns) / 1000000)) ms"
fi
if [ $timed_out = 1 ]; then
	echo "$me: TIMEOUT: the VM ($kernel) ran more than ${timeout}s; killed it" >&2
	# A hung guest kernel says why on its console (soft lockup, hung task).
	echo "$me: the guest's console, last lines:" >&2
	tail -n 30 "$run/console.log" >&2
	exit 124
fi
if [ -f "$sh/rc" ]; then
	exit "$(cat "$sh/rc")"
fi
{
	echo "$me: the VM ($kernel) ended without running the command to its end; console log:"
	if grep -q -e 'soft lockup' -e 'Kernel panic' "$run/console.log"; then
		# A LOCKUP: every CPU's stack, from the first report on.
		echo "$me: LOCKUP (or panic) in the guest kernel"
		sed -n '/soft lockup\|Kernel panic\|BUG:/,$p' "$run/console.log" | head -400
	else
		tail -n 40 "$run/console.log"
	fi
	[ -s "$run/console.log" ] || echo "(empty: the kernel printed nothing; qemu exit code $qrc, --mem $mem)"
	[ -s "$run/qemu.out" ] && { echo "--- qemu:"; cat "$run/qemu.out"; }
	[ -f "$sh/init-error" ] && { echo "--- init:"; cat "$sh/init-error"; }
} >&2
exit 125
