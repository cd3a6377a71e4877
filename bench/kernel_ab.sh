#!/bin/bash
# Kernel time per sample of two profd builds, interleaved: the cost of a
# change to the BPF side, measured as a ratio on a shared, noisy machine.
#   OLD=/path/to/old/profd NEW=build/profd W=inline_target bash bench/kernel_ab.sh
# Two copies of build/tests/$W keep both CPUs busy; each round runs
# `profd record --exe $W` at 999 Hz with one binary, then the other, and
# reads run_time_ns / run_cnt of that profd's profd_sample program
# (kernel.bpf_stats_enabled=1) over 4 s in the middle of its 8 s.  Targets
# by --exe so that other processes on the machine (and whether they have
# frame pointers) do not enter the figure; the program is read from the
# fdinfo of that profd, as other profilers may be running.  Prints one line per run, then
# the medians and their ratio.  Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OLD:?OLD=path of the profd to compare against}"
NEW=${NEW:-build/profd} W=${W:-inline_target} ROUNDS=${ROUNDS:-5}
. bench/lib/bpf_stats.sh
sysctl -qw kernel.bpf_stats_enabled=1
./build/tests/$W 900 >/dev/null & A=$!
./build/tests/$W 900 >/dev/null & B=$!
rows=$(mktemp)
trap 'kill $A $B 2>/dev/null; rm -f $rows $rows.pb.gz $rows.err' EXIT
measure() { # LABEL BINARY
	local a b p
	rm -f "$rows.pb.gz"
	"$2" record --seconds 8 --frequency 999 --exe "$W" -o "$rows.pb.gz" 2>"$rows.err" &
	p=$!
	for _ in $(seq 100); do
		[ "$(bpf_prog_stat_of $p 7 | cut -d' ' -f2)" -gt 0 ] && break
		sleep 0.1
	done
	sleep 1
	a=$(bpf_prog_stat_of $p 7); sleep 4; b=$(bpf_prog_stat_of $p 7)
	wait $p || { echo "$1: profd record failed: $(tail -3 "$rows.err")" >&2; return 0; }
	echo "$1 $a $b" >>$rows
	echo "$1 $a $b" | awk '{ printf "%s: %.0f ns per run (%d runs)\n", $1, ($4-$2)/($5-$3), $5-$3 }'
}
for _ in $(seq "$ROUNDS"); do
	measure old "$OLD"
	measure new "$NEW"
done
python3 - "$rows" <<'PY'
import statistics, sys
ns = {"old": [], "new": []}
for line in open(sys.argv[1]):
    k, t0, c0, t1, c1 = line.split()
    ns[k].append((int(t1) - int(t0)) / max(1, int(c1) - int(c0)))
o, n = statistics.median(ns["old"]), statistics.median(ns["new"])
ratios = sorted(b / a for a, b in zip(ns["old"], ns["new"]))
print(f"median old {o:.0f} ns, new {n:.0f} ns, new/old {n / o:.2f} "
      f"(per-round ratios {ratios[0]:.2f}-{ratios[-1]:.2f})")
PY
