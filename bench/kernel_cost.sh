#!/bin/bash
# Per-sample kernel cost of profd's perf_event program, next to bpftrace's
# in-kernel-aggregating equivalent, measured the same way in the same run:
# kernel.bpf_stats_enabled, run_time_ns / run_cnt.  Also profd's own CPU
# time and peak RSS while recording.  Run as root: bash bench/kernel_cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECS:-10} FREQ=${FREQ:-999} ROUNDS=${ROUNDS:-3}
OUT=${OUT:-/dev/stdout}
. tests/lib/common.sh
. bench/lib/bpf_stats.sh
bpf_stats_on

# Two busy processes: both CPUs sample user and kernel stacks.
./build/tests/inline_target $((ROUNDS * (SECS + 5) * 3)) >/dev/null &
W1=$!
./build/tests/inline_target $((ROUNDS * (SECS + 5) * 3)) >/dev/null &
W2=$!

results=()
for r in $(seq $ROUNDS); do
	# profd: the whole system, user + kernel stacks, as a scrape would.
	/usr/bin/time -f "%e %U %S %M" -o $WORK/time \
		./build/profd record --seconds $SECS --frequency $FREQ -o $WORK/p.pb.gz 2>$WORK/err &
	P=$!
	sleep $((SECS - 1))
	# This profd's own program (its fds), not the newest on the machine:
	# a test's or another benchmark's daemon may have loaded one since.
	read -r _ _ _ _ ns cnt < <(offcpu_stats_of "$(pgrep -P $P -x profd)")
	wait $P
	read -r wall utime stime rss < $WORK/time
	profd_ns=$(python3 -c "print(f'{$ns / max($cnt, 1):.0f}')")

	# bpftrace: the issue's reference program, aggregating in the kernel.
	bpftrace -e "profile:hz:$FREQ { @[ustack, kstack, comm] = count(); }" >/dev/null 2>$WORK/bt.err &
	B=$!
	sleep $SECS
	# bpftrace 0.17 names a profile probe's program after its frequency.
	read -r bns bcnt < <(prog_stats "$FREQ" perf_event)
	stop_bpftrace $B
	bt_ns=$(python3 -c "print(f'{$bns / max($bcnt, 1):.0f}')")
	echo "round $r: profd ${profd_ns} ns/sample ($cnt samples), bpftrace ${bt_ns} ns/sample ($bcnt), profd cpu $(python3 -c "print(f'{$utime + $stime:.2f}')") s over ${wall} s, peak RSS $((rss / 1024)) MiB" >&2
	results+=("$profd_ns $bt_ns $utime $stime $wall $rss")
done
printf '%s\n' "${results[@]}" | python3 -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin]
med = lambda i: statistics.median(r[i] for r in rows)
print(f"profd_ns_per_sample={med(0):.0f} bpftrace_ns_per_sample={med(1):.0f} "
      f"profd_cpu_pct={(100 * (med(2) + med(3)) / med(4)):.2f} profd_peak_rss_mib={med(5) / 1024:.1f}")' > $OUT
