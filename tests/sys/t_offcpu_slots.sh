#!/bin/bash
# Off-CPU thread slots (bpf/abi/offcpu.h): each thread's state lives in
# one of the two slots of its tid's set, the tid modulo the sets, sized
# from pid_max up to 131072 slots.  With pid_max above that (systemd sets
# 4194304) tids 65536 apart share a set:
#  1. two offcpu_target processes whose threads' tids are 65536 apart fill
#     their sets, and each is measured within 10% (t_offcpu's bounds),
#     nothing lost;
#  2. with a third 65536 further on, the three take their shared slots
#     from each other: a wait in progress whose slot another thread took
#     is lost and counted ("its thread's slot taken" in the profile's
#     comments), never given to the thread that took it (each function
#     has at most the time it timed itself); and a fourth offcpu_target,
#     whose tids share no set with a target's, is measured within 10% by
#     the same daemon meanwhile.
# The tids are placed by writing the pid counter (ns_last_pid); pid_max is
# raised for the test and put back after it.
. "$(dirname "$0")/../lib/common.sh"
need_root
[ -w /proc/sys/kernel/ns_last_pid ] || { echo "skip: no writable ns_last_pid"; exit 77; }

TARGET=$BUILD/tests/offcpu_target
OLD_PID_MAX=$(cat /proc/sys/kernel/pid_max)
restore() { echo "$OLD_PID_MAX" >/proc/sys/kernel/pid_max; cleanup_common; }
trap restore EXIT
echo 4194304 >/proc/sys/kernel/pid_max

# launch NAME FIRST_PID SECONDS: an offcpu_target whose pid (and so its
# threads' tids, which follow) starts at FIRST_PID if nothing else forks
# meanwhile; its pid in NAME_PID.  Returns once its 6 threads (the
# waiters, the pipe's writer and main) run, having forked nothing
# meanwhile (a glob, not ls): its threads' tids follow its pid.
launch() {
	local t
	echo $(($2 - 1)) >/proc/sys/kernel/ns_last_pid
	"$TARGET" "$3" >"$WORK/$1.truth" &
	eval "${1}_PID=\$!"
	for _ in $(seq 1000000); do
		t=(/proc/$!/task/*)
		[ ${#t[@]} -ge 6 ] && return 0
	done
	fail "$1 did not start its threads"
}
# sets PID: its threads' sets.
sets() {
	local t
	for t in /proc/$1/task/[0-9]*; do
		[ -e "$t" ] && echo $((${t##*/} & 65535))
	done | sort -n
}
# follow NAME OF N SECONDS: launch NAME N * 65536 tids after OF's pid, so
# that its threads share OF's sets; again a little further on if another
# process forked between (its threads must share at least 4 of them).
follow() {
	local of=$2 try shared
	eval "local of_pid=\$${of}_PID"
	for try in 0 1 2; do
		launch "$1" $((of_pid + $3 * 65536 + try * 7 * 65536)) "$4"
		eval "local pid=\$${1}_PID"
		shared=$(comm -12 <(sets "$of_pid") <(sets "$pid") | wc -l)
		[ "$shared" -ge 4 ] && return 0
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	done
	fail "could not place $1's threads in $of's sets"
}
# times PROFILE CHECK NAME...: each NAME's functions' off-CPU time against
# what it timed; CHECK "within": within 10%; "at_most": at most 10% over.
times() {
	local prof=$1 check=$2
	shift 2
	local args=()
	for n in "$@"; do eval "args+=($n \$${n}_PID)"; done
	python3 - "$prof" "$WORK" "$check" "${args[@]}" <<'PY' || fail "off-CPU times by process"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
work, check, rest = sys.argv[2], sys.argv[3], sys.argv[4:]
for name, pid in zip(rest[::2], rest[1::2]):
    truth = {}
    for line in open(f"{work}/{name}.truth"):
        f = line.split()
        if len(f) == 2:
            truth[f[0]] = int(f[1])
    mine = [s for s in p.samples if s["labels"].get("pid") == pid]
    for fn in ("sleep_in_nanosleep", "block_in_pipe_read", "block_in_futex_wait", "short_naps"):
        got, want = sum(s["values"][1] for s in mine if fn in p.frames(s)), truth[fn]
        err = 100.0 * (got - want) / want
        print(f"{name} {fn}: {got / 1e9:.3f} s in the profile, {want / 1e9:.3f} s timed ({err:+.1f}%)")
        if check == "within":
            assert abs(err) <= 10, f"{name}'s {fn}: {err:+.1f}% off the truth"
        else:
            # Lost waits only take time away: none is another thread's.
            assert err <= 10, f"{name}'s {fn}: {err:+.1f}%, more than it waited"
PY
}
# lost PROFILE CAUSE: switches the profile's comment says were lost to
# CAUSE ("its thread's slot taken", "stack lost before its time").
lost() {
	python3 - "$1" "$2" <<'PY'
import re, sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
c = [c for c in p.comments if "lost switches" in c]
assert c, p.comments
print(re.search(re.escape(sys.argv[2]) + r": (\d+)", c[0]).group(1))
PY
}

# The daemon sizes the table as it loads: 131072 slots for this pid_max.
BASE=$((1000000 + RANDOM * 16))

# 1. Two threads a set: each its own slot.
start_record --off-cpu --off-cpu-period-us 400 --seconds 600 --exe offcpu_target \
	--labels default,pid -o "$WORK/two.pb.gz"
launch A $BASE 4
follow B A 1 4
wait $A_PID $B_PID
stop_record
grep "wrote" "$WORK/record.err"
for cause in "its thread's slot taken" "stack lost before its time"; do
	n=$(lost "$WORK/two.pb.gz" "$cause") || fail "no lost switches in the profile's comments"
	[ "$n" = 0 ] || fail "$n waits lost ($cause) with two threads a set"
done
times "$WORK/two.pb.gz" within A B
pass "off-CPU slots: two processes whose tids share sets, each within 10%, nothing lost"

# 2. Three threads a set, and one elsewhere.
start_record --off-cpu --off-cpu-period-us 400 --seconds 600 --exe offcpu_target \
	--labels default,pid -o "$WORK/three.pb.gz"
launch A $((BASE + 100)) 5
follow B A 1 4
follow D A 2 4
launch C $((A_PID + 30000)) 4
[ -z "$(comm -12 <(sets $A_PID) <(sets $C_PID))" ] || fail "C shares A's sets"
wait $A_PID $B_PID $C_PID $D_PID
stop_record
grep "wrote" "$WORK/record.err"
n=$(lost "$WORK/three.pb.gz" "its thread's slot taken") || fail "no lost switches in the profile's comments"
echo "$n waits lost with their slots"
[ "$n" -gt 0 ] || fail "no wait lost to a shared slot: $(grep wrote "$WORK/record.err")"
times "$WORK/three.pb.gz" at_most A B D
times "$WORK/three.pb.gz" within C
pass "off-CPU slots: three processes a set lose waits, counted, none misattributed; one with its own sets within 10%"
