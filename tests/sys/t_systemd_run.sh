#!/bin/bash
# profd serve the way systemd/profd.service runs it, without needing systemd
# as PID 1: only the unit's CapabilityBoundingSet, NoNewPrivileges, and a
# NOTIFY_SOCKET that receives READY=1 once /health answers and STOPPING=1 on
# SIGTERM.  The targets belong to another user (nobody), so reading their
# maps and binaries and the kernel's symbols must work with those
# capabilities alone.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"
need_root
for tool in curl python3 setpriv; do
	command -v $tool >/dev/null || { echo "skip: no $tool"; exit 77; }
done
ROOT=$(cd "$TESTS/.." && pwd)
UNIT=$ROOT/systemd/profd.service

# CapabilityBoundingSet=CAP_BPF CAP_PERFMON ... -> -all,+bpf,+perfmon,...
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
[ -n "$caps" ] || fail "no CapabilityBoundingSet in the unit"
grep -qx 'NoNewPrivileges=yes' "$UNIT" || fail "the unit lacks NoNewPrivileges=yes"
# systemd mounts tracefs at boot (sys-kernel-tracing.mount); without
# CAP_SYS_ADMIN profd can't, so do what systemd would have.
[ -d /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing


# notify_listen ADDR: a datagram socket like systemd's; messages go to $WORK/notify.
notify_listen() {
	: >"$WORK/notify"
	python3 -u -c '
import socket, sys
addr = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
open(sys.argv[2] + ".bound", "w").close()
s.settimeout(60)
while True:
    print(s.recv(4096).decode().replace("\n", " "), flush=True)
' "$1" "$WORK/notify" >>"$WORK/notify" 2>/dev/null &
	PIDS_TO_KILL+=($!)
	for _ in $(seq 50); do
		[ -e "$WORK/notify.bound" ] && { rm -f "$WORK/notify.bound"; return; }
		sleep 0.1
	done
	fail "the notify listener did not start"
}
wait_notify() { # WORD [N]: until WORD has come N times (default once)
	for _ in $(seq 200); do
		[ "$(grep -c "$1" "$WORK/notify")" -ge "${2:-1}" ] && return 0
		sleep 0.05
	done
	fail "fewer than ${2:-1} $1 on NOTIFY_SOCKET (got: $(cat "$WORK/notify"))"
}

# Workloads owned by nobody: one in user space, one in the kernel.
cp "$BUILD/tests/inline_target" "$WORK/inline_target"
chmod 755 "$WORK/inline_target"
setpriv --reuid=65534 --regid=65534 --clear-groups "$WORK/inline_target" 60 >/dev/null &
BURN=$!
setpriv --reuid=65534 --regid=65534 --clear-groups dd if=/dev/zero of=/dev/null bs=1M count=10000000 2>/dev/null &
DD=$!
PIDS_TO_KILL+=("$BURN" "$DD")

PORT=$(free_port 17220)
notify_listen "$WORK/notify.sock"
NOTIFY_SOCKET=$WORK/notify.sock setpriv --bounding-set=-all,"$caps" --inh-caps=-all --no-new-privs -- \
	"$PROFD" serve --listen 127.0.0.1:"$PORT" --pid "$BURN" --pid "$DD" 2>"$WORK/serve.err" &
SERVE=$!
PIDS_TO_KILL+=("$SERVE")
wait_notify READY=1
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health")
[ "$code" = 200 ] || fail "READY=1 was sent but /health answers $code"
eff=$(awk '/^CapEff/ {print $2}' /proc/$SERVE/status)
(((0x$eff >> 21) & 1)) && fail "the daemon runs with CAP_SYS_ADMIN (CapEff $eff)"
pass "READY=1 on a path NOTIFY_SOCKET, /health answers at once (caps: $caps)"

curl -s -m 30 -o "$WORK/folded" "http://127.0.0.1:$PORT/debug/pprof/profile?seconds=2&format=folded" ||
	fail "scrape under the unit's capabilities failed"
grep -q '^inline_target;.*hot_a' "$WORK/folded" ||
	fail "no symbolized hot_a of a process owned by nobody: $(head -5 "$WORK/folded")"
grep -q '^dd;.*vfs_read' "$WORK/folded" ||
	fail "no kernel symbols (vfs_read) under dd: $(grep '^dd' "$WORK/folded" | head -3)"
pass "with only the unit's capabilities: user and kernel frames of nobody's processes symbolized"

kill -TERM "$SERVE"
wait "$SERVE" || fail "profd serve exited $? on SIGTERM"
wait_notify STOPPING=1
pass "SIGTERM: STOPPING=1, exit 0"

# Abstract namespace: systemd may hand out "@name".  With the unit's
# WatchdogSec, systemd also sets WATCHDOG_USEC: here 1 s, so WATCHDOG=1
# every 0.5 s from the event loop, and none while the process is stopped.
grep -q '^WatchdogSec=' "$UNIT" || fail "the unit has no WatchdogSec"
: >"$WORK/serve.err"
notify_listen "@profd-test-$$"
NOTIFY_SOCKET=@profd-test-$$ WATCHDOG_USEC=1000000 "$PROFD" serve --listen 127.0.0.1:"$PORT" \
	2>"$WORK/serve.err" &
SERVE=$!
PIDS_TO_KILL+=("$SERVE")
wait_notify READY=1
wait_notify WATCHDOG=1 3
kill -STOP "$SERVE"
sleep 0.3	# a datagram already sent may still be on its way
n=$(grep -c WATCHDOG=1 "$WORK/notify")
sleep 1.5
[ "$(grep -c WATCHDOG=1 "$WORK/notify")" = "$n" ] || fail "WATCHDOG=1 while the daemon was stopped"
kill -CONT "$SERVE"
wait_notify WATCHDOG=1 $((n + 1))
grep -q 'systemd watchdog: WATCHDOG=1 every 0.5 s' "$WORK/serve.err" || fail "no watchdog line in the log"
pass "WATCHDOG=1 every 0.5 s with WATCHDOG_USEC=1000000, none while stopped, again after"
kill -TERM "$SERVE"
wait "$SERVE" || fail "profd serve exited $? on SIGTERM"
wait_notify STOPPING=1
pass "READY=1 and STOPPING=1 on an abstract NOTIFY_SOCKET (@...)"
