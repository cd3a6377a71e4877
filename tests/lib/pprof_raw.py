"""Read a pprof profile with `go tool pprof -raw` (a real client nobody here
wrote) and give its samples, locations and mappings as Python objects."""
import os
import re
import subprocess
import sys

# A thread's outermost frames: a stack whose last frame is one of them is
# complete (tests/sys/t_stacks.sh, t_vm_kernels.sh).  glibc's
# __libc_start_call_main keeps no frame pointer, so a frame-pointer walk
# ends there, under main; CFI carries on to _start.
THREAD_ROOTS = frozenset({"_start", "__libc_start_call_main", "start_thread", "clone3", "__clone3"})


def _env():
    env = dict(os.environ)
    env.setdefault("HOME", "/root")
    env.setdefault("GOCACHE", "/tmp/profd-gocache")
    env["PPROF_TMPDIR"] = env.get("PPROF_TMPDIR", "/tmp")
    # No symbolization service: the profile must carry its own symbols.
    env["PPROF_BINARY_PATH"] = "/nonexistent"
    return env


def _time_ns(text):
    """Go's time.Time as -raw prints it ("2026-11-26 14:24:59.484972469 +0000 UTC")
    in nanoseconds since the epoch."""
    import datetime
    m = re.match(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.(\d+))? ([+-])(\d\d)(\d\d)", text)
    if not m:
        return None
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")
    off = (int(m.group(4)) * 60 + int(m.group(5))) * 60 * (1 if m.group(3) == "+" else -1)
    secs = int(t.replace(tzinfo=datetime.timezone.utc).timestamp()) - off
    return secs * 10**9 + int((m.group(2) or "0").ljust(9, "0")[:9])


def raw_text(source):
    out = subprocess.run(["go", "tool", "pprof", "-raw", "-symbolize=none", source],
                         capture_output=True, text=True, env=_env(), timeout=120)
    if out.returncode != 0:
        sys.exit("go tool pprof -raw failed: " + out.stderr.strip())
    return out.stdout


class Profile:
    def __init__(self, text):
        self.comments, self.samples = [], []
        self.locations, self.mappings = {}, {}
        self.sample_types, self.period = [], None
        self.time_ns, self.duration_ns = None, None
        section, cur_loc = None, None
        for line in text.splitlines():
            if line.startswith("Comment: "):
                self.comments.append(line[9:])
            elif line.startswith("Period: "):
                self.period = int(line.split()[1])
            elif line.startswith("Time: "):
                self.time_ns = _time_ns(line[6:])
            elif line.startswith("Duration: "):
                # Go prints it as "%.4v": "4.19" for 4.19s; longer ones
                # (a minute and more) are cut past use.
                m = re.match(r"^(\d+\.\d+)s?$", line[10:])
                self.duration_ns = int(float(m.group(1)) * 1e9) if m else None
            elif line == "Samples:":
                section = "header"
            elif section == "header":
                self.sample_types = line.split()
                section = "samples"
            elif line == "Locations":
                section = "locations"
            elif line == "Mappings":
                section = "mappings"
            elif section == "samples":
                m = re.match(r"^\s+([-\d\s]+):\s*([\d\s]*)$", line)
                if m:
                    self.samples.append({"values": [int(v) for v in m.group(1).split()],
                                         "locs": [int(v) for v in m.group(2).split()],
                                         "labels": {}})
                elif self.samples:
                    for k, v in re.findall(r"(\w+):\[([^\]]*)\]", line):
                        self.samples[-1]["labels"][k] = v
            elif section == "locations":
                m = re.match(r"^\s*(\d+): (0x[0-9a-f]+) (?:M=(\d+) )?(.*)$", line)
                if m:
                    # system: each line's function's system_name (the
                    # mangled name), or None where it is the name.
                    cur_loc = {"addr": int(m.group(2), 16),
                               "mapping": int(m.group(3) or 0), "lines": [], "system": []}
                    self.locations[int(m.group(1))] = cur_loc
                    rest = m.group(4)
                else:
                    rest = line.strip()
                rest = rest.strip()
                if rest and rest != "??":
                    lm = re.match(r"^(.*) (\S*):(\d+) s=\d+(?:\((.*)\))?$", rest)
                    if lm:
                        cur_loc["lines"].append((lm.group(1), lm.group(2), int(lm.group(3))))
                        cur_loc["system"].append(lm.group(4))
            elif section == "mappings":
                m = re.match(r"^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (\S*) ?(\S*) ?(.*)$",
                             line)
                if m:
                    self.mappings[int(m.group(1))] = {
                        "start": int(m.group(2), 16), "limit": int(m.group(3), 16),
                        "offset": int(m.group(4), 16), "file": m.group(5),
                        "build_id": m.group(6) if not m.group(6).startswith("[") else "",
                        "bits": (m.group(6) + m.group(7)) if m.group(6).startswith("[")
                        else m.group(7)}

    def frames(self, sample):
        """Function names of a sample, leaf first, inlined frames expanded."""
        names = []
        for lid in sample["locs"]:
            loc = self.locations[lid]
            if loc["lines"]:
                names.extend(l[0] for l in loc["lines"])
            else:
                names.append(None)
        return names

    def system_frames(self, sample):
        """(name, system_name) of a sample's functions, leaf first, inlined
        frames expanded; system_name is the name where the profile has none."""
        out = []
        for lid in sample["locs"]:
            loc = self.locations[lid]
            for l, sysname in zip(loc["lines"], loc["system"]):
                out.append((l[0], sysname or l[0]))
        return out

    def total(self, idx=0):
        return sum(s["values"][idx] for s in self.samples)


def load(source):
    return Profile(raw_text(source))
