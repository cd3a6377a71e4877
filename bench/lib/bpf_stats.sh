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

# bpf_prog_stat_of PID TYPE: "run_time_ns run_cnt" summed over the programs
# of that type (5: tracepoint, 7: perf_event) which process PID holds, each
# once: that process's, not the newest on the machine.  Its fds come and go
# while read: cat skips the gone ones; each fdinfo starts with pos:.
bpf_prog_stat_of() {
	{ cat /proc/$1/fdinfo/* 2>/dev/null || true; } |
		awk -v want="$2" '/^pos:/ {t = ""} /^prog_type:/ {t = $2} /^prog_id:/ {id = $2}
		     /^run_time_ns:/ {ns = $2}
		     /^run_cnt:/ && t == want && !seen[id]++ {N += ns; C += $2}
		     END {printf "%.0f %.0f\n", N, C}'
}

# offcpu_stats_of PID: "run_time_ns run_cnt switches kept" of the
# profd_offcpu program and offcpu_stats map that profd process PID holds
# (its fds' fdinfo), then "run_time_ns run_cnt" of its profd_sample (the
# cpu-clock program); not the newest on the machine: other profd may be
# running (tests, other benchmarks) and load theirs later.
offcpu_stats_of() {
	python3 - "$1" <<'PY'
import glob, json, subprocess, sys
pid = sys.argv[1]
progs, maps = set(), set()
for f in glob.glob(f"/proc/{pid}/fdinfo/*"):
    try:
        text = open(f).read()
    except OSError:
        continue
    for line in text.splitlines():
        k, _, v = line.partition(":")
        if k == "prog_id":
            progs.add(int(v))
        elif k == "map_id":
            maps.add(int(v))
show = lambda what: json.loads(subprocess.check_output(["bpftool", what, "show", "-j"]))
ps = show("prog")
prog = next((p for p in ps if p["id"] in progs and p.get("name") == "profd_offcpu"), {})
samp = next((p for p in ps if p["id"] in progs and p.get("name") == "profd_sample"), {})
m = next((m for m in show("map") if m["id"] in maps and m.get("name") == "offcpu_stats"), None)
v = [0, 0]
if m:
    d = json.loads(subprocess.check_output(["bpftool", "map", "dump", "id", str(m["id"])]))
    v = [sum(c["value"] for c in e["values"]) for e in d]
print(prog.get("run_time_ns", 0), prog.get("run_cnt", 0), v[0], v[1],
      samp.get("run_time_ns", 0), samp.get("run_cnt", 0))
PY
}
