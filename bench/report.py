#!/usr/bin/env python3
"""Turn make bench's raw outputs into results.json and the summary table of
docs/benchmarks.md.  usage: report.py OUTDIR COMMIT [--quick] [--only PART,...]
--only: the parts that ran (overhead, kernel_cost, continuous, heap,
kernel_cost_vm, soak, stacks, compute, kernel_pieces, offcpu); the others keep their figures in results.json."""
import json
import re
import statistics
import sys
import time

out, commit = sys.argv[1], sys.argv[2]
quick = "--quick" in sys.argv
ALL = ["overhead", "kernel_cost", "continuous", "heap", "kernel_cost_vm", "soak", "stacks", "compute",
       "kernel_pieces", "offcpu", "syscalls", "heap_preload"]
only = set(sys.argv[sys.argv.index("--only") + 1].split(",")) if "--only" in sys.argv else set(ALL)
# The summary table needs all four; without them it stays as it was.
summary_ran = {"overhead", "kernel_cost", "continuous", "heap"} <= only
med = statistics.median
dest = f"{out}/results.json" if quick else "bench/results.json"


def vm_accel(vm):
    """The accelerator bench/kernel_cost_vm.sh's guests ran under."""
    return "kvm" if vm.get("accel_kvm") else "tcg"


def vm_ns(vm, name):
    return vm.get(f"{name}_{vm_accel(vm)}_ns", 0)


def kv(path):
    d = {}
    for line in open(path):
        for k, v in re.findall(r"(\w+)=([-\d.,]+)", line):
            d[k] = [float(x) for x in v.split(",")] if "," in v else float(v)
    return d


# The parts that did not run keep the figures of their last run.
try:
    res = json.load(open(dest))
except (FileNotFoundError, ValueError):
    res = {"commit": None, "date": None}
if summary_ran:
    res.update(commit=commit, date=time.strftime("%Y-%m-%d"))
res["quick"] = quick
if "overhead" in only:
    runs = [json.loads(l) for l in open(f"{out}/overhead.jsonl") if l.strip()]
    res["overhead"] = {}
    for w in ("cpu", "pgbench"):
        base = {r["round"]: r["throughput"] for r in runs if r["workload"] == w and r["variant"] == "none"}
        for v in ("profd19", "profd99", "perf", "bpftrace"):
            rs = [r for r in runs if r["workload"] == w and r["variant"] == v]
            ratios = [r["throughput"] / base[r["round"]] for r in rs if base.get(r["round"])]
            acct = [100.0 * (r["bpf_run_ns"] + r["profiler_cpu_ns"]) / r["workload_cpu_ns"]
                    for r in rs if r["workload_cpu_ns"] > 0]
            per = [r["bpf_run_ns"] / r["bpf_runs"] for r in rs if r["bpf_runs"]]
            res["overhead"][f"{w}/{v}"] = {
                "throughput_ratio_median": med(ratios) if ratios else None,
                "throughput_ratios": ratios,
                "accounting_pct_median": med(acct) if acct else None,
                "accounting_pcts": acct,
                "bpf_ns_per_run_median": med(per) if per else None,
            }
if "kernel_cost" in only:
    res["kernel_cost"] = kv(f"{out}/kernel_cost.txt")
    # Its own commit: it runs alone too (BENCH_ONLY), later than the summary.
    res["kernel_cost"].update(commit=commit, date=time.strftime("%Y-%m-%d"))
if "continuous" in only:
    cont = json.load(open(f"{out}/continuous.json"))
    rss = cont["rss_kib"][2:] or cont["rss_kib"]
    res["continuous"] = {
        "scrapes": cont["scrapes"], "seconds": cont["seconds"],
        "steady_rss_mib": med(rss) / 1024, "peak_rss_mib": cont["peak_rss_kib"] / 1024,
        "steady_rss_anon_mib": med(cont.get("rss_anon_kib", [0])[2:] or cont.get("rss_anon_kib", [0])) / 1024,
        "peak_rss_anon_mib": max(cont.get("rss_anon_kib", [0])) / 1024,
        "build_ms_cold": cont["build_ms"][0] if cont["build_ms"] else None,
        "build_ms_warm_median": med(cont["build_ms"][1:]) if len(cont["build_ms"]) > 1 else None,
        "encode_ms_median": med(cont["encode_ms"]) if cont["encode_ms"] else None,
        "samples": cont["samples"],
    }
if "heap" in only:
    res["heap"] = kv(f"{out}/heap.txt")
if "kernel_cost_vm" in only:
    try:
        res["kernel_cost_vm"] = kv(f"{out}/kernel_cost_vm.txt")
        res["kernel_cost_vm"].update(commit=commit, date=time.strftime("%Y-%m-%d"))
    except FileNotFoundError:
        res["kernel_cost_vm"] = {}

if "soak" in only:
    res["soak"] = json.load(open(f"{out}/soak.json"))
    res["soak"].update(commit=commit, date=time.strftime("%Y-%m-%d"))
if "stacks" in only:
    res["stacks"] = {"commit": commit, "date": time.strftime("%Y-%m-%d"),
                     "workloads": json.load(open(f"{out}/stacks.json"))}
if "compute" in only:
    rows = [json.loads(l) for l in open(f"{out}/compute.jsonl") if l.strip()]
    comp = {"commit": commit, "date": time.strftime("%Y-%m-%d"), "rounds": rows}
    for mode in ("quiet", "churn", "churn_image"):
        rs = [r for r in rows if r["mode"] == mode]
        if not rs:
            continue
        builds = [b for r in rs for b in r["build_ms"]]
        encodes = [e for r in rs for e in r["encode_ms"]]
        comp[mode] = {
            "cpu_pct_median": med([r["cpu_pct"] for r in rs]),
            "cpu_pcts": [r["cpu_pct"] for r in rs],
            "peak_rss_mib_max": max(r["peak_rss_kib"] for r in rs) / 1024,
            "peak_rss_mib_median": med([r["peak_rss_kib"] for r in rs]) / 1024,
            "us_per_sample_median": med([1e6 * r["cpu_s"] / r["samples"] for r in rs if r["samples"]] or [0]),
            "forks_per_s_median": med([r["forks"] / r["wall_s"] for r in rs]),
            "samples_per_scrape_median": med([r["samples"] for r in rs]),
            "build_ms_warm_median": med(builds) if builds else None,
            "encode_ms_median": med(encodes) if encodes else None,
            "stage_cpu_s_median": {k: med([r["stage_cpu_s"].get(k, 0) for r in rs])
                                   for k in rs[0].get("stage_cpu_s", {})},
        }
    for r in rows:
        if r["mode"].endswith("-storm"):
            kind = r["mode"][:-len("-storm")]
            comp[f"us_per_{kind}"] = r[f"us_per_{kind}"]
    res["compute"] = comp

if "kernel_pieces" in only:
    res["kernel_pieces"] = {"commit": commit, "date": time.strftime("%Y-%m-%d"),
                            "workloads": [json.loads(l) for l in open(f"{out}/kernel_pieces.jsonl")
                                          if l.strip()]}

if "offcpu" in only:
    res["offcpu"] = {"commit": commit, "date": time.strftime("%Y-%m-%d"),
                     **kv(f"{out}/offcpu_cost.txt"), **kv(f"{out}/offcpu_tps.txt")}

# What profd costs other processes' syscalls, and the sampled heap mode's
# TPS ratio: figures docs/benchmarks.md quotes by hand, kept here with their
# commit.
if "syscalls" in only:
    res["syscalls"] = {"commit": commit, "date": time.strftime("%Y-%m-%d"),
                       **kv(f"{out}/syscall_cost.txt")}
if "heap_preload" in only:
    res["heap_preload"] = {"commit": commit, "date": time.strftime("%Y-%m-%d"),
                           **kv(f"{out}/heap_preload.txt")}

json.dump(res, open(dest, "w"), indent=1)
print(f"wrote {dest}", file=sys.stderr)
if quick:
    sys.exit(0)


def fmt(x, f="{:.2f}"):
    return "n/a" if x is None else f.format(x)


def spread(xs, f="{:.3f}"):
    return "–".join(f.format(x) for x in (min(xs), max(xs))) if xs else "n/a"


def summary():
    o, k, c, h = res["overhead"], res["kernel_cost"], res["continuous"], res["heap"]
    vm = res.get("kernel_cost_vm", {})
    def goal(ok):
        return "met" if ok else "**missed**"

    rows = [
        ("kernel time per sample, whole system at 999 Hz, user + kernel stacks",
         f"{k.get('profd_ns_per_sample', 0):.0f} ns (bpftrace {k.get('bpftrace_ns_per_sample', 0):.0f} ns, same run)",
         "≤ 1 µs", goal(k.get("profd_ns_per_sample", 1e9) <= 1000)),
        ("kernel time per sample, CPU-bound workload, 99 Hz",
         f"{fmt(o['cpu/profd99']['bpf_ns_per_run_median'], '{:.0f}')} ns (bpftrace {fmt(o['cpu/bpftrace']['bpf_ns_per_run_median'], '{:.0f}')} ns)",
         "≤ 1 µs", goal((o['cpu/profd99']['bpf_ns_per_run_median'] or 1e9) <= 1000)),
        ("kernel time per sample, pgbench -S (deep kernel stacks), 99 Hz",
         f"{fmt(o['pgbench/profd99']['bpf_ns_per_run_median'], '{:.0f}')} ns (bpftrace {fmt(o['pgbench/bpftrace']['bpf_ns_per_run_median'], '{:.0f}')} ns)",
         "≤ 1 µs", goal((o['pgbench/profd99']['bpf_ns_per_run_median'] or 1e9) <= 1000)),
    ]
    if vm.get("interpreted_over_jit"):
        est = k.get("profd_ns_per_sample", 0) * vm["interpreted_over_jit"]
        rows.append(("kernel time per sample, interpreted (no JIT, as on the compute kernel)",
                     f"~{est:.0f} ns: native JIT figure × {vm['interpreted_over_jit']:.2f}, the "
                     f"interpreted/JIT ratio on Debian's 6.1 with its JIT switched off "
                     f"(under {vm_accel(vm).upper()}: {vm_ns(vm, 'debian61_interp'):.0f} vs "
                     f"{vm_ns(vm, 'debian61_jit'):.0f} ns; compute-6.12 "
                     f"{vm_ns(vm, 'compute612_interp'):.0f} ns; the ratio measured at commit "
                     f"{vm.get('commit') or '?'})",
                     "≤ 3 µs", goal(est <= 3000)))
    for hz, lim in (("19", 0.1), ("99", 0.5)):
        for w in ("cpu", "pgbench"):
            a = o[f"{w}/profd{hz}"]["accounting_pct_median"]
            rows.append((f"total profiler CPU at {hz} Hz, {w} (BPF + daemon, % of workload CPU)",
                         f"{fmt(a, '{:.3f}')}% (rounds {spread(o[f'{w}/profd{hz}']['accounting_pcts'])})",
                         f"≤ {lim}%", goal(a is not None and a <= lim)))
    rows += [
        ("daemon RSS while profiling postgres, steady / peak",
         f"{c['steady_rss_mib']:.1f} / {c['peak_rss_mib']:.1f} MiB", "≤ 30 MB",
         goal(c["peak_rss_mib"] * 1.048576 <= 30)),
        ("of which private (RssAnon; the rest is page cache of the ELF files read), steady / peak",
         f"{c['steady_rss_anon_mib']:.1f} / {c['peak_rss_anon_mib']:.1f} MiB", "", ""),
        ("symbolize + encode one 60 s, 19 Hz profile (warm cache; first profile)",
         f"{fmt((c['build_ms_warm_median'] or 0) + (c['encode_ms_median'] or 0), '{:.1f}')} ms CPU; "
         f"{fmt((c['build_ms_cold'] or 0) + (c['encode_ms_median'] or 0), '{:.1f}')} ms", "≤ 20 ms",
         goal((c['build_ms_warm_median'] or 1e9) + (c['encode_ms_median'] or 0) <= 20)),
        ("heap: added cost per malloc+free pair (512 KiB interval)",
         f"{h.get('heap_512k_added_ns_per_pair', 0):.0f} ns (empty uprobe on malloc: {h.get('bt_malloc_entry_added_ns_per_pair', 0):.0f} ns)",
         "≤ 1 µs", goal(h.get("heap_512k_added_ns_per_pair", 1e9) <= 1000)),
        ("heap: added cost per pair without uprobe sessions (uprobe + uretprobe, kernels < 6.12)",
         f"{h.get('heap_512k_uprobe_added_ns_per_pair', 0):.0f} ns", "", ""),
        ("heap: pgbench -S TPS with --heap / without",
         f"{h.get('pgbench_tps_ratio_median', 0):.3f} (uprobe + uretprobe: "
         f"{h.get('pgbench_uprobe_tps_ratio_median', 0):.3f})", "≥ 0.95",
         goal(h.get("pgbench_tps_ratio_median", 0) >= 0.95)),
        ("heap: kernel memory per tracked allocation", f"{h.get('live_map_bytes_per_entry', 0):.0f} bytes", "", ""),
    ]
    lines = [f"Measured at commit {commit} on {res['date']} by `make bench` "
             "(2 vCPUs, shared; medians of interleaved rounds). Raw figures: "
             "[bench/results.json](../bench/results.json).", "",
             "| figure | measured | goal | |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {g} | {m} |" for a, b, g, m in rows]
    lines += ["", "Throughput with each profiler running, as a ratio to no profiler "
              "(median, and the range over rounds):", "",
              "| workload | profd 19 Hz | profd 99 Hz | perf record -F 99 -g | bpftrace profile:hz:99 |",
              "|---|---|---|---|---|"]
    for w, name in (("cpu", "2 × CPU-bound C (inline_target)"), ("pgbench", "pgbench -S, 2 clients")):
        cells = []
        for v in ("profd19", "profd99", "perf", "bpftrace"):
            x = o[f"{w}/{v}"]
            cells.append(f"{fmt(x['throughput_ratio_median'], '{:.3f}')} ({spread(x['throughput_ratios'])})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def pct(x):
    return "n/a" if x is None else f"{100 * x:.1f}%"


def rng(a, key, f):
    r = a.get(key + "_range")
    if not r or r[0] == r[1]:
        return ""
    return f" ({f(r[0])}–{f(r[1])})"


def stacks():
    st = res["stacks"]
    W = st["workloads"]
    names = {"nofp": "nofp_target (no frame pointers)", "qsort": "qsort_target (comparator under libc's qsort)",
             "python": "python3 CPU loop", "pg_S": "postgres, pgbench -S", "pg_C": "postgres, pgbench -C -S"}
    runs = [x for w in W.values() for a in w.values() if isinstance(a, dict) for x in a["rounds"]]
    nround = max((x["round"] for x in runs), default=0)
    secs = next((x["seconds"] for x in runs if x.get("seconds")), None)
    us = lambda x: f"{x / 1000:.1f} µs"
    p2 = lambda x: f"{x:.2f}%"
    p1 = lambda x: f"{x:.1f}%"
    lines = [f"Measured at commit {st['commit']} on {st['date']} by `bench/stacks.sh` "
             f"(`BENCH_ONLY=stacks make bench`): {nround} round{'s' if nround != 1 else ''} of "
             f"{secs} s per profiler, 99 Hz, cpu-clock; medians over rounds, the range in brackets. "
             "Raw figures: `stacks` in [bench/results.json](../bench/results.json).", "",
             "| workload | profiler | samples | complete stacks | samples with a caller edge perf never records¹ "
             "| user stack copied a sample | BPF time a sample | CPU while sampling² | CPU, whole run³ |",
             "|---|---|---|---|---|---|---|---|---|"]
    for w, wa in W.items():
        for v, label in (("profd", "profd `--exe`"), ("perf8k", "perf `dwarf` (8 KiB)"),
                         ("perf32k", "perf `dwarf,32768`")):
            a = wa.get(v)
            if not a:
                continue
            samples = fmt(a.get("samples_median"), "{:.0f}")
            comp = pct(a.get("complete_median")) + rng(a, "complete", pct)
            edge = pct(a.get("wrong_edge_median")) + rng(a, "wrong_edge", pct)
            if v == "profd":
                pp, al = wa.get("pprof", {}), wa.get("profd_all", {})
                copied = fmt(pp.get("copied_median"), "{:,.0f} bytes")
                bpf = (us(a["bpf_ns_per_sample_median"]) + rng(a, "bpf_ns_per_sample", us)
                       if a.get("bpf_ns_per_sample_median") is not None else "n/a")
                cpu = (f"{fmt(a.get('daemon_cpu_pct_median'))}%{rng(a, 'daemon_cpu_pct', p2)}; "
                       f"whole system {fmt(al.get('daemon_cpu_pct_median'))}%{rng(al, 'daemon_cpu_pct', p2)}")
                whole = (f"{fmt(a.get('daemon_cpu_total_pct_median'), '{:.1f}')}%; whole system "
                         f"{fmt(al.get('daemon_cpu_total_pct_median'), '{:.1f}')}%")
            else:
                edge = f"*{edge}*"
                copied = f"{a['rounds'][0].get('stack_size', 0):,} bytes (fixed)"
                bpf = cpu = "—"
                whole = (f"perf record {fmt(a.get('record_cpu_pct_median'), '{:.1f}')}%, then perf script "
                         f"{fmt(a.get('script_cpu_s_median'))} s")
            lines.append(f"| {names.get(w, w)} | {label} | {samples} | {comp} | {edge} | {copied} | "
                         f"{bpf} | {cpu} | {whole} |")
    lines += ["",
              "¹ For profd: the share of its samples with an adjacent pair of named user "
              "frames (caller → callee) that no perf run of the same workload recorded. "
              "*In italics*, the same measure for each perf run against the other perf runs: "
              "what sampling alone leaves unseen.  ",
              "² profd's CPU (all its threads, schedstat) from its `profiling` line to the "
              "end of the session, as % of one core; with `--exe`, and recording the whole system "
              "while the same workload runs.  ",
              f"³ CPU over the whole run, as % of the {secs} s profiled: profd from start to exit "
              "(loading the BPF object, sampling, unwinding, symbolizing, writing); perf record, "
              "and perf script's unwinding and symbolizing afterwards, in seconds.", "",
              "The caller edges of profd's samples that no perf run recorded, most frequent first "
              "(samples, all rounds):", ""]
    for w, wa in W.items():
        top = wa.get("profd", {}).get("wrong_edges_top") or []
        lines.append(f"* {names.get(w, w)}: " +
                     (", ".join(f"`{e}` ({n})" for e, n in top[:5]) if top else "none"))
    errs = [f"{w}/{v}: {a['errors']}" for w, wa in W.items() for v, a in wa.items()
            if isinstance(a, dict) and a.get("errors")]
    if errs:
        lines += ["", "Runs that failed (profd exited with an error or hung): " + ", ".join(errs) + "."]
    return "\n".join(lines)


def interpreted():
    vm = res.get("kernel_cost_vm") or {}
    if not vm:
        return "The kernels of tests/vm could not be booted in this run: no figures."
    rows = [("Debian 12's 6.1, JIT on", vm_ns(vm, "debian61_jit")),
            ("Debian 12's 6.1, JIT off (`net.core.bpf_jit_enable=0`)", vm_ns(vm, "debian61_interp")),
            ("6.12 configured like the compute kernel (no JIT at all)", vm_ns(vm, "compute612_interp"))]
    lines = [f"Measured at commit {vm.get('commit', commit)} on {vm.get('date', time.strftime('%Y-%m-%d'))} "
             "by `bench/kernel_cost_vm.sh` "
             "(`BENCH_ONLY=kernel_cost_vm make bench`): `profd record` of the whole system at 999 Hz "
             "beside two busy `inline_target`s, inside each test kernel booted in qemu, medians of 3 "
             "rounds of 10 s, JIT on and off interleaved.", "",
             "| kernel | BPF time a sample, " + ("virtualized CPU (KVM)" if vm_accel(vm) == "kvm"
                                             else "emulated CPU (TCG)") + " |", "|---|---|"]
    lines += [f"| {k} | {v:.0f} ns |" for k, v in rows if v]
    r = vm.get("interpreted_over_jit")
    if r:
        kc = res.get("kernel_cost") or {}
        native = kc.get("profd_ns_per_sample")
        lines += ["", f"Interpreted / JIT on the same kernel: **{r:.2f}x**. " +
                  ("Under KVM the guest's CPU is the host's, virtualized; the ratio is "
                   if vm_accel(vm) == "kvm" else
                   "Every instruction is emulated under TCG, so the absolute figures are an "
                   "emulated CPU's; the ratio is ") +
                  "what carries over to real hardware" +
                  (f": applied to the native whole-system figure of the last `kernel_cost` run "
                   f"({native:.0f} ns with the JIT, commit {kc.get('commit') or res.get('commit')}), "
                   f"~{native * r:.0f} ns "
                   "interpreted." if native else ".")]
    off = [("Debian 12's 6.1, JIT on", "debian61", "jit"),
           ("Debian 12's 6.1, JIT off", "debian61", "interp"),
           ("compute-like 6.12, no JIT", "compute612", "interp")]
    if any(vm_ns(vm, f"{k}_offcpu_kept_{m}") for _, k, m in off):
        lines += ["", "The off-CPU program, in a guest of one CPU booted after (one round of 10 s "
                  "each, JIT on then off): a switch of no target, and a kept switch of "
                  "`offcpu_target` with its stacks and time (bench/offcpu_cost.sh's A and B). "
                  "Its interpreted/JIT ratio on 6.1 gives the estimate in the off-CPU table.", "",
                  "| kernel | its unwinder | a switch of no target | a kept target switch | "
                  "of which its kernel stack |", "|---|---|---|---|---|"]
        lines += [f"| {label} | {'frame pointers' if k == 'compute612' else 'ORC'} | "
                  f"{vm_ns(vm, f'{k}_offcpu_nontarget_{m}'):.0f} ns | "
                  f"{vm_ns(vm, f'{k}_offcpu_kept_{m}'):.0f} ns | "
                  + (f"{vm_ns(vm, f'{k}_offcpu_kstack_{m}'):.0f} ns |"
                     if vm_ns(vm, f"{k}_offcpu_kstack_{m}") else "|")
                  for label, k, m in off if vm_ns(vm, f"{k}_offcpu_kept_{m}")]
    return "\n".join(lines)


def soak():
    s = res["soak"]
    pct = lambda x: "n/a" if x is None else f"{100 * x:+.1f}%"
    h, st = s["health_soak"], s["health_storm"]
    rss, fds = s["rss_kib"], s["fds"]
    m = s.get("metrics", {})
    return "\n".join([
        f"Measured at commit {s['commit']} on {s['date']} by `bench/soak.sh` "
        "(`BENCH_ONLY=soak make bench`): `profd serve` of the whole system, scraped back to back "
        f"for {s['soak_seconds']} s ({s['scrapes']} scrapes, {s['scrapes_failed']} failed), while 10 "
        "binaries, each replaced by a fresh copy every round, run 20 short-lived children each; "
        f"then {s['storm_forks']} fork+execs of `/bin/true` in {s['storm_seconds']:.1f} s during "
        "one whole-system scrape. `/health` is timed every 100 ms by a separate client.", "",
        "| figure | measured | goal | |", "|---|---|---|---|",
        f"| RSS, last third of the soak against the middle third | {pct(s['rss_drift'])} "
        f"({min(rss) / 1024:.0f}–{max(rss) / 1024:.0f} MiB over the run) | ±10% | "
        f"{'met' if s['rss_drift'] is not None and abs(s['rss_drift']) <= 0.1 else '**missed**'} |",
        f"| open fds, the same | {pct(s['fds_drift'])} ({min(fds)}–{max(fds)}) | ±10% | "
        f"{'met' if s['fds_drift'] is not None and abs(s['fds_drift']) <= 0.1 else '**missed**'} |",
        f"| /health during the soak, p50 / p99 / max | {h['p50_ms']:.1f} / {h['p99_ms']:.1f} / "
        f"{h['max_ms']:.0f} ms ({h['n']} probes, {h['failed']} failed) | p99 ≤ 50 ms | "
        f"{'met' if h['p99_ms'] <= 50 and not h['failed'] else '**missed**'} |",
        f"| /health during the fork storm, p50 / p99 / max | {st['p50_ms']:.1f} / {st['p99_ms']:.1f} / "
        f"{st['max_ms']:.0f} ms ({st['n']} probes, {st['failed']} failed) | p99 ≤ 50 ms | "
        f"{'met' if st['p99_ms'] <= 50 and not st['failed'] else '**missed**'} |",
        f"| a {s.get('scrape_seconds_median', 0):.0f} s scrape answered in, median / max | "
        f"{s.get('scrape_seconds_median', 0):.1f} / {s.get('scrape_seconds_max', 0):.1f} s | | |",
        "", "Cache sizes at the end of the soak (`/metrics`): " + ", ".join(
            f"`{k}` {v:.0f}" for k, v in sorted(m.items())
            if any(w in k for w in ("cache", "tracked", "evicted", "maps_bytes", "unwind_table", "stack_copy_exec"))) + ".",
    ])


def compute():
    c = res["compute"]
    q, ch, im = c.get("quiet", {}), c.get("churn", {}), c.get("churn_image", {})
    met = lambda ok: "met" if ok else "**missed**"
    n = len([r for r in c["rounds"] if r["mode"] == "churn"])
    st = ch.get("stage_cpu_s_median", {})
    lines = [
        f"Measured at commit {c['commit']} on {c['date']} by `bench/compute_sim.sh` "
        "(`BENCH_ONLY=compute make bench`): `profd serve` as the unit starts it (no targets: the "
        "whole system), a fresh daemon per round, one warm-up scrape, then back-to-back 20 s "
        "scrapes at 19 Hz; quiet = postgres under `pgbench -S -c 2 -R 800`, churn = `pgbench -C -S "
        "-c 2 -R 100` (a backend forked per connection) plus a loop that execs `sh`, `ls` and "
        "`python3` every 0.2 s; churn, image = the same with `/usr/lib/debug` hidden, as on a "
        "compute image, which has no `-dbg` packages (this machine has libc6-dbg, which `make "
        "test` installs: its DWARF gives libc's frames lines and inlined callers, and costs the "
        f"daemon ~18 MiB); {n} rounds each, interleaved, medians. The storms fork (or "
        "fork+exec `/bin/true`) a few thousand times while a whole-system profile runs, against a "
        "quiet window as long.", "",
        "| figure | measured | goal | |", "|---|---|---|---|",
        f"| daemon CPU, quiet | {q.get('cpu_pct_median', 0):.3f}% of one CPU (rounds "
        f"{spread(q.get('cpu_pcts', []))}) | ≤ 0.05% | {met(q.get('cpu_pct_median', 1) <= 0.05)} |",
        f"| daemon CPU, churn ({ch.get('forks_per_s_median', 0):.0f} forks/s) | "
        f"{ch.get('cpu_pct_median', 0):.3f}% of one CPU (rounds {spread(ch.get('cpu_pcts', []))}) | "
        f"≤ 0.2% | {met(ch.get('cpu_pct_median', 1) <= 0.2)} |",
        f"| daemon CPU, churn, image | {im.get('cpu_pct_median', 0):.3f}% of one CPU (rounds "
        f"{spread(im.get('cpu_pcts', []))}) | ≤ 0.2% | {met(im.get('cpu_pct_median', 1) <= 0.2)} |",
        f"| daemon CPU per fork (no exec) | {c.get('us_per_fork', 0):.1f} µs | ≤ 20 µs | "
        f"{met(c.get('us_per_fork', 1e9) <= 20)} |",
        f"| daemon CPU per fork+exec | {c.get('us_per_exec', 0):.1f} µs | | |",
        f"| daemon CPU per sample, quiet / churn (all its CPU over the samples taken) | "
        f"{q.get('us_per_sample_median', 0):.0f} / {ch.get('us_per_sample_median', 0):.0f} µs | | |",
        f"| peak RSS, churn, image (max of the rounds) | {im.get('peak_rss_mib_max', 0):.1f} MiB | "
        f"≤ 32 MiB | {met(im.get('peak_rss_mib_max', 1e9) <= 32)} |",
        f"| peak RSS, churn, with libc6-dbg (max of the rounds) | {ch.get('peak_rss_mib_max', 0):.1f} "
        f"MiB | ≤ 32 MiB | {met(ch.get('peak_rss_mib_max', 1e9) <= 32)} |",
        f"| peak RSS, quiet | {q.get('peak_rss_mib_max', 0):.1f} MiB | | |",
        f"| build + encode of a 20 s profile, churn, warm | {fmt(ch.get('build_ms_warm_median'), '{:.1f}')} + "
        f"{fmt(ch.get('encode_ms_median'), '{:.1f}')} ms CPU | (the goal, ≤ 20 ms, is for a 60 s "
        "profile: see below the table) | |",
        "", "Where the churn's CPU went (`profd_stage_cpu_seconds_total`, over the measured "
        "scrapes, median round): " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in st.items()) +
        "; the rest of the daemon's CPU is the HTTP server, timers and the kernel's work on its "
        "behalf outside those stages.",
    ]
    return "\n".join(lines)


def kernel_pieces():
    k = res["kernel_pieces"]
    what = {"inline_target": "frame-pointer code", "nofp_target": "code without frame pointers "
            "(needs the stack copy)"}
    lines = [
        f"Measured at commit {k['commit']} on {k['date']} by `bench/kernel_pieces.sh` "
        "(`BENCH_ONLY=kernel_pieces make bench`): the whole system at 999 Hz, user and kernel "
        "stacks, two busy copies of the workload on the two CPUs; `profd record` with "
        "`PROFD_BENCH_CUT=N`, which ends every sample after piece N, then bpftrace's "
        "`profile:hz:999 { @[ustack, kstack, comm] = count(); }`, in a shuffled order in each round; "
        "`run_time_ns / run_cnt` (`kernel.bpf_stats_enabled`) over the middle of each run, "
        "medians of the rounds. A piece is the difference between two cuts, so noise can make "
        "a small one negative. Kernel 6.18 with the JIT.", "",
        "| piece | " + " | ".join(what.get(w["workload"], w["workload"]) for w in k["workloads"]) + " |",
        "|---|" + "---|" * len(k["workloads"]),
    ]
    names = [("filter", "invocation, session config, target filter"),
             ("state", "process state (`proc_state`, first-sample check)"),
             ("walk", "registers, kernel stack, frame-pointer walk"),
             ("copy", "user-stack copy (small, or the full copy for processes that need it)"),
             ("ring", "ring output (reserve or output, wakeup check)")]
    for key, label in names:
        lines.append(f"| {label} | " + " | ".join(f"{w['pieces_ns'][key]:.0f} ns"
                                                  for w in k["workloads"]) + " |")
    lines.append("| **whole program** | " + " | ".join(f"**{w['median_ns']['full']:.0f} ns**"
                                                      for w in k["workloads"]) + " |")
    lines.append("| bpftrace, same rounds | " + " | ".join(f"{w['median_ns']['bpftrace']:.0f} ns"
                                                          for w in k["workloads"]) + " |")
    lines.append("| profd / bpftrace | " + " | ".join(f"{w['ratio_to_bpftrace']:.2f}"
                                                     for w in k["workloads"]) + " |")
    fp = next((w for w in k["workloads"] if w["workload"] == "inline_target"), None)
    nofp = next((w for w in k["workloads"] if w["workload"] == "nofp_target"), None)
    lines.append("")
    goals = []
    if fp:
        ok = fp["median_ns"]["full"] <= 1000 and fp["ratio_to_bpftrace"] <= 0.5
        goals.append(f"frame-pointer code ≤ 1 µs and ≤ 0.5× bpftrace: "
                     f"{fp['median_ns']['full']:.0f} ns, {fp['ratio_to_bpftrace']:.2f}× — "
                     f"{'met' if ok else '**missed**'}")
    if nofp:
        ok = nofp["median_ns"]["full"] <= 2000
        goals.append(f"code that needs the copy ≤ 2 µs: {nofp['median_ns']['full']:.0f} ns — "
                     f"{'met' if ok else '**missed**'}")
    lines.append("Goals (issue 19): " + "; ".join(goals) + ".")
    return "\n".join(lines)


def offcpu():
    o = res["offcpu"]
    met = lambda ok: "met" if ok else "**missed**"
    rounds = lambda k, f="{:.0f}": ", ".join(f.format(x) for x in
                                             (o.get(k) if isinstance(o.get(k), list) else [o.get(k, 0)]))
    us = lambda k: f"{o.get(k, 0) / 1000:.2f} µs"
    lines = [
        f"Measured at commit {o['commit']} on {o['date']} by `bench/offcpu_cost.sh` and "
        "`bench/offcpu_tps.sh` (`BENCH_ONLY=offcpu make bench`), medians of interleaved rounds "
        "(the rounds in brackets), JIT on. Raw figures: `offcpu` in "
        "[bench/results.json](../bench/results.json).", "",
        "| figure | measured | goal (issue 24) | |", "|---|---|---|---|",
        f"| A: a switch of a thread that is no target | {o.get('offcpu_nontarget_ns', 0):.0f} ns "
        f"({rounds('offcpu_nontarget_ns_rounds')}) | ≤ 150 ns | "
        f"{met(o.get('offcpu_nontarget_ns', 1e9) <= 150)} |",
        f"| B: a kept target switch, stacks and time | {us('offcpu_kept_switch_ns')} "
        f"({rounds('offcpu_kept_switch_ns_rounds')} ns) | ≤ 1.5 µs | "
        f"{met(o.get('offcpu_kept_switch_ns', 1e9) <= 1500)} |",
        f"| C: a target switch at the default period ({100 * o.get('default_kept_share', 0):.1f}% "
        f"kept) | {us('offcpu_default_switch_ns')} ({rounds('offcpu_default_switch_ns_rounds')} ns) | | |",
        f"| D: wall-clock session, a target switch (blocked or preempted), default period | "
        f"{us('offcpu_wall_switch_ns')} ({rounds('offcpu_wall_switch_ns_rounds')} ns) | | |",
        f"| D: wall-clock session, a cpu-clock sample at 99 Hz | {us('offcpu_wall_sample_ns')} "
        f"({rounds('offcpu_wall_sample_ns_rounds')} ns) | | |",
    ]
    if "offcpu_bpftrace_switch_ns" in o:
        lines += [
            f"| E, the yardstick: bpftrace's `sched_switch` program taking the target's kernel and "
            f"user stacks at each switch-out, as bcc's offcputime does | "
            f"{us('offcpu_bpftrace_switch_ns')} ({rounds('offcpu_bpftrace_switch_ns_rounds')} ns) | | |",
            f"| B / E, round by round | {o.get('offcpu_kept_to_bpftrace', 0):.2f}× | | |",
        ]
    lines.append(offcpu_interpreted())
    names = {"tpcb": "pgbench TPC-B-like, -c 8 -j 2", "select": "pgbench -S -c 2"}
    for w in ("tpcb", "select"):
        for v, label in (("offcpu", "an off-CPU profile"), ("wall", "a wall-clock profile")):
            k = f"offcpu_tps_{w}_{v}_ratio_median"
            if k not in o:
                continue
            goal, ok = ("≥ 0.98×", met(o[k] >= 0.98)) if v == "offcpu" else ("", "")
            lines.append(f"| {names[w]}: TPS with {label} of postgres (default period) / "
                         f"without | {o[k]:.3f}× ({rounds(f'offcpu_tps_{w}_{v}_ratios', '{:.3f}')}; "
                         f"{o.get(f'offcpu_tps_{w}_none_median', 0):.0f} TPS without) | {goal} | {ok} |")
            k = f"offcpu_tps_{w}_{v}_daemon_cpu_pct_median"
            if k in o:
                lines.append(f"| {names[w]}, {label}: the daemon's CPU over the run, % of one CPU "
                             f"({100 * o.get(f'offcpu_tps_{w}_{v}_kept_share_median', 0):.1f}% of "
                             f"blocked switches kept) | {o[k]:.2f}% "
                             f"({rounds(f'offcpu_tps_{w}_{v}_daemon_cpu_pcts', '{:.2f}')}) | | |")
    return "\n".join(lines)


def offcpu_interpreted():
    """B, and A, with the JIT off: bench/kernel_cost_vm.sh's guests, as for the CPU sampler."""
    vm = res.get("kernel_cost_vm") or {}
    o = res.get("offcpu") or {}
    r = vm.get("offcpu_kept_interpreted_over_jit")
    if not r:
        return ("| B interpreted (no JIT) | not measured: the last `kernel_cost_vm` run had no "
                "off-CPU figures | ≤ 3 µs | |")
    est = o.get("offcpu_kept_switch_ns", 0) * r
    emu = "virtualized (KVM)" if vm_accel(vm) == "kvm" else "emulated (TCG)"
    return (f"| B interpreted (no JIT) | ~{est / 1000:.1f} µs: B × {r:.2f}, the interpreted/JIT "
            f"ratio of a kept switch on Debian's 6.1 with its JIT switched off "
            f"(`kernel_cost_vm` at commit {vm.get('commit')}, {emu} CPU: "
            f"{vm_ns(vm, 'debian61_offcpu_kept_interp'):.0f} against "
            f"{vm_ns(vm, 'debian61_offcpu_kept_jit'):.0f} ns; compute-6.12, no JIT: "
            f"{vm_ns(vm, 'compute612_offcpu_kept_interp'):.0f} ns; a switch of no target "
            f"interpreted {vm_ns(vm, 'debian61_offcpu_nontarget_interp'):.0f} against "
            f"{vm_ns(vm, 'debian61_offcpu_nontarget_jit'):.0f} ns) | ≤ 3 µs | "
            f"{'met' if est <= 3000 else '**missed**'} |")


def put(doc, name, title, text):
    begin, end = f"<!-- bench:{name} begin -->", f"<!-- bench:{name} end -->"
    block = f"{begin}\n{text}\n{end}"
    if begin in doc:
        return re.sub(re.escape(begin) + r".*?" + re.escape(end), lambda m: block, doc, flags=re.S)
    if name == "summary":
        head, _, rest = doc.partition("\n## ")
        return f"{head}\n## {title}\n\n{block}\n\n## {rest}"
    return f"{doc.rstrip()}\n\n## {title}\n\n{block}\n"


doc = open("docs/benchmarks.md").read()
if summary_ran:
    doc = put(doc, "summary", "Summary (`make bench`)", summary())
if "soak" in only:
    doc = put(doc, "soak", "Soak: memory, fds and /health under process churn", soak())
# The interpreted estimate multiplies kernel_cost's native figure.
if "kernel_cost_vm" in only or ("kernel_cost" in only and res.get("kernel_cost_vm")):
    doc = put(doc, "interpreted", "Kernel time per sample interpreted (no JIT)", interpreted())
if "stacks" in only:
    doc = put(doc, "stacks", "Complete stacks vs perf --call-graph dwarf", stacks())
if "kernel_pieces" in only:
    doc = put(doc, "kernel_pieces", "Kernel time per sample, piece by piece", kernel_pieces())
if "compute" in only:
    doc = put(doc, "compute", "A compute VM simulated: the always-on daemon under churn", compute())
# The off-CPU table holds kernel_cost_vm's interpreted figure as well.
if "offcpu" in only or ("kernel_cost_vm" in only and res.get("offcpu")):
    doc = put(doc, "offcpu", "Off-CPU and wall-clock profiles: what they cost", offcpu())
open("docs/benchmarks.md", "w").write(doc)
print("updated docs/benchmarks.md", file=sys.stderr)
