# Sourced by the benchmarks that read what a BPF program costs in the kernel
# from kernel.bpf_stats_enabled's counters, run_time_ns / run_cnt (after
# tests/lib/common.sh, whose cleanup_common it runs at exit).

# bpf_stats_on: turn the counters on, and back to what they were when the
# script exits, its background jobs killed.
bpf_stats_on() {
	BPF_STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
	trap 'kill $(jobs -p) 2>/dev/null || true; sysctl -qw kernel.bpf_stats_enabled=$BPF_STATS_OLD; cleanup_common' EXIT
	sysctl -qw kernel.bpf_stats_enabled=1
}

# prog_stats NAME [TYPE]: "run_time_ns run_cnt" of the newest program whose
# name matches NAME (a Python regex), of type TYPE if given: other
# profilers' programs, and older profd's, don't count.
prog_stats() {
	bpftool prog show -j | python3 -c '
import json, re, sys
name, kind = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None
progs = [p for p in json.load(sys.stdin)
         if re.fullmatch(name, p.get("name", "")) and kind in (None, p.get("type"))]
p = max(progs, key=lambda p: p["id"], default={})
print(p.get("run_time_ns", 0), p.get("run_cnt", 0))' "$@"
}
