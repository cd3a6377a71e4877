#!/bin/bash
# Kernel time per run of the process tracepoint programs (fork, exec, exit,
# exit_group, task free) of two profd builds, interleaved: what a process
# costs the kernel while a whole-system profile runs, as the fleet's daemon
# does between Alloy's scrapes.
#   OLD=/path/to/old/profd NEW=build/profd bash bench/tracepoint_ab.sh
# Each round runs `profd record` of the whole system at FREQ Hz (19) with
# one binary, then the other; while it records, FORKS forks of a shell
# that exit at once, EXECS fork+execs of /bin/true and SPINS (0) forks
# that count to 3000 first (~10 ms: at FREQ=999 most are sampled before
# they exit, so their exits are those of processes the daemon knows).  Then it reads
# run_time_ns / run_cnt of that profd's tracepoint programs from its
# fdinfo (kernel.bpf_stats_enabled=1; program names from bpftool).  A round
# whose record ended before the churn did is dropped, not counted.
# Prints one line per program per run, then the medians per program.
# Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OLD:?OLD=path of the profd to compare against}"
NEW=${NEW:-build/profd} ROUNDS=${ROUNDS:-3} FORKS=${FORKS:-2000} EXECS=${EXECS:-1000}
SPINS=${SPINS:-0} FREQ=${FREQ:-19}
sysctl -qw kernel.bpf_stats_enabled=1
rows=$(mktemp)
trap 'rm -f $rows $rows.pb.gz $rows.err' EXIT

prog_ids() { # PID -> the ids of its BPF programs
	{ cat /proc/$1/fdinfo/* 2>/dev/null || true; } | awk '/^prog_id:/ && !seen[$2]++ {print $2}'
}
stats() { # PID -> "name run_time_ns run_cnt" per tracepoint program
	local id
	for id in $(prog_ids "$1"); do
		bpftool prog show id "$id" --json 2>/dev/null
		echo
	done | python3 -c '
import json, sys
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    p = json.loads(line)
    if p.get("type") == "tracepoint":
        print(p["name"], p.get("run_time_ns", 0), p.get("run_cnt", 0))
'
}
churn() {
	local i
	for ((i = 0; i < FORKS; i++)); do (:); done
	for ((i = 0; i < EXECS; i++)); do /bin/true; done
	for ((i = 0; i < SPINS; i++)); do (j=0; while [ $j -lt 3000 ]; do j=$((j + 1)); done); done
}
measure() { # LABEL BINARY
	local p
	"$2" record --seconds 600 --frequency "$FREQ" -o "$rows.pb.gz" 2>"$rows.err" &
	p=$!
	for _ in $(seq 200); do
		grep -q "profiling the whole system" "$rows.err" && break
		sleep 0.1
	done
	churn
	if ! kill -0 $p 2>/dev/null; then
		echo "$1: profd record ended before the churn did: $(tail -3 "$rows.err")" >&2
		return 0
	fi
	stats $p | sed "s/^/$1 /" | tee -a "$rows" |
		awk '$4 > 0 { printf "%s %-18s %7.0f ns per run (%d runs)\n", $1, $2, $3 / $4, $4 }'
	kill -INT $p
	wait $p || true
}
for _ in $(seq "$ROUNDS"); do
	measure old "$OLD"
	measure new "$NEW"
done
python3 - "$rows" <<'PY'
import collections, statistics, sys
ns = collections.defaultdict(list)
for line in open(sys.argv[1]):
    k, name, t, c = line.split()
    if int(c):
        ns[(name, k)].append(int(t) / int(c))
for name in sorted({n for n, _ in ns}):
    o, n = ns.get((name, "old"), []), ns.get((name, "new"), [])
    if o and n:
        print(f"{name}: median old {statistics.median(o) / 1000:.2f} us "
              f"({min(o) / 1000:.2f}-{max(o) / 1000:.2f}), new {statistics.median(n) / 1000:.2f} us "
              f"({min(n) / 1000:.2f}-{max(n) / 1000:.2f})")
PY
