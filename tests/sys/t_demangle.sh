#!/bin/bash
# C++ and Rust names come out demangled in pprof, folded and SVG alike, with
# the mangled name kept as pprof's Function.system_name (issue 22): a C++
# program with DWARF, the same with its symbol table only (names from
# .symtab, as in Debian's stripped cc1plus, where 556 of 1,412 functions
# stayed mangled), and a Rust program built with each of rustc's manglings.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

for w in cxx_target rust_target rust_target_v0; do
	[ -x "$BUILD/tests/$w" ] || fail "$BUILD/tests/$w is not built (make test builds it)"
done
# The symbol-table-only copy: no DWARF, so names come from .symtab.
strip --strip-debug -o "$WORK/cxx_symtab" "$BUILD/tests/cxx_target"
! readelf -S "$WORK/cxx_symtab" | grep -q '\.debug_info' || fail "strip --strip-debug left DWARF"
pids=()
for exe in "$BUILD/tests/cxx_target" "$WORK/cxx_symtab" "$BUILD/tests/rust_target" \
	"$BUILD/tests/rust_target_v0"; do
	"$exe" 600 >/dev/null &
	PIDS_TO_KILL+=($!)
	pids+=(--pid $!)
done
serve "$(free_port 18400)" "${pids[@]}"

# process_name, function, and the system name's pattern (a regex).
cat >"$WORK/want.txt" <<'EOF'
cxx_target	ns::Class::method(int)	^_ZN2ns5Class6methodEi$
cxx_target	ns::Holder<int>::spin(unsigned long) const	^_ZNK2ns6HolderIiE4spinEm$
cxx_symtab	ns::Class::method(int)	^_ZN2ns5Class6methodEi$
cxx_symtab	ns::Holder<int>::spin(unsigned long) const	^_ZNK2ns6HolderIiE4spinEm$
rust_target	rust_target::inner::hot_loop	^_ZN11rust_target5inner8hot_loop17h[0-9a-f]{16}E$
rust_target	rust_target::Counter::step	^_ZN11rust_target7Counter4step17h[0-9a-f]{16}E$
rust_target_v0	rust_target::inner::hot_loop	^_RNvNtCs[0-9A-Za-z]+_11rust_target5inner8hot_loop$
rust_target_v0	<rust_target::Counter>::step	^_RNvMCs[0-9A-Za-z]+_11rust_targetNtB[0-9A-Za-z]*_7Counter4step$
EOF

# Each format: profiles of 3 s until every function has been seen in it,
# at most 10 (under load a process may go unsampled in one).
take() { # FORMAT FILE
	local q="seconds=3&frequency=499"
	[ "$1" = pprof ] || q="$q&format=$1"
	curl -sf -m 120 -o "$2" "$BASE/debug/pprof/profile?$q" || fail "GET format=$1 failed"
}

# --- pprof: names demangled, the mangled name in system_name
for try in $(seq 10); do
	take pprof "$WORK/p$try.pb.gz"
	if python3 - "$WORK/want.txt" "$WORK"/p*.pb.gz >"$WORK/pprof.out" <<'PY'; then break; fi
import re, sys, pprof_raw
want = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
seen = {}  # (process_name, function) -> system name
mangled = set()
for path in sys.argv[2:]:
    p = pprof_raw.load(path)
    for s in p.samples:
        proc = s["labels"].get("process_name")
        for f, sysname in p.system_frames(s):
            seen[(proc, f)] = sysname
            if re.match(r"^_[ZR]", f):
                mangled.add(f)
bad = []
for proc, fn, sysre in want:
    if (proc, fn) not in seen:
        bad.append(f"{proc}: no {fn}")
    elif not re.match(sysre, seen[(proc, fn)]):
        bad.append(f"{proc}: {fn} has system_name {seen[(proc, fn)]}, want {sysre}")
ours = {f for f in mangled if "rust_target" in f or "2ns" in f}
if ours:
    bad.append(f"still mangled: {sorted(ours)}")
if bad:
    print("\n".join(bad))
    sys.exit(1)
print(f"{len(want)} functions demangled, system names mangled")
PY
	[ "$try" = 10 ] && fail "pprof: $(cat "$WORK/pprof.out")"
done
pass "pprof: $(cat "$WORK/pprof.out") (go tool pprof -raw, $try profile(s))"

# --- folded and SVG: the same names, none mangled
check_text() { # FORMAT FILES...
	local fmt=$1
	shift
	python3 - "$fmt" "$WORK/want.txt" "$@" <<'PY'
import html, re, sys
fmt, want = sys.argv[1], [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
text = ""
for path in sys.argv[3:]:
    t = open(path).read()
    text += html.unescape(t) if fmt == "svg" else t
if fmt == "folded":
    # Each function in a stack of its own process (the root frame).
    lines = text.splitlines()
    bad = [f"{proc}: no stack {proc};...;{fn}" for proc, fn, _ in want
           if not any(l.startswith(proc + ";") and fn in l for l in lines)]
else:
    bad = [f"no {fn}" for _, fn, _ in want if fn not in text]
left = re.findall(r"_Z[NK]?\d*(?:2ns|11rust_target)\w*|_RNv\w*rust_target\w*", text)
if left:
    bad.append(f"still mangled: {sorted(set(left))[:5]}")
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
}
for fmt in folded svg; do
	for try in $(seq 10); do
		take $fmt "$WORK/$fmt$try"
		if check_text $fmt "$WORK"/$fmt[0-9]* >"$WORK/$fmt.out"; then break; fi
		[ "$try" = 10 ] && fail "$fmt: $(cat "$WORK/$fmt.out")"
	done
	pass "$fmt: every function demangled, none left mangled ($try profile(s))"
done
xmllint --noout "$WORK"/svg[0-9]* || fail "an SVG with C++ names is not well-formed XML"
pass "the SVGs with <, >, & in names are well-formed"
