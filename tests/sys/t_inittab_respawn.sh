#!/bin/bash
# profd without systemd (issue 20, item 4): packaging/profd.inittab's respawn
# entry, run as written (only the binary's and the config's paths replaced
# by the test's) under a minimal supervisor that respawns it as busybox init
# does (`/bin/sh -c "exec COMMAND"` again whenever it exits).  The daemon
# runs with exactly systemd/profd.service's capability bounding set and no
# new privileges; after `kill -9` it is respawned, answers /health, and
# serves a CPU profile with a workload's samples again.  The config is
# packaging/config.example.json (its "listen" moved to a free port).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"
command -v setpriv >/dev/null || { echo "skip: no setpriv (util-linux)"; exit 77; }
ROOT=$(cd "$TESTS/.." && pwd)
INITTAB=$ROOT/packaging/profd.inittab
UNIT=$ROOT/systemd/profd.service
BIN=/usr/local/bin/profd
CONF=/etc/profd/config.json

# The one entry: id:runlevels:action:process, action respawn.
entry=$(grep -v '^[[:space:]]*#' "$INITTAB" | grep -v '^[[:space:]]*$')
[ "$(printf '%s\n' "$entry" | wc -l)" = 1 ] || fail "packaging/profd.inittab has not one entry: $entry"
IFS=: read -r id runlevels action cmd <<<"$entry"
[ "$action" = respawn ] || fail "the entry's action is '$action', not respawn"
[[ "$cmd" == *" $BIN serve --config $CONF" ]] || fail "the entry does not run '$BIN serve --config $CONF': $cmd"
# Its capabilities are the unit's, no more and no fewer; CAP_BPF and
# CAP_PERFMON by number, as the kernel's header has them (bullseye's setpriv
# has no names for them: t_dist_roots runs the entry there).
unit_caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
entry_caps=$unit_caps
for c in bpf perfmon; do
	n=$(awk -v c="CAP_$(echo $c | tr a-z A-Z)" '$1 == "#define" && $2 == c {print $3}' /usr/include/linux/capability.h)
	[ -n "$n" ] || fail "no CAP_$c in linux/capability.h"
	entry_caps=${entry_caps/+$c,/+cap_$n,}
done
[[ "$cmd" == *"--bounding-set=-all,$entry_caps "* ]] ||
	fail "the entry's bounding set is not the unit's (-all,$entry_caps): $cmd"
[[ "$cmd" == *" --no-new-privs "* ]] || fail "the entry lacks --no-new-privs"

# Init systems mount tracefs at boot; without CAP_SYS_ADMIN profd can't.
[ -d /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing

port=$(free_port 17980)
python3 - "$ROOT/packaging/config.example.json" "$WORK/config.json" "$port" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["listen"] = "127.0.0.1:" + sys.argv[3]
json.dump(c, open(sys.argv[2], "w"))
PY
cmd=${cmd/" $BIN "/" $PROFD "}
cmd=${cmd/" --config $CONF"/" --config $WORK/config.json"}
BASE=http://127.0.0.1:$port

# The supervisor: busybox init's respawn, with a count of starts and each
# daemon's pid (sh execs the command, so $! is the daemon).
supervise() {
	while [ ! -e "$WORK/stop" ]; do
		/bin/sh -c "exec $cmd" 2>>"$WORK/serve.err" &
		echo $! >>"$WORK/pids"
		wait $! || true
	done
}
# (The shell's own "Killed" notice goes to supervisor.err.)
supervise 2>>"$WORK/supervisor.err" &
SUPERVISOR=$!
PIDS_TO_KILL+=("$SUPERVISOR")

# wait_daemon N: the N-th start answers /health; prints its pid.
wait_daemon() {
	local pid
	for _ in $(seq 300); do
		pid=$(sed -n "${1}p" "$WORK/pids" 2>/dev/null)
		if [ -n "$pid" ] && curl -sf -m 1 -o "$WORK/health.body" "$BASE/health"; then
			[ "$(sed -n "${1}p" "$WORK/pids")" = "$pid" ] && { echo "$pid"; return 0; }
		fi
		sleep 0.1
	done
	fail "start $1 of the inittab entry did not answer /health in 30 s"
}

# The unit's capabilities as a mask, from the kernel's own header, less
# those this test's own bounding set lacks (a container may withhold some,
# as this VM withholds CAP_SYS_RESOURCE): nobody can grant what it has not.
want_mask=$(python3 - "$unit_caps" <<'PY'
import re, sys
bits = dict(re.findall(r"#define\s+CAP_(\w+)\s+(\d+)\b", open("/usr/include/linux/capability.h").read()))
m = 0
for c in sys.argv[1].split(","):
    m |= 1 << int(bits[c[1:].upper()])
own = int(re.search(r"^CapBnd:\s*(\w+)", open("/proc/self/status").read(), re.M).group(1), 16)
print(f"{m & own:016x}")
PY
)
check_daemon() { # PID WHAT
	[ "$(readlink "/proc/$1/exe")" = "$(readlink -f "$PROFD")" ] || fail "$2: pid $1 is not profd"
	local bnd eff nnp
	bnd=$(awk '/^CapBnd:/ {print $2}' "/proc/$1/status")
	eff=$(awk '/^CapEff:/ {print $2}' "/proc/$1/status")
	nnp=$(awk '/^NoNewPrivs:/ {print $2}' "/proc/$1/status")
	[ "$bnd" = "$want_mask" ] && [ "$eff" = "$want_mask" ] ||
		fail "$2: CapBnd $bnd, CapEff $eff, want the unit's $want_mask"
	[ "$nnp" = 1 ] || fail "$2: NoNewPrivs is $nnp"
}

"$BUILD/tests/inline_target" 120 >/dev/null &
W=$!
PIDS_TO_KILL+=("$W")
# A profile with the workload's samples, hot_a among them.
profile_ok() { # WHAT
	call "prof$1" GET "/debug/pprof/profile?seconds=2&labels=pid"
	expect_code "prof$1" 200 "$1: profile"
	python3 - "$WORK/prof$1.body" "$W" <<'PY' || fail "$1: no samples of the workload"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
mine = [s for s in p.samples if s["labels"].get("pid") == sys.argv[2]]
assert mine and any("hot_a" in p.frames(s) for s in mine), f"{len(p.samples)} samples, {len(mine)} of pid {sys.argv[2]}"
print(sum(s["values"][0] for s in mine))
PY
}

first=$(wait_daemon 1)
check_daemon "$first" "first start"
n1=$(profile_ok first)
pass "the inittab entry runs profd (pid $first) with the unit's capabilities ($want_mask) and no new privileges; $n1 samples of the workload"

kill -KILL "$first"
second=$(wait_daemon 2)
[ "$second" != "$first" ] || fail "no respawn"
check_daemon "$second" "respawned"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["status"] == "ok"' "$WORK/health.body" ||
	fail "/health after the respawn: $(cat "$WORK/health.body")"
n2=$(profile_ok respawned)
pass "kill -9: respawned (pid $second), /health ok, a profile with $n2 samples of the workload served again"

# A clean stop: SIGTERM ends it with 0, and the supervisor stops respawning.
touch "$WORK/stop"
kill -TERM "$second"
for _ in $(seq 100); do kill -0 "$SUPERVISOR" 2>/dev/null || break; sleep 0.1; done
kill -0 "$SUPERVISOR" 2>/dev/null && fail "the supervisor still runs after SIGTERM and stop"
[ "$(wc -l <"$WORK/pids")" = 2 ] || fail "started $(wc -l <"$WORK/pids") times, want 2"
grep -q "Terminated: shutting down" "$WORK/serve.err" || fail "no clean shutdown logged"
pass "SIGTERM: a clean stop, 2 starts in all"
