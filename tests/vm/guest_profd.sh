#!/bin/bash
# Runs inside a guest booted by tests/vm/run.sh (see tests/sys/t_vm_kernels.sh):
# postgres 15 under pgbench, then profd record in each mode, then profd serve
# for the host to query through the forwarded port.  Profiles go to stdout
# as base64 between "=== FILE name" and "=== END" for the host to check.
set -euo pipefail
cd "$(dirname "$0")/../.."
# The build's directory (build-arm64 in the arm64 guests, whose profd is the
# static one: the guest's root has none of its libraries).
BUILD=${PROFD_VM_BUILD:-build}
PROFD=${PROFD_VM_PROFD:-$PWD/$BUILD/profd}
B=/usr/lib/postgresql/15/bin
PG=/tmp/pg
as_pg() { runuser -u postgres -- "$@"; }
emit() { echo "=== FILE $1"; base64 -w0 "$2"; echo; echo "=== END"; }
step() { echo "--- $(date +%s) $*"; }
# stuck PID NAME ERRFILE: what a command that overran its time is doing, for
# the host's log (the guest is killed at the VM's timeout, its files lost).
stuck() {
	local pid=$1 t
	echo "=== STUCK $2 (pid $pid) after its limit; load: $(cat /proc/loadavg)"
	for t in /proc/$pid/task/*; do
		echo "--- task ${t##*/} $(cut -d' ' -f2,3 $t/stat 2>/dev/null) wchan=$(cat $t/wchan 2>/dev/null)"
		cat $t/stack 2>/dev/null
	done
	command -v gdb >/dev/null &&
		timeout 120 gdb -p "$pid" -batch -nx -ex 'thread apply all bt' 2>&1 | grep -E '^(#|Thread)' | head -150
	echo "--- its stderr:"; tail -40 "$3"
	echo "--- dmesg:"; dmesg | grep -v ' Code: ' | tail -15
	echo "--- ps:"; ps -eo pid,stat,pcpu,wchan:20,args | head -40
}
# await PID SECONDS NAME ERRFILE: wait for PID; past SECONDS, show what it
# is doing and kill it (exit 124).
await() {
	local pid=$1 limit=$2 n=0
	while kill -0 $pid 2>/dev/null; do
		if [ $n -ge $((limit * 5)) ]; then
			stuck $pid "$3" "$4"
			kill -KILL $pid
			wait $pid 2>/dev/null
			return 124
		fi
		sleep 0.2
		n=$((n + 1))
	done
	wait $pid
}
# guard SECONDS NAME ERRFILE CMD...: CMD, under await.
guard() {
	local limit=$1 name=$2 err=$3
	shift 3
	"$@" &
	await $! "$limit" "$name" "$err"
}

step postgres
as_pg $B/initdb -D $PG -A trust >/tmp/initdb.log 2>&1 || { cat /tmp/initdb.log; exit 1; }
as_pg $B/pg_ctl -D $PG -l /tmp/pg.log -w -t 300 \
	-o "-c listen_addresses= -k /run/postgresql" start >/dev/null || { cat /tmp/pg.log; exit 1; }
as_pg $B/pgbench -h /run/postgresql -i -s 1 postgres >/tmp/pgbench-init.log 2>&1 ||
	{ cat /tmp/pgbench-init.log; exit 1; }
as_pg $B/pgbench -h /run/postgresql -S -c 2 -j 2 -T 1800 postgres >/tmp/pgbench.log 2>&1 &
PGB=$!
trap 'kill $PGB 2>/dev/null; as_pg $B/pg_ctl -D $PG -m immediate stop >/dev/null 2>&1 || true' EXIT
sleep 2

# Every postgres process, by executable name: backends forked before and
# during the profile.
# Kernel time per sample: run_time_ns / run_cnt of the daemon's BPF
# programs (kernel.bpf_stats_enabled), read from its fdinfo 3 s into its
# profile, in one awk (a loop of them is too slow to catch an emulated
# daemon's 5 s): "BPFSTATS prog_type run_cnt run_time_ns" lines for the
# host (under TCG these time the emulator: the figures say so).
step record --exe postgres
echo 1 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null || true
"$PROFD" record --exe postgres --seconds 5 -o /tmp/exe.pb.gz 2>/tmp/exe.err &
EXE=$!
(
	for _ in $(seq 1200); do
		grep -q profiling /tmp/exe.err 2>/dev/null && break
		kill -0 $EXE 2>/dev/null || exit 0
		sleep 0.2
	done
	sleep 3
	awk 'FNR == 1 { if (t != "" && c != "") print "BPFSTATS", t, c, ns; t = c = ns = "" }
		/^prog_type:/ { t = $2 } /^run_time_ns:/ { ns = $2 } /^run_cnt:/ { c = $2 }
		END { if (t != "" && c != "") print "BPFSTATS", t, c, ns }' /proc/$EXE/fdinfo/* \
		>/tmp/exe.stats 2>/dev/null || true
) &
STATS=$!
await $EXE 240 "record --exe" /tmp/exe.err ||
	{ echo "profd record (exe) failed:"; cat /tmp/exe.err; exit 1; }
wait $STATS 2>/dev/null || true
echo 0 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null || true
cat /tmp/exe.stats 2>/dev/null || true
emit exe /tmp/exe.pb.gz

# A workload without frame pointers (on arm64 also PAC-signed,
# -mbranch-protection=standard): complete stacks by CFI through its signed
# frames, with the guest kernel's own address size (39 bits on the arm64
# compute-6.12, where the PAC starts at bit 39).
step record --pid nofp_target
$BUILD/tests/nofp_target 600 >/dev/null &
NF=$!
guard 240 "record --pid nofp_target" /tmp/nofp.err \
	"$PROFD" record --pid $NF --seconds 4 -o /tmp/nofp.pb.gz 2>/tmp/nofp.err ||
	{ echo "profd record (nofp) failed:"; cat /tmp/nofp.err; exit 1; }
kill $NF
emit nofp /tmp/nofp.pb.gz

# The whole system, with a process that lives in read(2)/write(2) for
# kernel stacks.
step record whole system
dd if=/dev/zero of=/dev/null bs=512 count=1000000000 2>/dev/null &
DD=$!
guard 240 "record (all)" /tmp/all.err \
	"$PROFD" record --seconds 3 -o /tmp/all.pb.gz 2>/tmp/all.err ||
	{ echo "profd record (all) failed:"; cat /tmp/all.err; exit 1; }
kill $DD
emit all /tmp/all.pb.gz

# By pid, following forks: the pid is a shell that execs the forker, which
# fork+execs 60 short-lived children (20 ms of CPU each) once the profile
# has begun (loading takes seconds in an emulated guest beside pgbench).
# The profile ends when the forker is done (SIGINT).
step record --pid, fork following, short-lived children
rm -f /tmp/fork.go
BUILD=$BUILD sh -c 'while [ ! -e /tmp/fork.go ]; do sleep 0.1; done; exec $BUILD/tests/forker 60' >/dev/null &
F=$!
"$PROFD" record --pid $F --seconds 600 --frequency 299 --labels default,pid \
	-o /tmp/fork.pb.gz 2>/tmp/fork.err &
R=$!
for _ in $(seq 1200); do
	grep -q profiling /tmp/fork.err && break
	kill -0 $R 2>/dev/null || break
	sleep 0.1
done
grep -q profiling /tmp/fork.err || { echo "profd record (fork) did not start:"; cat /tmp/fork.err; exit 1; }
touch /tmp/fork.go
await $F 300 forker /dev/null || { echo "the forker did not end"; exit 1; }
kill -INT $R
await $R 240 "record --pid" /tmp/fork.err || { echo "profd record (fork) failed:"; cat /tmp/fork.err; exit 1; }
emit fork /tmp/fork.pb.gz

# Heap: uprobes on postgres's allocators, without sessions on these kernels.
step record --heap --exe postgres
guard 240 "record --heap" /tmp/heap.err \
	"$PROFD" record --heap --exe postgres --seconds 6 -o /tmp/heap.pb.gz 2>/tmp/heap.err ||
	{ echo "profd record (heap) failed:"; cat /tmp/heap.err; exit 1; }
emit heap /tmp/heap.pb.gz

# Heap probes go in the targets' memory only (tracefs uprobes with perf
# events per target, inherited at fork): with a daemon whose target is
# idle, a non-target's malloc loop leaves the heap program's hit count
# where it was; the target, once woken, moves it, and so does every pair
# of a child it forks.
step heap non-target
cp $BUILD/tests/mallocbench /tmp/nt_target
NTPORT=$((PROFD_VM_PORT + 1))
"$PROFD" serve --listen "127.0.0.1:$NTPORT" --heap --exe /tmp/nt_target 2>/tmp/nontarget.err &
NTS=$!
ntm() { curl -s -m 5 "http://127.0.0.1:$NTPORT/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
for _ in $(seq 600); do
	[ -n "$(ntm profd_heap_probe_hits_total)" ] && break
	kill -0 $NTS 2>/dev/null || break
	sleep 0.5
done
[ "$(ntm profd_heap_per_process_probes)" = 1 ] ||
	{ echo "heap probes are not per process:"; cat /tmp/nontarget.err; exit 1; }
h0=$(ntm profd_heap_probe_hits_total)
$BUILD/tests/mallocbench 1 >/tmp/nt.out
h1=$(ntm profd_heap_probe_hits_total)
[ "$h1" = "$h0" ] ||
	{ echo "a non-target's malloc loop ($(cat /tmp/nt.out)) hit the probes: $h0 -> $h1"; exit 1; }
PAUSE=1 /tmp/nt_target 1 >/tmp/ntt.out &
NTT=$!
for _ in $(seq 600); do
	[ "$(ntm profd_heap_attachments)" = 1 ] && grep -q ready /tmp/ntt.out && break
	sleep 0.5
done
kill -USR1 $NTT
await $NTT 120 nt_target /dev/null || { echo "nt_target did not end"; exit 1; }
h2=$(ntm profd_heap_probe_hits_total)
[ "$h2" -gt "$h1" ] || { echo "the target hit no probe ($(cat /tmp/ntt.out)): $h1 -> $h2"; exit 1; }
PAUSE=1 FORK=1 /tmp/nt_target 1 >/tmp/ntf.out &
NTT=$!
for _ in $(seq 600); do
	[ "$(ntm profd_heap_attachments)" = 1 ] && grep -q ready /tmp/ntf.out && break
	sleep 0.5
done
h3=$(ntm profd_heap_probe_hits_total)
kill -USR1 $NTT
await $NTT 120 "nt_target (fork)" /dev/null || { echo "nt_target (fork) did not end"; exit 1; }
h4=$(ntm profd_heap_probe_hits_total)
# Every pair the child makes is seen: two hits each (awk: the guest's root
# may have no python).
awk -v h="$((h4 - h3))" '{ p = 1e9 / $2; if (h < 1.9 * p) { printf "a target'"'"'s forked child made over %d pairs, %d hits\n", p, h; exit 1 } }' \
	<(tail -1 /tmp/ntf.out) || exit 1
echo "heap non-target: $(cat /tmp/nt.out) with no probe hit; the target ($(cat /tmp/ntt.out)) $((h2 - h1)) hits; its forked child ($(tail -1 /tmp/ntf.out)) $((h4 - h3)) hits"
kill -TERM $NTS
await $NTS 60 "serve (non-target)" /tmp/nontarget.err || { cat /tmp/nontarget.err; exit 1; }

# The daemon, for the host: a scrape, the compute API and a heap profile.
# It is done when its own counters show all three answered.
step serve
"$PROFD" serve --listen "0.0.0.0:$PROFD_VM_PORT" --heap --exe postgres 2>/tmp/serve.err &
S=$!
done=""
for _ in $(seq 600); do
	m=$(curl -s -m 5 "http://127.0.0.1:$PROFD_VM_PORT/metrics" || true)
	if grep -q 'route="/debug/pprof/profile",code="200"' <<<"$m" &&
	   grep -q 'route="/profile/cpu",code="200"' <<<"$m" &&
	   grep -q 'route="/debug/pprof/heap",code="200"' <<<"$m"; then
		done=1
		break
	fi
	kill -0 $S 2>/dev/null || break
	sleep 0.5
done
# Not all answered while it runs: show what each of its threads (the
# loop's, the builder's) is doing, for the host's log.
if [ -z "$done" ] && kill -0 $S 2>/dev/null; then
	stuck $S "serve (the host's requests not all answered)" /tmp/serve.err
fi
kill -TERM $S 2>/dev/null || true
rc=0
await $S 60 "serve after SIGTERM" /tmp/serve.err || rc=$?
[ $rc -eq 0 ] || { echo "profd serve exited $rc"; cat /tmp/serve.err; exit 1; }
for f in exe all fork heap nontarget serve; do
	echo "=== LOG $f"
	cat /tmp/$f.err
done
[ -n "$done" ] || { echo "the host's requests never all came"; exit 1; }
step done
