#!/usr/bin/env python3
"""Helpers of bench/stacks.sh: complete stacks and caller edges, profd next to
perf --call-graph dwarf.

  stacks.py perf-fold (--pid PID,... | --comm NAME)  < `perf script -F comm,pid,ip,sym,dso`
      folded stacks, `comm;root;...;leaf COUNT`, user frames then kernel
      frames (these with a `_[k]` suffix), from perf script's output
  stacks.py copied PROFILE.pb.gz
      the bytes of user stack copied per sample, from profd's pprof comment
  stacks.py summarize DIR
      the figures, as JSON, from DIR/runs.jsonl and the folded files it names
"""
import collections
import json
import re
import statistics
import subprocess
import sys

# A stack is complete when its outermost user frame is where a thread starts.
ROOTS = {"_start", "__libc_start_call_main", "__libc_start_main_impl", "__libc_start_main",
         "start_thread", "clone3", "__clone3", "clone", "__clone"}
# Where a kernel stack starts: syscall entry, interrupts and exceptions.
KERNEL_ENTRY = re.compile(r"^(entry_|asm_|ret_from_fork|xen_|exc_)")
# Frames perf cannot name: profd names a function no symbol names after its
# FDE ("postgres+0x3ee3c0"), an unmapped address by its hex value.  And PLT
# stubs, which perf calls "PyIter_Next@plt" and profd "_init" (the symbol
# before .plt): the same frame, named differently.
UNNAMED = re.compile(r"^(\[unknown\]|0x[0-9a-f]+|\S+\+0x[0-9a-f]+|\S+@plt|_init)$")
ALIAS = {}


def norm(name):
    # glibc's hidden aliases: perf names __qsort_r's address __GI___qsort_r.
    name = name[5:] if name.startswith("__GI_") else name
    # Names of one address (memcpy and memmove's variants, setsid and
    # __setsid): the two tools may pick different ones.
    return ALIAS.get(name, name)


def debug_file(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]{2})([0-9a-f]+)", out)
    return f"/usr/lib/debug/.build-id/{m.group(1)}/{m.group(2)}.debug" if m else None


def load_aliases(exes):
    """Function names that share an address in one of these executables or
    the libraries they load, or in their debug files: name -> one of them."""
    objs = []
    for exe in exes:
        objs.append(exe)
        ldd = subprocess.run(["ldd", exe], capture_output=True, text=True).stdout
        objs += re.findall(r"=> (/\S+)", ldd)
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for o in dict.fromkeys(objs):
        for f in (o, debug_file(o)):
            if not f:
                continue
            for dyn in ([], ["-D"]):
                out = subprocess.run(["nm", "--defined-only"] + dyn + [f], capture_output=True,
                                     text=True).stdout
                at = {}
                for line in out.splitlines():
                    parts = line.split()
                    if len(parts) == 3 and parts[1] in "TtWw":
                        name = parts[2].split("@")[0]
                        if name.startswith("__GI_"):
                            name = name[5:]
                        if parts[0] in at:
                            a, b = find(at[parts[0]]), find(name)
                            if a != b:
                                parent[max(a, b)] = min(a, b)
                        else:
                            at[parts[0]] = name
    ALIAS.clear()
    for name in parent:
        root = find(name)
        if root != name:
            ALIAS[name] = root


def perf_fold(args):
    want_pids = want_comm = None
    if args[0] == "--pid":
        want_pids = set(args[1].split(","))
    else:
        want_comm = args[1]
    counts = collections.Counter()

    def flush(comm, pid, frames):
        if not comm or (want_pids and pid not in want_pids) or (want_comm and comm != want_comm):
            return
        user = [f[0] for f in frames if not f[1]]
        kernel = [f[0] + "_[k]" for f in frames if f[1]]
        # perf lists leaf first; folded is root first, the kernel after the user part.
        counts[";".join([comm] + user[::-1] + kernel[::-1])] += 1

    comm = pid = None
    frames = []
    for line in sys.stdin:
        if not line.strip():
            flush(comm, pid, frames)
            comm, frames = None, []
        elif line[0] in " \t":
            # "\t    addr sym (dso)"; sym may hold spaces, the dso is last.
            m = re.match(r"^\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$", line)
            if m:
                frames.append((m.group(2) or "[unknown]", "kernel.kallsyms" in m.group(3)
                               or m.group(3).startswith("[kernel")))
        else:
            flush(comm, pid, frames)
            # "comm pid" (comm may hold spaces; the pid is its last word)
            parts = line.rstrip().rsplit(None, 1)
            comm, pid, frames = (parts[0], parts[1], []) if len(parts) == 2 else (None, None, [])
    flush(comm, pid, frames)
    for k, v in counts.items():
        print(f"{k} {v}")


def copied(path):
    import pprof_raw
    for c in pprof_raw.load(path).comments:
        m = re.search(r"user stack copied: (\d+) bytes", c)
        if m:
            print(m.group(1))
            return
    print("null")


def kallsyms():
    names = set()
    try:
        for line in open("/proc/kallsyms"):
            parts = line.split()
            if len(parts) >= 3:
                names.add(parts[2])
    except OSError:
        pass
    return names


def read_folded(path, ksyms, profd, comm=None):
    """[(user frames root first, kernel frames, count)]; comm: that process only."""
    out = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, n = line.rpartition(" ")
        parts = stack.split(";")
        if comm and parts[0] != comm:
            continue
        frames = parts[1:]
        if profd:
            # profd's folded lines have no kernel marker: the kernel part is
            # the suffix starting at an entry symbol, all of it in kallsyms.
            cut = len(frames)
            for i, f in enumerate(frames):
                if KERNEL_ENTRY.match(f) and f in ksyms and all(g in ksyms for g in frames[i:]):
                    cut = i
                    break
            user, kern = frames[:cut], frames[cut:]
        else:
            user = [f for f in frames if not f.endswith("_[k]")]
            kern = [f for f in frames if f.endswith("_[k]")]
        out.append(([norm(f) for f in user], kern, int(n)))
    return out


def edges(user):
    return {(a, b) for a, b in zip(user, user[1:]) if not UNNAMED.match(a) and not UNNAMED.match(b)}


def complete(stacks):
    total = sum(n for _, _, n in stacks)
    ok = sum(n for u, _, n in stacks if u and u[0] in ROOTS)
    return total, (ok / total if total else None)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(d):
    runs = [json.loads(l) for l in open(f"{d}/runs.jsonl") if l.strip()]
    ksyms = kallsyms()
    try:
        load_aliases([l.strip() for l in open(f"{d}/objects.txt") if l.strip()])
    except FileNotFoundError:
        pass
    res = {}
    for w in dict.fromkeys(r["workload"] for r in runs):
        wr = [r for r in runs if r["workload"] == w]
        # --exe takes every process of the executable on the machine: compare
        # the workload's own (by its name; perf took it by pid or name).
        comm = next((r["comm"] for r in wr if r.get("comm")), None)
        # Every caller edge perf DWARF records in any of this workload's runs.
        perf_edges = set()
        perf_runs = [r for r in wr if r["variant"].startswith("perf") and r.get("folded")]
        for r in perf_runs:
            r["_stacks"] = read_folded(f"{d}/{r['folded']}", ksyms, False)
            r["_edges"] = collections.Counter()
            for u, _, n in r["_stacks"]:
                for e in edges(u):
                    r["_edges"][e] += n
            perf_edges |= set(r["_edges"])
        out = {}
        for v in dict.fromkeys(r["variant"] for r in wr):
            rs = [r for r in wr if r["variant"] == v]
            per = []
            wrong_edges = collections.Counter()
            for r in rs:
                x = {"round": r["round"], "seconds": r.get("seconds")}
                if r.get("folded"):
                    if "_stacks" not in r:
                        r["_stacks"] = read_folded(f"{d}/{r['folded']}", ksyms, v.startswith("profd"),
                                                   comm if v.startswith("profd") else None)
                    st = r["_stacks"]
                    x["samples"], x["complete"] = complete(st)
                    if v == "profd":
                        bad = comparable = 0
                        for u, _, n in st:
                            e = edges(u)
                            comparable += n if e else 0
                            miss = e - perf_edges
                            if miss:
                                bad += n
                                for m in miss:
                                    wrong_edges[m] += n
                        x["wrong_edge"] = bad / x["samples"] if x["samples"] else None
                        x["with_edges"] = comparable / x["samples"] if x["samples"] else None
                    elif v.startswith("perf") and len(perf_runs) > 1:
                        # The same measure for perf against perf's other runs:
                        # how often a right edge is missing by chance alone.
                        others = set()
                        for o in perf_runs:
                            if o is not r:
                                others |= set(o["_edges"])
                        bad = sum(n for u, _, n in st if edges(u) - others)
                        x["wrong_edge"] = bad / x["samples"] if x["samples"] else None
                for k in ("cpu_ns", "wall_ns", "total_cpu_s", "wall_s", "bpf_ns", "bpf_cnt",
                          "copied", "stack_size", "record_cpu_s", "script_cpu_s", "startup_s",
                          "setup_after_sampling_s", "error"):
                    if k in r:
                        x[k] = r[k]
                if r.get("cpu_ns") is not None and r.get("wall_ns"):
                    x["daemon_cpu_pct"] = 100.0 * r["cpu_ns"] / r["wall_ns"]
                if r.get("total_cpu_s") is not None and r.get("seconds"):
                    x["daemon_cpu_total_pct"] = 100.0 * r["total_cpu_s"] / r["seconds"]
                if r.get("record_cpu_s") is not None and r.get("seconds"):
                    x["record_cpu_pct"] = 100.0 * r["record_cpu_s"] / r["seconds"]
                if r.get("bpf_cnt"):
                    x["bpf_ns_per_sample"] = r["bpf_ns"] / r["bpf_cnt"]
                per.append(x)
            agg = {"rounds": per, "errors": sum(1 for x in per if x.get("error"))}
            for k in ("samples", "complete", "wrong_edge", "with_edges", "daemon_cpu_pct",
                      "daemon_cpu_total_pct", "bpf_ns_per_sample", "copied", "record_cpu_pct",
                      "script_cpu_s", "startup_s"):
                vals = [x.get(k) for x in per if x.get(k) is not None]
                if vals:
                    agg[k + "_median"] = med(vals)
                    agg[k + "_range"] = [min(vals), max(vals)]
            if wrong_edges:
                agg["wrong_edges_top"] = [[f"{a} -> {b}", n] for (a, b), n in wrong_edges.most_common(8)]
            out[v] = agg
        out["perf_edges"] = len(perf_edges)
        res[w] = out
    return res


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "perf-fold":
        perf_fold(args)
    elif cmd == "copied":
        copied(args[0])
    elif cmd == "summarize":
        json.dump(summarize(args[0]), sys.stdout, indent=1)
        print()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
