#!/bin/bash
# The log (issue 22): outside journald every line has its time and level;
# under journald (JOURNAL_STREAM names the very file stderr is) a "<N>"
# priority and no time; --log-level filters, --log-format=logfmt|json
# (flags and config keys) give lines a collector parses; and a hostile
# string (quote, newline, escape sequence, a byte that is not UTF-8) stays
# on its one line, and valid JSON.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

# A path nobody can open, logged with the error: any local user can make
# such names appear in the log (process names, paths of mapped files).
BAD=$(printf '%s/x"\n\033[31m\351y' "$WORK")

# Text: "TIME LEVEL profd: MESSAGE".
"$PROFD" record --seconds 1 -o "$WORK/cpu.pb.gz" 2>"$WORK/record.err" || fail "profd record failed"
python3 - "$WORK/record.err" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert len(lines) >= 2, lines
for l in lines:
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (error|warn|info|debug) profd: \S", l), l
PY
pass "profd record: every line has its time and level"

# libevent's own messages go through the log too (it would print "[warn]
# ..." bare on stderr): EVENT_SHOW_METHOD makes it say which backend it
# uses, by the path any of its warnings takes.
for fmt in text json; do
	EVENT_SHOW_METHOD=1 "$PROFD" record --seconds 1 --log-format $fmt -o "$WORK/cpu.pb.gz" \
		2>"$WORK/event.$fmt" || fail "profd record with EVENT_SHOW_METHOD failed"
done
python3 - "$WORK/event.text" "$WORK/event.json" <<'PY'
import json, re, sys
text = open(sys.argv[1], encoding="utf-8").read().splitlines()
for l in text:
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (error|warn|info|debug) profd: \S", l), l
assert any(re.search(r" info profd: libevent: libevent using: \w+$", l) for l in text), text
js = [json.loads(l) for l in open(sys.argv[2], "rb").read().splitlines()]
assert any(j["msg"].startswith("libevent: libevent using:") and j["level"] == "info" for j in js), js
PY
pass "libevent's messages: a time and level in text, a JSON line in json"

# The hostile path, in each format: one line.
for fmt in text logfmt json; do
	"$PROFD" serve --log-format $fmt --config "$BAD" 2>"$WORK/bad.all.$fmt" && fail "serve with no config file started"
	# serve's first line says its version (t_version.sh): the rest is the error.
	grep -av 'version [^ ]* (commit ' "$WORK/bad.all.$fmt" >"$WORK/bad.$fmt" || true
	[ "$(wc -l <"$WORK/bad.$fmt")" = 1 ] || { cat -A "$WORK/bad.$fmt"; fail "$fmt: the hostile path is not one line"; }
done
python3 - "$WORK" "$BAD" <<'PY'
import json, re, sys
work, bad = sys.argv[1], sys.argv[2].encode("utf-8", "surrogateescape")
# The byte that is not UTF-8 becomes U+FFFD; everything else is kept (json,
# logfmt) or made printable (text).
want = bad.replace(b"\xe9", "\ufffd".encode()).decode()
j = json.loads(open(f"{work}/bad.json", "rb").read())
assert set(j) == {"ts", "level", "msg"} and j["level"] == "error", j
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", j["ts"]), j
assert j["msg"] == f"cannot open {want}: No such file or directory", j["msg"]
lf = open(f"{work}/bad.logfmt", encoding="utf-8").read().rstrip("\n")
m = re.fullmatch(r'ts=(\S+) level=error msg="((?:[^"\\]|\\.)*)"', lf)
assert m, lf
msg = json.loads('"' + m.group(2) + '"')   # logfmt's escapes are JSON's here
assert msg == j["msg"], (msg, j["msg"])
text = open(f"{work}/bad.text", encoding="utf-8").read()
assert "\x1b" not in text and text.count("\n") == 1, repr(text)
assert 'x" ?[31m\ufffdy' in text, repr(text)
PY
pass "a path with a quote, a newline, an escape sequence and a byte that is not UTF-8: one line in text, logfmt and json; json and logfmt keep it exactly"

# serve with the config keys: json lines only, and warnings and errors only.
echo '{"log_format": "json", "log_level": "warn"}' >"$WORK/conf.json"
serve "$(free_port 17580)" --config "$WORK/conf.json"
call h GET /health
call nf GET '/no/such/route'
kill $SERVE_PID
wait $SERVE_PID || true
python3 - "$WORK/serve.err" <<'PY'
import json, sys
for l in open(sys.argv[1], "rb").read().splitlines():
    j = json.loads(l)
    assert j["level"] in ("warn", "error"), j
PY
grep -q '"GET /health' "$WORK/serve.err" && fail "an info line at --log-level warn"
# The flags over the file: info lines come back, and logfmt.
serve "$(free_port 17580)" --config "$WORK/conf.json" --log-level debug --log-format logfmt
call h GET /health
kill $SERVE_PID
wait $SERVE_PID || true
grep -q '^ts=[^ ]* level=info msg="GET /health 200' "$WORK/serve.err" ||
	{ cat "$WORK/serve.err"; fail "no logfmt info line for GET /health"; }
pass "config keys log_level/log_format; --log-level and --log-format over them"

# Under journald: stderr is the stream JOURNAL_STREAM names.
touch "$WORK/journal"
export JOURNAL_STREAM=$(stat -c '%d:%i' "$WORK/journal")
"$PROFD" record --seconds 1 -o "$WORK/cpu.pb.gz" 2>>"$WORK/journal" || fail "profd record failed"
grep -qv '^<[3467]>' "$WORK/journal" && { cat "$WORK/journal"; fail "a line without a priority under journald"; }
grep -q '^<6>profiling ' "$WORK/journal" || { cat "$WORK/journal"; fail "no <6> info line"; }
# A child that inherited JOURNAL_STREAM but writes elsewhere is not under it.
"$PROFD" record --seconds 1 -o "$WORK/cpu.pb.gz" 2>"$WORK/elsewhere" || fail "profd record failed"
grep -q '^<' "$WORK/elsewhere" && fail "journald's format on a stderr that is not its stream"
grep -q 'Z info profd: profiling ' "$WORK/elsewhere" || fail "no time and level outside journald"
unset JOURNAL_STREAM
pass "under journald: <N> priorities and no time; with JOURNAL_STREAM but another stderr: time and level"
